package queue

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Helpers for the optional (pointer) fields of the config tables.
func str(s string) *string        { return &s }
func num(n int64) *int64          { return &n }
func list(s ...string) *[]string  { s = append([]string{}, s...); return &s }
func sizes(n, c, g int64) Sizes   { return Sizes{NNodes: n, NCores: c, NGPUs: g} }
func maxSize(n, c, g *int64) Size { return Size{NNodes: n, NCores: c, NGPUs: g} }

// unl is a compiled job-size side without any limit.
var unl = sizes(Unlimited, Unlimited, Unlimited)

func mustCompile(t testing.TB, tb Tables) *Set {
	t.Helper()
	s, err := Compile(tb)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

// site is a typical configuration: a global policy, two queues with their
// own limits and a virtual queue under batch.
func site() Tables {
	return Tables{
		Policy: Policy{
			Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{
				Duration: str("30m"), Queue: str("batch")}}},
			Limits: Limits{Duration: str("8h"), JobSize: JobSize{Max: maxSize(num(4), nil, nil)}},
			Access: Access{AllowGroup: list("staff")},
		},
		Queues: map[string]Config{
			"batch": {Requires: []string{"batch"}, Policy: Policy{
				Limits:    Limits{Duration: str("1d")},
				Scheduler: map[string]any{"match-policy": "best-fit"},
			}},
			"debug": {Requires: []string{"debug"}, Policy: Policy{
				Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("5m")}}},
				Limits: Limits{Duration: str("1h"), JobSize: JobSize{
					Max: maxSize(num(1), num(1), num(0)),
					Min: maxSize(nil, nil, nil),
				}},
				Access: Access{AllowUser: list("alice", "bob")},
			}},
			"expedite": {Parent: "batch", Requires: []string{"fast", "batch"}, Policy: Policy{
				Limits: Limits{JobSize: JobSize{Min: maxSize(num(2), nil, nil)}},
			}},
		},
	}
}

