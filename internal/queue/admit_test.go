package queue

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/jobspec"
)

// Users the admission tests submit as.
var (
	alice  = User{UID: 1001, Name: "alice", Groups: []string{"alice", "users"}}
	bob    = User{UID: 1002, Name: "bob", Groups: []string{"bob", "wheel"}}
	carol  = User{UID: 1003, Name: "carol", Groups: []string{"carol", "users"}}
	owner  = User{UID: 500, Name: "flux", Groups: []string{"flux"}, Owner: true}
	noname = User{UID: 4242}
)

// admitTables is the named configuration the admission tests run against.
func admitTables() Tables {
	return Tables{
		Policy: Policy{
			Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Queue: str("batch")}}},
			Limits:  Limits{Duration: str("1d")},
		},
		Queues: map[string]Config{
			"batch": {Requires: []string{"batch"}, Policy: Policy{
				Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("30m")}}},
				Limits:  Limits{Duration: str("1h"), JobSize: JobSize{Max: maxSize(nil, num(4), nil)}},
			}},
			"debug": {Requires: []string{"debug"}, Policy: Policy{
				Limits: Limits{Duration: str("30m"), JobSize: JobSize{Max: maxSize(num(1), num(1), num(0))}},
				Access: Access{AllowUser: list("alice"), AllowGroup: list("wheel")},
			}},
			"gpu": {Policy: Policy{
				Limits: Limits{JobSize: JobSize{
					Max: maxSize(num(1), nil, num(8)),
					Min: maxSize(num(2), num(4), num(1)),
				}},
			}},
			"tight": {Policy: Policy{
				Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("2h")}}},
				Limits:  Limits{Duration: str("1h")},
			}},
			"long":     {Policy: Policy{Limits: Limits{Duration: str("0")}}},
			"expedite": {Parent: "batch", Requires: []string{"fast"}},
		},
	}
}

// anonTables is an instance without [queues], with a global policy.
func anonTables() Tables {
	return Tables{Policy: Policy{
		Limits: Limits{Duration: str("1h"), JobSize: JobSize{
			Max: maxSize(nil, num(2), num(0)),
			Min: maxSize(num(2), nil, nil),
		}},
	}}
}

// job builds the jobspec `flux submit` builds from the options.
func job(t testing.TB, o jobspec.Options) *jobspec.Jobspec {
	t.Helper()
	if o.Command == nil {
		o.Command = []string{"true"}
	}
	js, err := jobspec.FromOptions(o)
	if err != nil {
		t.Fatalf("FromOptions(%+v): %v", o, err)
	}
	return js
}

func disabled(reason string) State {
	st := Initial(true)
	st.Enable(false, reason)
	return st
}

