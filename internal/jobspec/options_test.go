package jobspec

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// canonJSON rewrites any JSON text in this package's canonical form.
func canonJSON(t *testing.T, s string) string {
	t.Helper()
	v, err := parseJSONValue([]byte(s))
	if err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	b, err := appendValue(nil, v, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shape returns the resources and tasks of a marshalled jobspec, the part
// of `flux submit --dry-run` output the options decide.
func shape(t *testing.T, j *Jobspec) string {
	t.Helper()
	b, err := j.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseJSONValue(b)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	out, err := appendValue(nil, map[string]any{"resources": m["resources"], "tasks": m["tasks"]}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestFromOptions compares against what `flux submit --dry-run` prints
// for the same options (flux-core JobspecV1.from_command via
// SubmitBaseCmd.init_jobspec), as Python json.dumps writes it.
func TestFromOptions(t *testing.T) {
	cmd := []string{"hostname"}
	const tasksPerSlot = `"tasks": [{"command": ["hostname"], "slot": "task", "count": {"per_slot": 1}}]`
	tests := []struct {
		name    string
		opts    Options
		want    string // flux submit --dry-run resources and tasks
		counts  Counts
		wantErr string
	}{
		{
			name:   "no options",
			opts:   Options{Command: cmd},
			want:   `{"resources": [{"type": "slot", "count": 1, "with": [{"type": "core", "count": 1}], "label": "task"}], ` + tasksPerSlot + `}`,
			counts: Counts{NSlots: 1, NCores: 1, NTasks: 1, CoresPerSlot: 1},
		},
		{
			name:   "-n4",
			opts:   Options{Command: cmd, NTasks: 4},
			want:   `{"resources": [{"type": "slot", "count": 4, "with": [{"type": "core", "count": 1}], "label": "task"}], ` + tasksPerSlot + `}`,
			counts: Counts{NSlots: 4, NCores: 4, NTasks: 4, CoresPerSlot: 1},
		},
		{
			name:   "-n4 -c2",
			opts:   Options{Command: cmd, NTasks: 4, CoresPerTask: 2},
			want:   `{"resources": [{"type": "slot", "count": 4, "with": [{"type": "core", "count": 2}], "label": "task"}], ` + tasksPerSlot + `}`,
			counts: Counts{NSlots: 4, NCores: 8, NTasks: 4, CoresPerSlot: 2},
		},
		{
			// -N without -n: one task per node, nodes exclusive.
			name:   "-N2",
			opts:   Options{Command: cmd, Nodes: 2},
			want:   `{"resources": [{"type": "node", "count": 2, "exclusive": true, "with": [{"type": "slot", "count": 1, "with": [{"type": "core", "count": 1}], "label": "task"}]}], ` + tasksPerSlot + `}`,
			counts: Counts{NNodes: 2, NSlots: 2, NCores: 2, NTasks: 2, CoresPerSlot: 1, Exclusive: true},
		},
		{
			name:   "-N2 -n4",
			opts:   Options{Command: cmd, Nodes: 2, NTasks: 4},
			want:   `{"resources": [{"type": "node", "count": 2, "with": [{"type": "slot", "count": 2, "with": [{"type": "core", "count": 1}], "label": "task"}]}], ` + tasksPerSlot + `}`,
			counts: Counts{NNodes: 2, NSlots: 4, NCores: 4, NTasks: 4, CoresPerSlot: 1},
		},
		{
			// Uneven: ceil(3/2)=2 slots per node, task count total 3.
			name:   "-N2 -n3",
			opts:   Options{Command: cmd, Nodes: 2, NTasks: 3},
			want:   `{"resources": [{"type": "node", "count": 2, "with": [{"type": "slot", "count": 2, "with": [{"type": "core", "count": 1}], "label": "task"}]}], "tasks": [{"command": ["hostname"], "slot": "task", "count": {"total": 3}}]}`,
			counts: Counts{NNodes: 2, NSlots: 4, NCores: 4, NTasks: 3, CoresPerSlot: 1},
		},
		{
			name:   "-n2 -g1",
			opts:   Options{Command: cmd, NTasks: 2, GPUsPerTask: 1},
			want:   `{"resources": [{"type": "slot", "count": 2, "with": [{"type": "core", "count": 1}, {"type": "gpu", "count": 1}], "label": "task"}], ` + tasksPerSlot + `}`,
			counts: Counts{NSlots: 2, NCores: 2, NGPUs: 2, NTasks: 2, CoresPerSlot: 1, GPUsPerSlot: 1},
		},
		{
			name:   "-N1 -x",
			opts:   Options{Command: cmd, Nodes: 1, Exclusive: true},
			want:   `{"resources": [{"type": "node", "count": 1, "exclusive": true, "with": [{"type": "slot", "count": 1, "with": [{"type": "core", "count": 1}], "label": "task"}]}], ` + tasksPerSlot + `}`,
			counts: Counts{NNodes: 1, NSlots: 1, NCores: 1, NTasks: 1, CoresPerSlot: 1, Exclusive: true},
		},
		{
			name:   "-N2 -n4 -x -c3 -g2",
			opts:   Options{Command: cmd, Nodes: 2, NTasks: 4, Exclusive: true, CoresPerTask: 3, GPUsPerTask: 2},
			want:   `{"resources": [{"type": "node", "count": 2, "exclusive": true, "with": [{"type": "slot", "count": 2, "with": [{"type": "core", "count": 3}, {"type": "gpu", "count": 2}], "label": "task"}]}], ` + tasksPerSlot + `}`,
			counts: Counts{NNodes: 2, NSlots: 4, NCores: 12, NGPUs: 8, NTasks: 4, CoresPerSlot: 3, GPUsPerSlot: 2, Exclusive: true},
		},
		{
			// -g0 asks for no gpus: from_command leaves the gpu out.
			name:   "-g0",
			opts:   Options{Command: cmd, GPUsPerTask: 0},
			want:   `{"resources": [{"type": "slot", "count": 1, "with": [{"type": "core", "count": 1}], "label": "task"}], ` + tasksPerSlot + `}`,
			counts: Counts{NSlots: 1, NCores: 1, NTasks: 1, CoresPerSlot: 1},
		},
		{name: "-x", opts: Options{Command: cmd, Exclusive: true}, wantErr: "exclusive can only be set with a node count"},
		{name: "-n4 -x", opts: Options{Command: cmd, NTasks: 4, Exclusive: true}, wantErr: "exclusive can only be set with a node count"},
		{name: "-N3 -n2", opts: Options{Command: cmd, Nodes: 3, NTasks: 2}, wantErr: "node count must not be greater than task count"},
		{name: "-n-1", opts: Options{Command: cmd, NTasks: -1}, wantErr: "task count must be an integer >= 1"},
		{name: "-c-1", opts: Options{Command: cmd, CoresPerTask: -1}, wantErr: "cores per task must be an integer >= 1"},
		{name: "-g-1", opts: Options{Command: cmd, GPUsPerTask: -1}, wantErr: "gpus per task must be an integer >= 0"},
		// flux submit copies a truthy -N into -n before from_command sees it.
		{name: "-N-1", opts: Options{Command: cmd, Nodes: -1}, wantErr: "task count must be an integer >= 1"},
		{name: "-N-1 -n2", opts: Options{Command: cmd, Nodes: -1, NTasks: 2}, wantErr: "node count must be an integer >= 1 (if set)"},
		{name: "no command", opts: Options{}, wantErr: "job command and arguments are missing"},
		{name: "negative -t", opts: Options{Command: cmd, Duration: -1}, wantErr: "duration must not be negative"},
		{name: "NaN -t", opts: Options{Command: cmd, Duration: math.NaN()}, wantErr: "duration must be a normal, finite value"},
		{name: "huge -n", opts: Options{Command: cmd, NTasks: MaxCount + 1}, wantErr: "counts must be <= 2147483647"},
		{name: "too many cores", opts: Options{Command: cmd, NTasks: 1 << 16, CoresPerTask: 1 << 16}, wantErr: "total core count must be <= 2147483647"},
		{name: "bad dependency", opts: Options{Command: cmd, Dependencies: []string{"1234"}}, wantErr: `invalid dependency URI "1234"`},
		{name: "constraints not object", opts: Options{Command: cmd, Constraints: []string{"x"}}, wantErr: "constraints must be a mapping"},
		{name: "constraints not JSON", opts: Options{Command: cmd, Constraints: json.RawMessage(`{`)}, wantErr: "constraints: json:"},
		{name: "relative cwd", opts: Options{Command: cmd, Cwd: "tmp"}, wantErr: "attributes.system.cwd must be an absolute path"},
		{name: "extra of wrong type", opts: Options{Command: cmd, Extra: map[string]any{"queue": 5}}, wantErr: "attributes.system.queue must be a string"},
		{name: "extra not JSON", opts: Options{Command: cmd, Extra: map[string]any{"f": math.Inf(1)}}, wantErr: "attributes.system.f: number +Inf cannot be written as JSON"},
		{name: "bad begin-time", opts: Options{Command: cmd, BeginTime: -5}, wantErr: "begin-time must be a finite time after the epoch"},
		{name: "NUL in env", opts: Options{Command: cmd, Environment: map[string]string{"A": "x\x00"}}, wantErr: "attributes.system.environment.A must not contain a NUL character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := FromOptions(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("FromOptions error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromOptions: %v", err)
			}
			if diff := cmp.Diff(canonJSON(t, tt.want), shape(t, j)); diff != "" {
				t.Errorf("resources/tasks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.counts, j.Counts()); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
			checkRoundTrip(t, j)
		})
	}
}

// TestFromOptionsAttributes checks the whole document for the attribute
// options, against flux submit's output with keys sorted.
func TestFromOptionsAttributes(t *testing.T) {
	j, err := FromOptions(Options{
		Command:      []string{"sleep", "60"},
		Nodes:        1,
		NTasks:       2,
		CoresPerTask: 2,
		Duration:     3600,
		Cwd:          "/home/alice",
		Name:         "sleepy",
		Queue:        "batch",
		Environment:  map[string]string{"HOME": "/home/alice", "PATH": "/usr/bin:/bin"},
		Constraints:  map[string]any{"properties": []string{"amd-mi50"}},
		Dependencies: []string{"afterok:ƒ2P4d5", "after:123?foo=1&bar=x&bar=2.5"},
		BeginTime:    1700000000,
		Extra:        map[string]any{"bank": "physics", "shell": map[string]any{"options": map[string]any{"rlimit": map[string]int{"core": 0}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// flux submit -N1 -n2 -c2 -t 1h --cwd=/home/alice --job-name=sleepy
	//   -q batch --requires=amd-mi50 --dependency=afterok:ƒ2P4d5
	//   --dependency='after:123?foo=1&bar=x&bar=2.5'
	//   --begin-time=@1700000000 --setattr=bank=physics -o rlimit=core=0
	want := `{"resources": [{"type": "node", "count": 1, "with": [{"type": "slot", "count": 2, "with": [{"type": "core", "count": 2}], "label": "task"}]}],
	 "tasks": [{"command": ["sleep", "60"], "slot": "task", "count": {"per_slot": 1}}],
	 "attributes": {"system": {"duration": 3600.0, "cwd": "/home/alice", "job": {"name": "sleepy"}, "queue": "batch",
	   "environment": {"HOME": "/home/alice", "PATH": "/usr/bin:/bin"},
	   "constraints": {"properties": ["amd-mi50"]},
	   "dependencies": [{"scheme": "afterok", "value": "ƒ2P4d5"}, {"scheme": "after", "value": "123", "foo": 1, "bar": ["x", 2.5]},
	                    {"scheme": "begin-time", "value": "1700000000.0"}],
	   "bank": "physics", "shell": {"options": {"rlimit": {"core": 0}}}}},
	 "version": 1}`
	got, err := j.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(canonJSON(t, want), string(got)); diff != "" {
		t.Errorf("MarshalJSON (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("sleepy", j.Attributes.System.Job.Name); diff != "" {
		t.Errorf("job name (-want +got):\n%s", diff)
	}
	checkRoundTrip(t, j)
}

func TestDependencyEntry(t *testing.T) {
	tests := []struct {
		uri     string
		want    map[string]any
		wantErr bool
	}{
		{uri: "afterok:ƒ2P4d5", want: map[string]any{"scheme": "afterok", "value": "ƒ2P4d5"}},
		{uri: "AfterAny:42", want: map[string]any{"scheme": "afterany", "value": "42"}},
		// A bare word is a scheme with an empty value, as URIArg makes it.
		{uri: "singleton", want: map[string]any{"scheme": "singleton", "value": ""}},
		{uri: "x:1?a=&b=3#frag", want: map[string]any{"scheme": "x", "value": "1", "b": json.Number("3")}},
		{uri: "1x:2", wantErr: true},
		{uri: ":2", wantErr: true},
	}
	for _, tt := range tests {
		got, err := dependencyEntry(tt.uri)
		if (err != nil) != tt.wantErr {
			t.Errorf("dependencyEntry(%q) error = %v, wantErr %v", tt.uri, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" && !tt.wantErr {
			t.Errorf("dependencyEntry(%q) (-want +got):\n%s", tt.uri, diff)
		}
	}
}