// RFC 33: each queue's effective policy is the global [policy], then the
// queue's own values where set ("queue-specific policy values SHALL
// override global policy values"); a virtual queue inherits its parent's.
func TestCompileEffective(t *testing.T) {
	tests := []struct {
		name   string
		tables Tables
		queue  string
		want   *Queue
	}{
		{
			// RFC 33: without [queues] there is one anonymous queue.
			name:   "anonymous without policy",
			tables: Tables{},
			queue:  "",
			want:   &Queue{Max: unl, Min: unl},
		},
		{
			// RFC 33: [policy] applies to every queue, the anonymous one too.
			name: "global policy on the anonymous queue",
			tables: Tables{Policy: Policy{
				Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("10m")}}},
				Limits: Limits{Duration: str("1h"), JobSize: JobSize{
					Max: maxSize(num(2), num(8), num(0)),
					Min: maxSize(nil, num(1), nil),
				}},
				Access:    Access{AllowUser: list("alice")},
				Scheduler: map[string]any{"match-policy": "first-fit"},
			}},
			queue: "",
			want: &Queue{
				DefaultDuration: 600, MaxDuration: 3600,
				Max: sizes(2, 8, 0), Min: sizes(Unlimited, 1, Unlimited),
				AllowUser: []string{"alice"},
				Scheduler: map[string]any{"match-policy": "first-fit"},
			},
		},
		{
			// RFC 33: a queue's value overrides the global one, key by key.
			name:   "queue overrides global limit",
			tables: site(),
			queue:  "debug",
			want: &Queue{
				Name: "debug", Requires: []string{"debug"},
				DefaultDuration: 300, MaxDuration: 3600,
				Max: sizes(1, 1, 0), Min: unl,
				AllowUser: []string{"alice", "bob"}, AllowGroup: []string{"staff"},
			},
		},
		{
			name:   "queue without own limit inherits the global one",
			tables: site(),
			queue:  "batch",
			want: &Queue{
				Name: "batch", Requires: []string{"batch"},
				DefaultDuration: 1800, MaxDuration: 86400,
				Max: sizes(4, Unlimited, Unlimited), Min: unl,
				AllowGroup: []string{"staff"},
				Scheduler:  map[string]any{"match-policy": "best-fit"},
			},
		},
		{
			// flux-core limit-duration: a queue may set "0" for unlimited;
			// limit-job-size: -1 is unlimited and lifts a global limit.
			name: "queue lifts global limits with 0 and -1",
			tables: Tables{
				Policy: Policy{
					Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("1h")}}},
					Limits: Limits{Duration: str("1h"), JobSize: JobSize{
						Max: maxSize(num(1), num(4), num(0)),
						Min: maxSize(num(1), nil, nil),
					}},
				},
				Queues: map[string]Config{"big": {Policy: Policy{
					Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("0")}}},
					Limits: Limits{Duration: str("0"), JobSize: JobSize{
						Max: maxSize(num(-1), num(-1), nil),
						Min: maxSize(num(-1), nil, nil),
					}},
				}}},
			},
			queue: "big",
			want:  &Queue{Name: "big", Max: sizes(Unlimited, Unlimited, 0), Min: unl},
		},
		{
			// RFC 23: "inf" is a duration too, and means no limit.
			name: "inf duration limit is unlimited",
			tables: Tables{
				Policy: Policy{Limits: Limits{Duration: str("1h")}},
				Queues: map[string]Config{"long": {Policy: Policy{Limits: Limits{Duration: str("inf")}}}},
			},
			queue: "long",
			want:  &Queue{Name: "long", Max: unl, Min: unl},
		},
		{
			// A virtual queue: global, then the parent's policy, then its
			// own; requires are the parent's first, without duplicates.
			name:   "parent chain",
			tables: site(),
			queue:  "expedite",
			want: &Queue{
				Name: "expedite", Parent: "batch", Requires: []string{"batch", "fast"},
				DefaultDuration: 1800, MaxDuration: 86400,
				Max: sizes(4, Unlimited, Unlimited), Min: sizes(2, Unlimited, Unlimited),
				AllowGroup: []string{"staff"},
				Scheduler:  map[string]any{"match-policy": "best-fit"},
			},
		},
		{
			name: "grandparent chain, nearest ancestor wins",
			tables: Tables{Queues: map[string]Config{
				"a": {Requires: []string{"pa"}, Policy: Policy{
					Limits:    Limits{Duration: str("4h"), JobSize: JobSize{Max: maxSize(num(8), num(64), nil)}},
					Scheduler: map[string]any{"match-policy": "first-fit", "x": "a"},
				}},
				"b": {Parent: "a", Requires: []string{"pb"}, Policy: Policy{
					Limits:    Limits{Duration: str("2h")},
					Scheduler: map[string]any{"x": "b"},
				}},
				"c": {Parent: "b", Requires: []string{"pc", "pa"}, Policy: Policy{
					Limits: Limits{JobSize: JobSize{Max: maxSize(nil, num(16), nil)}},
				}},
			}},
			queue: "c",
			want: &Queue{
				Name: "c", Parent: "b", Requires: []string{"pa", "pb", "pc"},
				MaxDuration: 7200, Max: sizes(8, 16, Unlimited), Min: unl,
				Scheduler: map[string]any{"match-policy": "first-fit", "x": "b"},
			},
		},
		{
			// Access lists are replaced, not merged: the queue's allow-user
			// is the whole list; allow-group, unset there, is inherited.
			name: "access lists replaced not merged",
			tables: Tables{
				Policy: Policy{Access: Access{AllowUser: list("alice", "bob"), AllowGroup: list("staff")}},
				Queues: map[string]Config{"q": {Policy: Policy{Access: Access{AllowUser: list("carol")}}}},
			},
			queue: "q",
			want: &Queue{Name: "q", Max: unl, Min: unl,
				AllowUser: []string{"carol"}, AllowGroup: []string{"staff"}},
		},
		{
			// An empty list is a list: nobody but the groups (and the
			// owner) may submit, unlike an absent key.
			name: "empty allow-user restricts",
			tables: Tables{
				Policy: Policy{Access: Access{AllowUser: list("alice")}},
				Queues: map[string]Config{"q": {Policy: Policy{Access: Access{AllowUser: list()}}}},
			},
			queue: "q",
			want:  &Queue{Name: "q", Max: unl, Min: unl, AllowUser: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.tables)
			got, ok := s.Queue(tt.queue)
			if !ok {
				t.Fatalf("Queue(%q) not found; names %q", tt.queue, s.Names())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("effective queue %q (-want +got):\n%s", tt.queue, diff)
			}
		})
	}
}