func TestAdmit(t *testing.T) {
	named := mustCompile(t, admitTables())
	noDefault := admitTables()
	noDefault.Policy.Jobspec.Defaults.System.Queue = nil
	namedNoDefault := mustCompile(t, noDefault)
	anon := mustCompile(t, anonTables())
	anonAccess := mustCompile(t, Tables{Policy: Policy{Access: Access{AllowUser: list("alice")}}})
	plain := Anonymous()

	type want struct {
		err         string // "" when admitted
		queue       string
		duration    float64
		constraints string // "" when absent
	}
	tests := []struct {
		name   string
		set    *Set
		states map[string]State
		user   User
		opts   jobspec.Options
		want   want
	}{
		// Assignment to a queue.
		{
			// RFC 33: without a queue in the jobspec, the default queue is
			// assigned and written into the jobspec.
			name: "default queue assigned",
			set:  named, user: carol,
			opts: jobspec.Options{},
			want: want{queue: "batch", duration: 1800, constraints: `{"properties":["batch"]}`},
		},
		{
			// RFC 33: a job naming an unknown queue is rejected.
			name: "unknown queue",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "nosuch"},
			want: want{err: "Invalid queue 'nosuch' specified"},
		},
		{
			// RFC 33: without [queues] no name is valid.
			name: "named queue on an anonymous instance",
			set:  plain, user: carol,
			opts: jobspec.Options{Queue: "batch"},
			want: want{err: "Invalid queue 'batch' specified"},
		},
		{
			// docs/cli.md: a rejection is one line; the name is escaped.
			name: "unknown queue with a control character",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "no\nsuch\x01"},
			want: want{err: `Invalid queue 'no\nsuch\x01' specified`},
		},
		{
			// Flux's defaults frobnicator: named queues, no default, none given.
			name: "no queue specified",
			set:  namedNoDefault, user: carol,
			opts: jobspec.Options{},
			want: want{err: "no queue specified"},
		},
		{
			name: "named queue without a default",
			set:  namedNoDefault, user: carol,
			opts: jobspec.Options{Queue: "long"},
			want: want{queue: "long"},
		},
		{
			name: "anonymous queue admits",
			set:  plain, user: carol,
			opts: jobspec.Options{NTasks: 64, Duration: 1e6},
			want: want{duration: 1e6},
		},

		// Enabled state.
		{
			name:   "disabled queue",
			set:    named,
			states: map[string]State{"debug": disabled("maintenance window")},
			user:   alice,
			opts:   jobspec.Options{Queue: "debug"},
			want:   want{err: "job submission to debug is disabled: maintenance window"},
		},
		{
			name:   "disabled with the default reason",
			set:    named,
			states: map[string]State{"debug": disabled("")},
			user:   alice,
			opts:   jobspec.Options{Queue: "debug"},
			want:   want{err: "job submission to debug is disabled: disabled by administrator"},
		},
		{
			// The default queue is assigned first, so its state counts.
			name:   "default queue disabled",
			set:    named,
			states: map[string]State{"batch": disabled("drained for upgrade")},
			user:   carol,
			opts:   jobspec.Options{},
			want:   want{err: "job submission to batch is disabled: drained for upgrade"},
		},
		{
			name:   "another queue disabled",
			set:    named,
			states: map[string]State{"debug": disabled("x")},
			user:   carol,
			opts:   jobspec.Options{Queue: "long"},
			want:   want{queue: "long"},
		},
		{
			// flux-core queue_submit_check: no " to NAME" for the anonymous queue.
			name:   "anonymous queue disabled",
			set:    plain,
			states: map[string]State{"": disabled("maintenance window")},
			user:   carol,
			opts:   jobspec.Options{},
			want:   want{err: "job submission is disabled: maintenance window"},
		},
		{
			name:   "disabled binds the owner too",
			set:    named,
			states: map[string]State{"debug": disabled("maintenance window")},
			user:   owner,
			opts:   jobspec.Options{Queue: "debug"},
			want:   want{err: "job submission to debug is disabled: maintenance window"},
		},

		// Access policy.
		{
			// RFC 33 access policy: allow-user and allow-group restrict.
			name: "user not allowed",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "debug"},
			want: want{err: "user carol is not allowed to submit to queue debug"},
		},
		{
			name: "allow-user grants",
			set:  named, user: alice,
			opts: jobspec.Options{Queue: "debug", Duration: 60},
			want: want{queue: "debug", duration: 60, constraints: `{"properties":["debug"]}`},
		},
		{
			name: "allow-group grants",
			set:  named, user: bob,
			opts: jobspec.Options{Queue: "debug", Duration: 60},
			want: want{queue: "debug", duration: 60, constraints: `{"properties":["debug"]}`},
		},
		{
			// Flux's owner role holds every other role.
			name: "owner bypasses access",
			set:  named, user: owner,
			opts: jobspec.Options{Queue: "debug", Duration: 60},
			want: want{queue: "debug", duration: 60, constraints: `{"properties":["debug"]}`},
		},
		{
			name: "uid without a name not allowed",
			set:  named, user: noname,
			opts: jobspec.Options{Queue: "debug"},
			want: want{err: "user 4242 is not allowed to submit to queue debug"},
		},
		{
			name: "anonymous queue access",
			set:  anonAccess, user: carol,
			opts: jobspec.Options{},
			want: want{err: "user carol is not allowed to submit to queue (default)"},
		},
		{
			name: "anonymous queue access granted",
			set:  anonAccess, user: alice,
			opts: jobspec.Options{},
			want: want{},
		},
		{
			// Access is checked before limits (a stranger learns nothing
			// of the queue's limits).
			name: "access before limits",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "debug", NTasks: 8},
			want: want{err: "user carol is not allowed to submit to queue debug"},
		},

		// Duration: defaults, then limits.
		{
			// docs/cli.md: "requested duration (2h) exceeds policy limit of 1h
			// for queue batch".
			name: "duration over the limit",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "batch", Duration: 7200},
			want: want{err: "requested duration (2h) exceeds policy limit of 1h for queue batch"},
		},
		{
			name: "duration at the limit",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "batch", Duration: 3600},
			want: want{queue: "batch", duration: 3600, constraints: `{"properties":["batch"]}`},
		},
		{
			// A duration the user gave is kept; the default is for jobs
			// without one.
			name: "explicit duration kept",
			set:  named, user: carol,
			opts: jobspec.Options{Duration: 90},
			want: want{queue: "batch", duration: 90, constraints: `{"properties":["batch"]}`},
		},
		{
			// flux-core limit-duration: an unlimited job exceeds any limit.
			name: "unlimited duration against a limit",
			set:  named, user: alice,
			opts: jobspec.Options{Queue: "debug"},
			want: want{err: "requested duration (unlimited) exceeds policy limit of 30m for queue debug"},
		},
		{
			// RFC 33: jobspec defaults are applied before limits are
			// checked: a default over the limit is rejected...
			name: "default duration over the limit",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "tight"},
			want: want{err: "requested duration (2h) exceeds policy limit of 1h for queue tight"},
		},
		{
			// ...and a default under it is admitted and set in the jobspec.
			name: "default duration under the limit",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "batch"},
			want: want{queue: "batch", duration: 1800, constraints: `{"properties":["batch"]}`},
		},
		{
			// The queue's "0" lifts the global 1d limit.
			name: "lifted duration limit",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "long", Duration: 1000 * 86400},
			want: want{queue: "long", duration: 1000 * 86400},
		},
		{
			name: "lifted limit admits unlimited",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "long"},
			want: want{queue: "long"},
		},
		{
			// The global limit applies to a queue without its own.
			name: "global duration limit on a queue",
			set:  named, user: owner,
			opts: jobspec.Options{Queue: "gpu", Nodes: 1, NTasks: 4, GPUsPerTask: 1, Duration: 2 * 86400},
			want: want{err: "requested duration (2d) exceeds policy limit of 1d for queue gpu"},
		},

		// Job size: maximums, then minimums, on the derived counts.
		{
			name: "ncores over the limit",
			set:  named, user: alice,
			opts: jobspec.Options{Queue: "debug", NTasks: 2, Duration: 60},
			want: want{err: "requested ncores (2) exceeds policy limit of 1 for queue debug"},
		},
		{
			// Counts are job-wide totals: node[2]>slot[2]>core[2] is 8 cores.
			name: "ncores derived from nodes and slots",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "batch", Nodes: 2, NTasks: 4, CoresPerTask: 2, Duration: 60},
			want: want{err: "requested ncores (8) exceeds policy limit of 4 for queue batch"},
		},
		{
			// flux-core limit-job-size checks nnodes, ncores, ngpus in turn.
			name: "nnodes over the limit",
			set:  named, user: alice,
			opts: jobspec.Options{Queue: "debug", Nodes: 2, Duration: 60},
			want: want{err: "requested nnodes (2) exceeds policy limit of 1 for queue debug"},
		},
		{
			name: "ngpus over the limit",
			set:  named, user: alice,
			opts: jobspec.Options{Queue: "debug", GPUsPerTask: 1, Duration: 60},
			want: want{err: "requested ngpus (1) exceeds policy limit of 0 for queue debug"},
		},
		{
			name: "within size limits",
			set:  named, user: alice,
			opts: jobspec.Options{Queue: "debug", Nodes: 1, Duration: 60},
			want: want{queue: "debug", duration: 60, constraints: `{"properties":["debug"]}`},
		},
		{
			name: "nnodes under the minimum",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "gpu", Nodes: 1, NTasks: 4, GPUsPerTask: 1, Duration: 60},
			want: want{err: "requested nnodes (1) is under policy limit of 2 for queue gpu"},
		},
		{
			name: "ngpus under the minimum",
			set: mustCompile(t, Tables{Queues: map[string]Config{"gpu": {Policy: Policy{Limits: Limits{JobSize: JobSize{
				Min: maxSize(nil, num(4), num(1))}}}}}}),
			user: carol,
			opts: jobspec.Options{Queue: "gpu", NTasks: 4},
			want: want{err: "requested ngpus (0) is under policy limit of 1 for queue gpu"},
		},
		{
			name: "ncores under the minimum, others fine",
			set: mustCompile(t, Tables{Queues: map[string]Config{"gpu": {Policy: Policy{Limits: Limits{JobSize: JobSize{
				Min: maxSize(nil, num(4), num(1))}}}}}}),
			user: carol,
			opts: jobspec.Options{Queue: "gpu", NTasks: 2, GPUsPerTask: 1},
			want: want{err: "requested ncores (2) is under policy limit of 4 for queue gpu"},
		},
		{
			// A job without a node level asks for 0 nodes, as flux-core's
			// jj counts it.
			name: "no node level counts zero nodes",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "gpu", NTasks: 4, GPUsPerTask: 1, Duration: 60},
			want: want{err: "requested nnodes (0) is under policy limit of 2 for queue gpu"},
		},
		{
			// flux-core limit-job-size: every maximum before any minimum.
			name: "maximums before minimums",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "gpu", Nodes: 3, NTasks: 3, Duration: 60},
			want: want{err: "requested nnodes (3) exceeds policy limit of 1 for queue gpu"},
		},
		{
			// Limits bind the owner: Flux's limit plugins exempt nobody.
			name: "owner bound by limits",
			set:  named, user: owner,
			opts: jobspec.Options{Queue: "debug", NTasks: 2, Duration: 60},
			want: want{err: "requested ncores (2) exceeds policy limit of 1 for queue debug"},
		},

		// The anonymous queue's limit messages name no queue.
		{
			name: "anonymous duration over the limit",
			set:  anon, user: carol,
			opts: jobspec.Options{Duration: 7200},
			want: want{err: "requested duration (2h) exceeds policy limit of 1h"},
		},
		{
			name: "anonymous unlimited duration",
			set:  anon, user: carol,
			opts: jobspec.Options{},
			want: want{err: "requested duration (unlimited) exceeds policy limit of 1h"},
		},
		{
			name: "anonymous ncores over the limit",
			set:  anon, user: carol,
			opts: jobspec.Options{NTasks: 3, Duration: 60},
			want: want{err: "requested ncores (3) exceeds policy limit of 2"},
		},
		{
			name: "anonymous ngpus over the limit",
			set:  anon, user: carol,
			opts: jobspec.Options{GPUsPerTask: 2, Duration: 60},
			want: want{err: "requested ngpus (2) exceeds policy limit of 0"},
		},
		{
			name: "anonymous nnodes under the minimum",
			set:  anon, user: carol,
			opts: jobspec.Options{Nodes: 1, Duration: 60},
			want: want{err: "requested nnodes (1) is under policy limit of 2"},
		},
		{
			name: "anonymous within limits",
			set:  anon, user: carol,
			opts: jobspec.Options{Nodes: 2, Duration: 60},
			want: want{duration: 60},
		},

		// RFC 33 requires: "added with an and operator".
		{
			name: "requires and-ed with existing constraints",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "batch", Constraints: map[string]any{"properties": []string{"gpu"}}},
			want: want{queue: "batch", duration: 1800,
				constraints: `{"and":[{"properties":["gpu"]},{"properties":["batch"]}]}`},
		},
		{
			name: "requires and-ed with a compound constraint",
			set:  named, user: carol,
			opts: jobspec.Options{Constraints: map[string]any{"or": []any{
				map[string]any{"hostlist": []string{"node[1-2]"}},
				map[string]any{"not": []any{map[string]any{"properties": []string{"slow"}}}},
			}}},
			want: want{queue: "batch", duration: 1800,
				constraints: `{"and":[{"or":[{"hostlist":["node[1-2]"]},{"not":[{"properties":["slow"]}]}]},{"properties":["batch"]}]}`},
		},
		{
			// A virtual queue requires its parent's properties too.
			name: "virtual queue requires",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "expedite", Duration: 60},
			want: want{queue: "expedite", duration: 60, constraints: `{"properties":["batch","fast"]}`},
		},
		{
			name: "no requires leaves constraints alone",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "long", Constraints: map[string]any{"properties": []string{"gpu"}}},
			want: want{queue: "long", constraints: `{"properties":["gpu"]}`},
		},
		{
			// The job's own constraint must be valid RFC 31 to be combined.
			name: "invalid job constraint with requires",
			set:  named, user: carol,
			opts: jobspec.Options{Queue: "batch", Duration: 60, Constraints: map[string]any{"foo": []string{"x"}}},
			want: want{err: "unsatisfiable constraints: unknown constraint operator: foo"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := job(t, tt.opts)
			err := tt.set.Admit(js, tt.states, tt.user)
			if tt.want.err != "" {
				if err == nil {
					b, _ := js.MarshalJSON()
					t.Fatalf("admitted, want rejection %q\n%s", tt.want.err, b)
				}
				if diff := cmp.Diff(tt.want.err, err.Error()); diff != "" {
					t.Errorf("rejection (-want +got):\n%s", diff)
				}
				if !errors.Is(err, ErrRejected) {
					t.Errorf("errors.Is(%v, ErrRejected) = false", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			sys := js.Attributes.System
			got := want{queue: sys.Queue, duration: sys.Duration, constraints: string(sys.Constraints)}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("admitted jobspec (-want +got):\n%s", diff)
			}
			// What the job manager stores must read back the same.
			b, err := js.MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON: %v", err)
			}
			back, err := jobspec.Parse(b)
			if err != nil {
				t.Fatalf("Parse(MarshalJSON): %v\n%s", err, b)
			}
			if diff := cmp.Diff(js, back); diff != "" {
				t.Errorf("admitted jobspec after a round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// Admit reads the counts from the jobspec as written, not only as
// FromOptions builds it: a hand-written V1 jobspec with a node level.
func TestAdmitParsedJobspec(t *testing.T) {
	set := mustCompile(t, admitTables())
	const doc = `{"version":1,"resources":[{"type":"node","count":1,"with":[{"type":"slot","count":3,"label":"task",` +
		`"with":[{"type":"core","count":2},{"type":"gpu","count":1}]}]}],` +
		`"tasks":[{"command":["app"],"slot":"task","count":{"per_slot":1}}],` +
		`"attributes":{"system":{"duration":60,"queue":"debug","constraints":{"ranks":["0-1"]}}}}`
	tests := []struct {
		name string
		user User
		want string
	}{
		{"stranger", carol, "user carol is not allowed to submit to queue debug"},
		// node[1]>slot[3]>(core[2],gpu[1]): 6 cores, 3 gpus; ncores is
		// checked before ngpus.
		{"member", bob, "requested ncores (6) exceeds policy limit of 1 for queue debug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := jobspec.Parse([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			err = set.Admit(js, nil, tt.user)
			if err == nil {
				t.Fatalf("admitted, want %q", tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("rejection (-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrRejected) {
				t.Errorf("not ErrRejected: %v", err)
			}
		})
	}
}

// Admit is called once per submission on the same set: it must not keep
// anything from one job to the next, nor change the queue's policy.
func TestAdmitDoesNotChangeTheSet(t *testing.T) {
	set := mustCompile(t, admitTables())
	before := effectiveQueues(set)
	for range 3 {
		js := job(t, jobspec.Options{Constraints: map[string]any{"properties": []string{"gpu"}}})
		if err := set.Admit(js, nil, carol); err != nil {
			t.Fatal(err)
		}
		if got, want := string(js.Attributes.System.Constraints), `{"and":[{"properties":["gpu"]},{"properties":["batch"]}]}`; got != want {
			t.Fatalf("constraints %s, want %s", got, want)
		}
	}
	if diff := cmp.Diff(before, effectiveQueues(set)); diff != "" {
		t.Errorf("queues after Admit (-want +got):\n%s", diff)
	}
}

// A rejection is shown to the user on one line (docs/cli.md: "A rejected
// submission prints one line on stderr"), whatever the jobspec holds.
func TestAdmitRejectionOneLine(t *testing.T) {
	set := mustCompile(t, admitTables())
	tests := []struct {
		name  string
		queue string
	}{
		{"newline in the queue name", "a\nb"},
		{"carriage return in the queue name", "batch\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := job(t, jobspec.Options{Queue: tt.queue})
			err := set.Admit(js, nil, carol)
			if err == nil {
				t.Fatalf("queue %q admitted", tt.queue)
			}
			if !errors.Is(err, ErrRejected) {
				t.Errorf("not ErrRejected: %v", err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Errorf("rejection is not one line: %q", msg)
			}
		})
	}
}

// What Admit admits, the job manager stores and later reads back with
// jobspec.Parse (ops.Load, the scheduler, the exec system): the changes
// Admit makes (queue, duration, constraints) must not push a valid
// jobspec over the jobspec limits. Admit must either reject the job
// (ErrRejected, one line) or leave a jobspec that marshals and parses.
func TestAdmitResultParses(t *testing.T) {
	set := mustCompile(t, admitTables())
	// The largest jobspec Parse accepts, without a queue: the default
	// queue, its requires and default duration make it grow.
	big := func(t *testing.T) []byte {
		small, err := job(t, jobspec.Options{Environment: map[string]string{"X": ""}}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		pad := strings.Repeat("x", jobspec.MaxSize-len(small))
		b, err := job(t, jobspec.Options{Environment: map[string]string{"X": pad}}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A constraint nested as deep as a jobspec allows, less one level of
	// "and" (an object and an array).
	deep := func(n int) []byte {
		c := strings.Repeat(`{"not":[`, n) + `{"properties":["x"]}` + strings.Repeat(`]}`, n)
		return []byte(`{"version":1,"resources":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}],` +
			`"tasks":[{"command":["app"],"slot":"task","count":{"per_slot":1}}],` +
			`"attributes":{"system":{"duration":60,"constraints":` + c + `}}}`)
	}
	tests := []struct {
		name string
		doc  func(t *testing.T) []byte
	}{
		{"jobspec at MaxSize gets the default queue", big},
		{"constraints 28 deep and-ed with requires", func(*testing.T) []byte { return deep(28) }},
		{"constraints 29 deep and-ed with requires", func(*testing.T) []byte { return deep(29) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := jobspec.Parse(tt.doc(t))
			if err != nil {
				t.Fatalf("test input does not parse: %v", err)
			}
			if err := set.Admit(js, nil, carol); err != nil {
				if !errors.Is(err, ErrRejected) || strings.ContainsAny(err.Error(), "\n\r") {
					t.Errorf("rejection %q: want ErrRejected on one line", err)
				}
				return
			}
			b, err := js.MarshalJSON()
			if err != nil {
				t.Fatalf("admitted jobspec does not marshal: %v", err)
			}
			if _, err := jobspec.Parse(b); err != nil {
				t.Fatalf("admitted jobspec does not parse again: %v", err)
			}
		})
	}
}

// jobspec.System.Constraints is documented as canonical JSON (the form
// jobspec.MarshalJSON writes and Parse keeps). After Admit and-s the
// queue's requires in, it must still be, so the jobspec in memory equals
// the one stored and read back.
func TestAdmitConstraintsCanonical(t *testing.T) {
	set := mustCompile(t, admitTables())
	tests := []struct {
		name string
		prop string
	}{
		{"ascii", "gpu"},
		{"non-ascii", "gpü"},
		{"html characters", "a<b>c"},
		{"line separator", "a\u2028b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := job(t, jobspec.Options{Constraints: map[string]any{"properties": []string{tt.prop}}})
			if err := set.Admit(js, nil, carol); err != nil {
				t.Fatal(err)
			}
			b, err := js.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := jobspec.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(back.Attributes.System.Constraints), string(js.Attributes.System.Constraints)); diff != "" {
				t.Errorf("constraints after Admit vs canonical (-want +got):\n%s", diff)
			}
		})
	}
}
