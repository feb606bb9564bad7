package queue

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInitial(t *testing.T) {
	tests := []struct {
		name  string
		named bool
		want  State
	}{
		// docs/cli.md: "Named queues start enabled and stopped, as in Flux; the
		// anonymous queue starts enabled and started."
		{"named", true, State{Enabled: true}},
		{"anonymous", false, State{Enabled: true, Started: true, CheckpointStarted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Initial(tt.named)); diff != "" {
				t.Errorf("Initial(%v) (-want +got):\n%s", tt.named, diff)
			}
		})
	}
}

// op is one administrative command applied to a state.
type op struct {
	enable       *bool // enable/disable when set
	start        *bool // start/stop when set
	reason       string
	nocheckpoint bool
}

func enable(on bool, reason string) op { return op{enable: &on, reason: reason} }
func start(on bool, reason string, nocheckpoint bool) op {
	return op{start: &on, reason: reason, nocheckpoint: nocheckpoint}
}

func TestStateCommands(t *testing.T) {
	tests := []struct {
		name        string
		named       bool
		ops         []op
		want        State
		wantRestart State // the state after a restart
	}{
		{
			// docs/cli.md: disable's default reason is "disabled by administrator".
			name:        "disable without a reason",
			named:       true,
			ops:         []op{enable(false, "")},
			want:        State{Enabled: false, DisableReason: "disabled by administrator"},
			wantRestart: State{Enabled: false, DisableReason: "disabled by administrator"},
		},
		{
			name:        "disable with a reason",
			named:       true,
			ops:         []op{enable(false, "maintenance window")},
			want:        State{DisableReason: "maintenance window"},
			wantRestart: State{DisableReason: "maintenance window"},
		},
		{
			name:        "enable clears the reason",
			named:       true,
			ops:         []op{enable(false, "maintenance window"), enable(true, "ignored")},
			want:        State{Enabled: true},
			wantRestart: State{Enabled: true},
		},
		{
			name:        "disable twice keeps the last reason",
			named:       false,
			ops:         []op{enable(false, "one"), enable(false, "two")},
			want:        State{DisableReason: "two", Started: true, CheckpointStarted: true},
			wantRestart: State{DisableReason: "two", Started: true, CheckpointStarted: true},
		},
		{
			name:        "start a named queue",
			named:       true,
			ops:         []op{start(true, "ignored", false)},
			want:        State{Enabled: true, Started: true, CheckpointStarted: true},
			wantRestart: State{Enabled: true, Started: true, CheckpointStarted: true},
		},
		{
			// flux queue start --nocheckpoint: a restart comes back stopped.
			name:        "start with nocheckpoint",
			named:       true,
			ops:         []op{start(true, "", true)},
			want:        State{Enabled: true, Started: true, CheckpointStarted: false},
			wantRestart: State{Enabled: true, Started: false, CheckpointStarted: false},
		},
		{
			name:        "stop with a reason",
			named:       false,
			ops:         []op{start(false, "admin hold", false)},
			want:        State{Enabled: true, StopReason: "admin hold"},
			wantRestart: State{Enabled: true, StopReason: "admin hold"},
		},
		{
			name:        "stop without a reason",
			named:       false,
			ops:         []op{start(false, "", false)},
			want:        State{Enabled: true},
			wantRestart: State{Enabled: true},
		},
		{
			// flux queue stop --nocheckpoint: a restart comes back started,
			// without the stop reason.
			name:        "stop with nocheckpoint",
			named:       false,
			ops:         []op{start(false, "admin hold", true)},
			want:        State{Enabled: true, StopReason: "admin hold", CheckpointStarted: true},
			wantRestart: State{Enabled: true, Started: true, CheckpointStarted: true},
		},
		{
			name:        "start clears the stop reason",
			named:       false,
			ops:         []op{start(false, "admin hold", false), start(true, "", false)},
			want:        State{Enabled: true, Started: true, CheckpointStarted: true},
			wantRestart: State{Enabled: true, Started: true, CheckpointStarted: true},
		},
		{
			// Flux checkpoints the stop reason only with a stopped
			// checkpoint; a later start --nocheckpoint cleared it.
			name:        "stop, then start with nocheckpoint",
			named:       true,
			ops:         []op{start(false, "admin hold", false), start(true, "", true)},
			want:        State{Enabled: true, Started: true},
			wantRestart: State{Enabled: true},
		},
		{
			name:        "start, then stop with nocheckpoint",
			named:       true,
			ops:         []op{start(true, "", false), start(false, "quick look", true)},
			want:        State{Enabled: true, StopReason: "quick look", CheckpointStarted: true},
			wantRestart: State{Enabled: true, Started: true, CheckpointStarted: true},
		},
		{
			// Submission and scheduling are independent.
			name:        "disable and stop",
			named:       true,
			ops:         []op{start(true, "", false), enable(false, "closed"), start(false, "hold", false)},
			want:        State{DisableReason: "closed", StopReason: "hold"},
			wantRestart: State{DisableReason: "closed", StopReason: "hold"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Initial(tt.named)
			for _, o := range tt.ops {
				switch {
				case o.enable != nil:
					st.Enable(*o.enable, o.reason)
				case o.start != nil:
					st.Start(*o.start, o.reason, o.nocheckpoint)
				}
			}
			if diff := cmp.Diff(tt.want, st); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRestart, st.Restart()); diff != "" {
				t.Errorf("Restart() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, st); diff != "" {
				t.Errorf("Restart changed its receiver (-want +got):\n%s", diff)
			}
			// The store keeps the state as JSON.
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			var back State
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(st, back); diff != "" {
				t.Errorf("JSON round trip (-want +got):\n%s\n%s", diff, b)
			}
		})
	}
}