// The effective queue owns its lists: changing the tables afterwards, as
// a config reload might reuse them, does not change a compiled set.
func TestCompileCopiesLists(t *testing.T) {
	users := []string{"alice"}
	tb := Tables{Policy: Policy{Access: Access{AllowUser: &users}}}
	s := mustCompile(t, tb)
	users[0] = "mallory"
	q, _ := s.Queue("")
	if diff := cmp.Diff([]string{"alice"}, q.AllowUser); diff != "" {
		t.Errorf("AllowUser after changing the tables (-want +got):\n%s", diff)
	}
}

func TestCompileNamesDefault(t *testing.T) {
	tests := []struct {
		name        string
		tables      Tables
		wantNames   []string
		wantDefault string
		wantNamed   bool
	}{
		{"anonymous", Tables{}, []string{""}, "", false},
		{"anonymous with global policy", Tables{Policy: Policy{Limits: Limits{Duration: str("1h")}}}, []string{""}, "", false},
		// RFC 33: "If queues are configured, then all queues SHALL be named."
		{"one queue, no default", Tables{Queues: map[string]Config{"batch": {}}}, []string{"batch"}, "", true},
		{"sorted, with default", site(), []string{"batch", "debug", "expedite"}, "batch", true},
		{
			// RFC 33: several queues without a default still compile (as
			// Flux starts); submissions then must name a queue.
			"several, no default",
			Tables{Queues: map[string]Config{"z": {}, "a": {}, "m": {}}},
			[]string{"a", "m", "z"}, "", true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.tables)
			if diff := cmp.Diff(tt.wantNames, s.Names()); diff != "" {
				t.Errorf("Names (-want +got):\n%s", diff)
			}
			if got := s.Default(); got != tt.wantDefault {
				t.Errorf("Default = %q, want %q", got, tt.wantDefault)
			}
			if got := s.Named(); got != tt.wantNamed {
				t.Errorf("Named = %v, want %v", got, tt.wantNamed)
			}
			for _, n := range tt.wantNames {
				if _, ok := s.Queue(n); !ok {
					t.Errorf("Queue(%q) missing", n)
				}
			}
			if _, ok := s.Queue("nosuch"); ok {
				t.Errorf("Queue(nosuch) found")
			}
			if tt.wantNamed {
				if _, ok := s.Queue(""); ok {
					t.Errorf("named set has an anonymous queue")
				}
			}
		})
	}
	a := Anonymous()
	if diff := cmp.Diff([]string{""}, a.Names()); diff != "" || a.Named() || a.Default() != "" {
		t.Errorf("Anonymous(): names %q named %v default %q", a.Names(), a.Named(), a.Default())
	}
}

func TestCompileErrors(t *testing.T) {
	q := func(c Config) Tables { return Tables{Queues: map[string]Config{"debug": c}} }
	tests := []struct {
		name   string
		tables Tables
		want   string
	}{
		{
			name:   "invalid default duration",
			tables: Tables{Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("1x")}}}}},
			want:   `error parsing [policy.jobspec.defaults.system] config table: duration: invalid Flux standard duration "1x": unknown unit "x" (want ms, s, m, h or d)`,
		},
		{
			name:   "invalid limit duration",
			tables: Tables{Policy: Policy{Limits: Limits{Duration: str("-1h")}}},
			want:   `error parsing [policy.limits] config table: duration: invalid Flux standard duration "-1h": must not be negative`,
		},
		{
			name:   "invalid queue limit duration",
			tables: q(Config{Policy: Policy{Limits: Limits{Duration: str("")}}}),
			want:   `error parsing [queues.debug.policy.limits] config table: duration: invalid Flux standard duration "": empty string`,
		},
		{
			name:   "invalid queue default duration",
			tables: q(Config{Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("soon")}}}}}),
			want:   `error parsing [queues.debug.policy.jobspec.defaults.system] config table: duration: invalid Flux standard duration "soon": expected a number`,
		},
		{
			// flux-core limit-job-size: "size must be -1 (unlimited), or >= 0".
			name:   "max size below -1",
			tables: Tables{Policy: Policy{Limits: Limits{JobSize: JobSize{Max: maxSize(nil, num(-2), nil)}}}},
			want:   `error parsing [policy.limits] config table: job-size.max.ncores: size must be -1 (unlimited), or >= 0`,
		},
		{
			name:   "min size below -1 in a queue",
			tables: q(Config{Policy: Policy{Limits: Limits{JobSize: JobSize{Min: maxSize(num(-5), nil, nil)}}}}),
			want:   `error parsing [queues.debug.policy.limits] config table: job-size.min.nnodes: size must be -1 (unlimited), or >= 0`,
		},
		{
			// flux-core reads sizes as a C int.
			name:   "size over int32",
			tables: Tables{Policy: Policy{Limits: Limits{JobSize: JobSize{Max: maxSize(nil, nil, num(1<<31))}}}},
			want:   `error parsing [policy.limits] config table: job-size.max.ngpus: size must be -1 (unlimited), or >= 0`,
		},
		{
			name:   "empty allow-user name",
			tables: Tables{Policy: Policy{Access: Access{AllowUser: list("alice", "")}}},
			want:   `error parsing [policy.access] config table: allow-user: "" is not a user or group name`,
		},
		{
			name:   "allow-group name with a colon",
			tables: q(Config{Policy: Policy{Access: Access{AllowGroup: list("a:b")}}}),
			want:   `error parsing [queues.debug.policy.access] config table: allow-group: "a:b" is not a user or group name`,
		},
		{
			// RFC 33: the default queue is policy.jobspec.defaults.system.queue
			// of the global [policy] only.
			name:   "queue policy sets the default queue",
			tables: q(Config{Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Queue: str("debug")}}}}}),
			want:   `error parsing [queues.debug.policy] config table: a queue's policy may not set jobspec.defaults.system.queue`,
		},
		{
			name: "default queue not configured",
			tables: Tables{
				Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Queue: str("nosuch")}}}},
				Queues: map[string]Config{"batch": {}},
			},
			want: `error parsing [policy.jobspec.defaults.system] config table: default queue 'nosuch' is not configured`,
		},
		{
			name:   "default queue without any queue",
			tables: Tables{Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Queue: str("batch")}}}}},
			want:   `error parsing [policy.jobspec.defaults.system] config table: default queue 'batch' is not configured`,
		},
		{
			name:   "parent not configured",
			tables: q(Config{Parent: "batch"}),
			want:   `error parsing [queues.debug] config table: parent queue 'batch' is not configured`,
		},
		{
			name:   "parent is itself",
			tables: q(Config{Parent: "debug"}),
			want:   `error parsing [queues.debug] config table: parent queues form a cycle: debug -> debug`,
		},
		{
			name:   "parent cycle",
			tables: Tables{Queues: map[string]Config{"a": {Parent: "b"}, "b": {Parent: "a"}}},
			want:   `error parsing [queues.a] config table: parent queues form a cycle: a -> b -> a`,
		},
		{
			name:   "empty required property",
			tables: q(Config{Requires: []string{"debug", ""}}),
			want:   `error parsing [queues.debug] config table: requires: a property name is empty`,
		},
		{
			// RFC 20 forbids these characters in property names.
			name:   "invalid required property",
			tables: q(Config{Requires: []string{"a|b"}}),
			want:   `error parsing [queues.debug] config table: requires: invalid character '|' in property "a|b"`,
		},
		{
			name:   "queue name with a space",
			tables: Tables{Queues: map[string]Config{"my queue": {}}},
			want:   `error parsing [queues.my queue] config table: queue name "my queue" may hold only printable ASCII without spaces or commas`,
		},
		{
			name:   "queue name with a comma",
			tables: Tables{Queues: map[string]Config{"a,b": {}}},
			want:   `error parsing [queues.a,b] config table: queue name "a,b" may hold only printable ASCII without spaces or commas`,
		},
		{
			name:   "empty queue name",
			tables: Tables{Queues: map[string]Config{"": {}}},
			want:   `error parsing [queues.] config table: a queue needs a name`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(tt.tables)
			if err == nil {
				t.Fatalf("Compile succeeded (names %q), want error %q", s.Names(), tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if errors.Is(err, ErrRejected) {
				t.Errorf("a config error is not a rejected submission: %v", err)
			}
		})
	}
}