// The stored form uses flux-core's checkpoint keys (enable,
// disable_reason, start, stop_reason).
func TestStateJSON(t *testing.T) {
	tests := []struct {
		name string
		st   State
		want string
	}{
		{"initial named", Initial(true), `{"enable":true,"start":false,"checkpoint_start":false}`},
		{"disabled and stopped", State{DisableReason: "maint", StopReason: "hold", CheckpointStarted: true},
			`{"enable":false,"disable_reason":"maint","start":false,"stop_reason":"hold","checkpoint_start":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.st)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
		})
	}
}

func started() State { return State{Enabled: true, Started: true, CheckpointStarted: true} }

func stopped(reason string) State { return State{Enabled: true, StopReason: reason} }

func TestScheduling(t *testing.T) {
	named := mustCompile(t, Tables{Queues: map[string]Config{
		"batch":    {},
		"debug":    {},
		"expedite": {Parent: "batch"},
		"urgent":   {Parent: "expedite"},
	}})
	anon := Anonymous()
	tests := []struct {
		name       string
		set        *Set
		states     map[string]State
		queue      string
		wantOn     bool
		wantReason string
		wantLine   string
	}{
		{
			// Named queues start stopped, without a reason.
			name: "named, initial", set: named, queue: "batch",
			wantLine: "Scheduling is stopped",
		},
		{
			name: "anonymous, initial", set: anon, queue: "",
			wantOn: true, wantLine: "Scheduling is started",
		},
		{
			name: "anonymous, stopped", set: anon, queue: "",
			states:     map[string]State{"": stopped("admin hold")},
			wantReason: "admin hold", wantLine: "Scheduling is stopped: admin hold",
		},
		{
			name: "started", set: named, queue: "debug",
			states: map[string]State{"debug": started()},
			wantOn: true, wantLine: "Scheduling is started",
		},
		{
			name: "stopped with a reason", set: named, queue: "batch",
			states:     map[string]State{"batch": stopped("admin hold")},
			wantReason: "admin hold", wantLine: "Scheduling is stopped: admin hold",
		},
		{
			// docs/cli.md: "expedite: Scheduling is stopped: parent queue 'batch'
			// is stopped" — a virtual queue runs only while its parent does.
			name: "parent stopped", set: named, queue: "expedite",
			states:     map[string]State{"expedite": started(), "batch": stopped("admin hold")},
			wantReason: "parent queue 'batch' is stopped",
			wantLine:   "Scheduling is stopped: parent queue 'batch' is stopped",
		},
		{
			name: "parent stopped by default", set: named, queue: "expedite",
			states:     map[string]State{"expedite": started()},
			wantReason: "parent queue 'batch' is stopped",
			wantLine:   "Scheduling is stopped: parent queue 'batch' is stopped",
		},
		{
			name: "parent started", set: named, queue: "expedite",
			states: map[string]State{"expedite": started(), "batch": started()},
			wantOn: true, wantLine: "Scheduling is started",
		},
		{
			name: "grandparent stopped", set: named, queue: "urgent",
			states:     map[string]State{"urgent": started(), "expedite": started(), "batch": stopped("")},
			wantReason: "parent queue 'batch' is stopped",
			wantLine:   "Scheduling is stopped: parent queue 'batch' is stopped",
		},
		{
			// The queue's own stop comes first.
			name: "own stop before the parent's", set: named, queue: "expedite",
			states:     map[string]State{"expedite": stopped("own"), "batch": stopped("parent's")},
			wantReason: "own", wantLine: "Scheduling is stopped: own",
		},
		{
			// A stopped child does not stop its parent.
			name: "child stopped, parent runs", set: named, queue: "batch",
			states: map[string]State{"batch": started(), "expedite": stopped("x")},
			wantOn: true, wantLine: "Scheduling is started",
		},
		{
			name: "unknown queue", set: named, queue: "nosuch",
			wantReason: "no such queue", wantLine: "Scheduling is stopped: no such queue",
		},
		{
			name: "unknown queue on the anonymous instance", set: anon, queue: "nosuch",
			wantReason: "no such queue", wantLine: "Scheduling is stopped: no such queue",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			on, reason := tt.set.Scheduling(tt.states, tt.queue)
			if on != tt.wantOn || reason != tt.wantReason {
				t.Errorf("Scheduling(%q) = %v, %q; want %v, %q", tt.queue, on, reason, tt.wantOn, tt.wantReason)
			}
			if diff := cmp.Diff(tt.wantLine, tt.set.SchedulingLine(tt.states, tt.queue)); diff != "" {
				t.Errorf("SchedulingLine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubmissionLine(t *testing.T) {
	tests := []struct {
		name string
		st   State
		want string
	}{
		{"initial", Initial(true), "Job submission is enabled"},
		{"disabled", disabled("maintenance window"), "Job submission is disabled: maintenance window"},
		{"disabled, default reason", disabled(""), "Job submission is disabled: disabled by administrator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, SubmissionLine(tt.st)); diff != "" {
				t.Errorf("SubmissionLine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStateOf(t *testing.T) {
	named := mustCompile(t, Tables{Queues: map[string]Config{"batch": {}, "debug": {}}})
	states := map[string]State{"debug": disabled("x")}
	tests := []struct {
		name  string
		set   *Set
		queue string
		want  State
	}{
		{"stored", named, "debug", disabled("x")},
		{"not stored, named", named, "batch", Initial(true)},
		{"not stored, anonymous", Anonymous(), "", Initial(false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.set.StateOf(states, tt.queue)); diff != "" {
				t.Errorf("StateOf(%q) (-want +got):\n%s", tt.queue, diff)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	named := mustCompile(t, Tables{Queues: map[string]Config{"batch": {}, "debug": {}}})
	anon := Anonymous()
	tests := []struct {
		name    string
		set     *Set
		queue   string
		all     bool
		want    []string
		wantErr string
	}{
		{name: "named, one queue", set: named, queue: "debug", want: []string{"debug"}},
		{name: "named, all", set: named, all: true, want: []string{"batch", "debug"}},
		{name: "named, all wins over a name", set: named, queue: "debug", all: true, want: []string{"batch", "debug"}},
		{
			// docs/cli.md: with named queues and neither QUEUE nor --all.
			name: "named, none given", set: named,
			wantErr: "Named queues are defined. Specify a queue or use --all.",
		},
		{name: "named, unknown", set: named, queue: "nosuch", wantErr: "'nosuch' is not a valid queue"},
		{
			// Shown on one line, whatever was typed.
			name: "named, unknown with a newline", set: named, queue: "a\nb",
			wantErr: `'a\nb' is not a valid queue`,
		},
		{name: "anonymous, none given", set: anon, want: []string{""}},
		{name: "anonymous, all", set: anon, all: true, want: []string{""}},
		{
			// flux-core queue_lookup: no name is valid without named queues.
			name: "anonymous, a name", set: anon, queue: "batch",
			wantErr: "'batch' is not a valid queue",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.set.Lookup(tt.queue, tt.all)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Lookup(%q, %v) = %q, want error %q", tt.queue, tt.all, got, tt.wantErr)
				}
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if !errors.Is(err, ErrRejected) {
					t.Errorf("errors.Is(%v, ErrRejected) = false", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup(%q, %v): %v", tt.queue, tt.all, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%q, %v) (-want +got):\n%s", tt.queue, tt.all, diff)
			}
		})
	}
}