// effective returns every queue of a set, for comparing two sets.
func effectiveQueues(s *Set) map[string]*Queue {
	m := map[string]*Queue{}
	for _, n := range s.Names() {
		q, _ := s.Queue(n)
		m[n] = q
	}
	return m
}

// The store keeps the tables as JSON (RFC 33: the tools do not read the
// config file): what comes back compiles to the same queues.
func TestSetJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		tables Tables
	}{
		{"anonymous", Tables{}},
		{"site", site()},
		{"lifted limits", Tables{
			Policy: Policy{Limits: Limits{Duration: str("1h"), JobSize: JobSize{Max: maxSize(num(1), num(1), num(1))}}},
			Queues: map[string]Config{"big": {Policy: Policy{Limits: Limits{Duration: str("0"), JobSize: JobSize{
				Max: maxSize(num(-1), num(0), nil), Min: maxSize(num(0), nil, nil)}}}}},
		}},
		{"empty access lists", Tables{
			Policy: Policy{Access: Access{AllowUser: list(), AllowGroup: list()}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.tables)
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var back Set
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("Unmarshal: %v\n%s", err, b)
			}
			if diff := cmp.Diff(effectiveQueues(s), effectiveQueues(&back)); diff != "" {
				t.Errorf("effective queues after a JSON round trip (-want +got):\n%s\n%s", diff, b)
			}
			if diff := cmp.Diff(s.Names(), back.Names()); diff != "" {
				t.Errorf("Names (-want +got):\n%s", diff)
			}
			if back.Default() != s.Default() || back.Named() != s.Named() {
				t.Errorf("Default/Named = %q/%v, want %q/%v", back.Default(), back.Named(), s.Default(), s.Named())
			}
			if diff := cmp.Diff(s.Tables(), back.Tables()); diff != "" {
				t.Errorf("Tables (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetUnmarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"not JSON", `{`, "unexpected end of JSON input"},
		{"wrong type", `{"queues":[]}`, "json: cannot unmarshal array into Go struct field Tables.queues of type map[string]queue.Config"},
		{"tables that do not compile", `{"queues":{"a":{"parent":"b"}}}`,
			"error parsing [queues.a] config table: parent queue 'b' is not configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Set
			err := json.Unmarshal([]byte(tt.in), &s)
			if err == nil {
				t.Fatalf("Unmarshal(%s) succeeded", tt.in)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// RestrictsAccess tells the job manager whether a submitter's user and
// group names are needed at all.
func TestRestrictsAccess(t *testing.T) {
	tests := []struct {
		name   string
		tables Tables
		want   bool
	}{
		{"anonymous", Tables{}, false},
		{"limits only", Tables{Policy: Policy{Limits: Limits{Duration: str("1h")}}}, false},
		{"named without access", Tables{Queues: map[string]Config{"a": {}, "b": {Parent: "a"}}}, false},
		{"global allow-group", site(), true},
		{"global allow-user, anonymous", Tables{Policy: Policy{Access: Access{AllowUser: list("alice")}}}, true},
		{"one queue's allow-user", Tables{Queues: map[string]Config{"a": {}, "b": {Policy: Policy{Access: Access{AllowUser: list("bob")}}}}}, true},
		{"inherited from the parent", Tables{Queues: map[string]Config{
			"a": {Policy: Policy{Access: Access{AllowGroup: list("wheel")}}}, "b": {Parent: "a"}}}, true},
		// An empty list admits nobody but the owner: that restricts too.
		{"empty allow-user", Tables{Policy: Policy{Access: Access{AllowUser: list()}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustCompile(t, tt.tables).RestrictsAccess(); got != tt.want {
				t.Errorf("RestrictsAccess() = %v, want %v", got, tt.want)
			}
		})
	}
}
