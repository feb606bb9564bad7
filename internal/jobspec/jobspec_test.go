package jobspec

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// minimal is the smallest V1 jobspec; tests edit it with strings.Replace.
const minimal = `{"version":1,"resources":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}],` +
	`"tasks":[{"command":["app"],"slot":"task","count":{"per_slot":1}}],"attributes":{"system":{"duration":0}}}`

func edit(old, new string) string {
	if !strings.Contains(minimal, old) {
		panic("test edit does not apply: " + old)
	}
	return strings.Replace(minimal, old, new, 1)
}

func TestParse(t *testing.T) {
	yes := true
	tests := []struct {
		name    string
		in      string
		want    *Jobspec
		wantErr string
	}{
		{
			name: "minimal",
			in:   minimal,
			want: &Jobspec{
				Version:    1,
				Resources:  []Resource{{Type: "slot", Count: 1, Label: "task", With: []Resource{{Type: "core", Count: 1}}}},
				Tasks:      []Task{{Command: []string{"app"}, Slot: "task", Count: Count{PerSlot: 1}}},
				Attributes: Attributes{System: System{Duration: 0}},
			},
		},
		{
			name: "every attribute",
			in: `version: 1
resources:
  - type: node
    count: 2
    exclusive: true
    unit: ""
    with:
      - type: slot
        count: 3
        label: task
        exclusive: false
        with: [{type: core, count: 4}, {type: gpu, count: 1, unit: dev}]
tasks:
  - command: [a, "b c"]
    slot: task
    count: {total: 5}
attributes:
  user: {x: [1, 2.50, null, true], y: {}}
  system:
    duration: 1e2
    cwd: /tmp
    queue: debug
    environment: {A: "1", B: ""}
    constraints: {and: [{properties: [x]}, {not: [{hostlist: ["n[1-2]"]}]}]}
    dependencies: [{scheme: afterok, value: "12", extra: 0x10}]
    shell: {options: {verbose: 2}, other: x}
    job: {name: myjob, project: p}
    bank: b
    files: {script: {data: "#!/bin/sh\n", encoding: utf-8}}
`,
			want: &Jobspec{
				Version: 1,
				Resources: []Resource{{Type: "node", Count: 2, Exclusive: &yes, With: []Resource{{
					Type: "slot", Count: 3, Label: "task", Exclusive: new(bool),
					With: []Resource{{Type: "core", Count: 4}, {Type: "gpu", Count: 1, Unit: "dev"}},
				}}}},
				Tasks: []Task{{Command: []string{"a", "b c"}, Slot: "task", Count: Count{Total: 5}}},
				Attributes: Attributes{
					User: map[string]any{"x": []any{json.Number("1"), json.Number("2.5"), nil, true}, "y": map[string]any{}},
					System: System{
						Duration:     100,
						Cwd:          "/tmp",
						Queue:        "debug",
						Environment:  map[string]string{"A": "1", "B": ""},
						Constraints:  json.RawMessage(`{"and":[{"properties":["x"]},{"not":[{"hostlist":["n[1-2]"]}]}]}`),
						Dependencies: []Dependency{{Scheme: "afterok", Value: "12", Extra: map[string]any{"extra": json.Number("16")}}},
						Shell:        Shell{Options: map[string]any{"verbose": json.Number("2")}, Extra: map[string]any{"other": "x"}},
						Job:          JobMeta{Name: "myjob", Extra: map[string]string{"project": "p"}},
						Extra: map[string]any{
							"bank":  "b",
							"files": map[string]any{"script": map[string]any{"data": "#!/bin/sh\n", "encoding": "utf-8"}},
						},
					},
				},
			},
		},
		{
			name: "yaml flow mapping starting with a brace",
			in:   `{version: 1, resources: [{type: slot, count: 1, label: t, with: [{type: core, count: 1}]}], tasks: [{command: [x], slot: t, count: {per_slot: 1}}], attributes: {system: {duration: 0.5}}}`,
			want: &Jobspec{
				Version:    1,
				Resources:  []Resource{{Type: "slot", Count: 1, Label: "t", With: []Resource{{Type: "core", Count: 1}}}},
				Tasks:      []Task{{Command: []string{"x"}, Slot: "t", Count: Count{PerSlot: 1}}},
				Attributes: Attributes{System: System{Duration: 0.5}},
			},
		},
		// Syntax and limits.
		{name: "empty", in: "", wantErr: "jobspec is empty"},
		{name: "not a mapping", in: "[1]", wantErr: "jobspec must be a mapping"},
		{name: "json trailing garbage", in: minimal + "x", wantErr: "json: line 1 column"},
		{name: "json duplicate key", in: edit(`"version":1`, `"version":1,"version":1`), wantErr: `duplicate key "version"`},
		{name: "yaml duplicate key", in: "version: 1\nversion: 1\n", wantErr: `duplicate key "version"`},
		{name: "json bad utf-8", in: edit(`"app"`, "\"\xff\""), wantErr: "invalid UTF-8"},
		{name: "json lone surrogate", in: edit(`"app"`, `"\ud800"`), wantErr: "surrogate"},
		// YAML gets a second chance at a document JSON refuses; neither
		// allows a raw control character in a string.
		{name: "json control character", in: edit(`"app"`, "\"a\x01b\""), wantErr: "control character 0x01"},
		{name: "json deep nesting", in: `{"a":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}", wantErr: "nesting is deeper than 64 levels"},
		{name: "yaml deep nesting", in: "a: " + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), wantErr: "nesting is deeper than 64 levels"},
		{name: "yaml self alias", in: "a: &a [*a]", wantErr: "nesting is deeper than 64 levels"},
		{name: "yaml merge key", in: "a: &a {b: 1}\nc: {<<: *a}\n", wantErr: "merge keys (<<) are not supported"},
		{name: "yaml two documents", in: "a: 1\n---\nb: 2\n", wantErr: "jobspec must be a single YAML document"},
		{name: "yaml non-string key", in: "1: a\n", wantErr: "mapping keys must be strings"},
		{name: "yaml infinity", in: "a: .inf\n", wantErr: "number .inf is not finite"},
		{name: "json integer out of range", in: edit(`"count":1,"label"`, `"count":99999999999999999999999,"label"`), wantErr: "count must be an integer"},
		{name: "too many values", in: `{"a":[` + strings.Repeat("0,", MaxNodes) + `0]}`, wantErr: "more than 131072 values"},
		{name: "yaml too large", in: "a: " + strings.Repeat("x", MaxYAMLSize), wantErr: "yaml jobspec is too large: 262147 bytes, the limit is 262144"},
		{name: "too large", in: strings.Repeat(" ", MaxSize+1), wantErr: "jobspec is too large: 1048577 bytes, the limit is 1048576"},
		// Top level.
		{name: "unknown top-level key", in: edit(`"version":1`, `"version":1,"zz":1`), wantErr: "extraneous key (zz)"},
		{name: "version real", in: edit(`"version":1`, `"version":1.0`), wantErr: "version must be an integer"},
		{name: "version 2", in: edit(`"version":1`, `"version":2`), wantErr: "only version 1 jobspec is supported (got version 2)"},
		// Resources.
		{name: "no resources", in: edit(`[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}]`, `[]`), wantErr: "resources: jobspec V1 requires exactly one top-level resource, node or slot (got 0)"},
		{name: "count real", in: edit(`"count":1,"label"`, `"count":1.0,"label"`), wantErr: "resources[0]: count must be an integer"},
		{name: "count idset", in: edit(`"count":1,"label"`, `"count":"1-3","label"`), wantErr: "jobspec V1 does not allow count ranges"},
		{name: "count bool", in: edit(`"count":1,"label"`, `"count":true,"label"`), wantErr: "count must be an integer"},
		{name: "count too big", in: edit(`"count":1,"label"`, `"count":4294967296,"label"`), wantErr: "slot count must be <= 2147483647"},
		{name: "slot count negative", in: edit(`"count":1,"label"`, `"count":-1,"label"`), wantErr: "slot count must be >= 1"},
		{name: "empty label", in: edit(`"label":"task"`, `"label":""`), wantErr: "slots must have labels"},
		{name: "unknown vertex key", in: edit(`"label":"task"`, `"label":"task","zz":1`), wantErr: "resources[0]: extraneous key (zz)"},
		{name: "core at top", in: edit(`"type":"slot"`, `"type":"core"`), wantErr: "jobspec V1 requires node or slot as the top-level resource, not core"},
		{name: "slot without with", in: edit(`,"with":[{"type":"core","count":1}]`, ``), wantErr: "slot with array must have 1-3 elements: core, and optionally gpu and memory (got 0)"},
		{name: "slot of gpu only", in: edit(`{"type":"core","count":1}`, `{"type":"gpu","count":1}`), wantErr: "jobspec V1 requires a core in each slot"},
		{name: "two cores", in: edit(`{"type":"core","count":1}`, `{"type":"core","count":1},{"type":"core","count":1}`), wantErr: "slot with must list core only once"},
		{name: "slot in slot", in: edit(`{"type":"core","count":1}`, `{"type":"slot","count":1,"label":"x"}`), wantErr: "jobspec V1 does not allow slots inside slots"},
		{name: "with under core", in: edit(`{"type":"core","count":1}`, `{"type":"core","count":1,"with":[{"type":"core","count":1}]}`), wantErr: "jobspec V1 does not allow resources inside core"},
		{name: "exclusive core", in: edit(`{"type":"core","count":1}`, `{"type":"core","count":1,"exclusive":true}`), wantErr: "jobspec V1 allows exclusive only on node and slot"},
		{name: "node in node", in: edit(`{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}`, `{"type":"node","count":1,"with":[{"type":"node","count":1}]}`), wantErr: "jobspec V1 does not allow nodes inside nodes"},
		{name: "core in node", in: edit(`{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}`, `{"type":"node","count":1,"with":[{"type":"core","count":1}]}`), wantErr: "jobspec V1 requires a slot between node and core"},
		{name: "socket in node", in: edit(`{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}`, `{"type":"node","count":1,"with":[{"type":"socket","count":1}]}`), wantErr: "jobspec V1 does not allow resource type 'socket'"},
		{name: "total slots too many", in: edit(`{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}`, `{"type":"node","count":65536,"with":[{"type":"slot","count":65536,"label":"task","with":[{"type":"core","count":1}]}]}`), wantErr: "resources: total slot count must be <= 2147483647"},
		{name: "gpus at the limit", in: edit(`{"type":"core","count":1}`, `{"type":"core","count":1},{"type":"gpu","count":2147483647}`)},
		{name: "total gpus too many", in: strings.Replace(edit(`{"type":"core","count":1}`, `{"type":"core","count":1},{"type":"gpu","count":2147483647}`), `"count":1,"label"`, `"count":2,"label"`, 1), wantErr: "resources: total gpu count must be <= 2147483647"},
		// Tasks.
		{name: "two tasks", in: edit(`{"command":["app"],"slot":"task","count":{"per_slot":1}}`, `{"command":["app"],"slot":"task","count":{"per_slot":1}},{"command":["app"],"slot":"task","count":{"per_slot":1}}`), wantErr: "tasks: jobspec V1 requires exactly one task (got 2)"},
		{name: "per_slot 2", in: edit(`"per_slot":1`, `"per_slot":2`), wantErr: "jobspec V1 requires per_slot to be 1 (got 2): use total for more tasks"},
		{name: "per_slot string", in: edit(`"per_slot":1`, `"per_slot":"1"`), wantErr: "count per_slot must be an int"},
		{name: "total real", in: edit(`"per_slot":1`, `"total":1.5`), wantErr: "count total must be an int"},
		{name: "unknown count key", in: edit(`"per_slot":1`, `"each":1`), wantErr: "count per_slot or total must be set"},
		// RFC 25: total is at least the number of nodes.
		{name: "total below node count", in: strings.Replace(edit(`{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}`, `{"type":"node","count":2,"with":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}]}`), `"per_slot":1`, `"total":1`, 1), wantErr: "tasks[0]: tasks total count (1) must be >= the node count (2)"},
		{name: "total equal to node count", in: strings.Replace(edit(`{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}`, `{"type":"node","count":2,"with":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}]}`), `"per_slot":1`, `"total":2`, 1)},
		{name: "task distribution", in: edit(`"slot":"task",`, `"slot":"task","distribution":"x",`), wantErr: "jobspec V1 does not allow key 'distribution' in a task"},
		{name: "task unknown key", in: edit(`"slot":"task",`, `"slot":"task","zz":1,`), wantErr: "tasks[0]: extraneous key (zz)"},
		{name: "slot not string", in: edit(`"slot":"task"`, `"slot":1`), wantErr: "slot must be a string"},
		{name: "NUL in command", in: edit(`"app"`, `"a\u0000b"`), wantErr: "tasks command array entry must not contain a NUL character"},
		// Attributes.
		{name: "attributes null", in: edit(`{"system":{"duration":0}}`, `null`), wantErr: "attributes must be a mapping"},
		{name: "system not mapping", in: edit(`{"system":{"duration":0}}`, `{"system":[]}`), wantErr: "attributes.system must be a mapping"},
		{name: "user empty", in: edit(`{"system":{"duration":0}}`, `{"system":{"duration":0},"user":{}}`), wantErr: "if present, attributes.user must contain values"},
		{name: "user not mapping", in: edit(`{"system":{"duration":0}}`, `{"system":{"duration":0},"user":1}`), wantErr: "attributes.user must be a mapping"},
		{name: "duration string", in: edit(`"duration":0`, `"duration":"1h"`), wantErr: "attributes.system.duration must be a number"},
		{name: "duration negative", in: edit(`"duration":0`, `"duration":-1`), wantErr: "attributes.system.duration must not be negative"},
		{name: "cwd not string", in: edit(`"duration":0`, `"duration":0,"cwd":1`), wantErr: "attributes.system.cwd must be a string"},
		{name: "cwd relative", in: edit(`"duration":0`, `"duration":0,"cwd":"x"`), wantErr: "attributes.system.cwd must be an absolute path"},
		{name: "environment list", in: edit(`"duration":0`, `"duration":0,"environment":[]`), wantErr: "attributes.system.environment must be a dictionary"},
		{name: "environment null value", in: edit(`"duration":0`, `"duration":0,"environment":{"B":"1","A":null}`), wantErr: "attributes.system.environment.A must be a string"},
		{name: "environment bad name", in: edit(`"duration":0`, `"duration":0,"environment":{"A=B":"1"}`), wantErr: `variable name "A=B" must not contain '=' or NUL`},
		{name: "environment empty name", in: edit(`"duration":0`, `"duration":0,"environment":{"":"1"}`), wantErr: "variable names must not be empty"},
		{name: "queue not string", in: edit(`"duration":0`, `"duration":0,"queue":[]`), wantErr: "attributes.system.queue must be a string"},
		{name: "dependency not mapping", in: edit(`"duration":0`, `"duration":0,"dependencies":[1]`), wantErr: "attributes.system.dependencies[0]: dependency must be a mapping"},
		{name: "dependency no scheme", in: edit(`"duration":0`, `"duration":0,"dependencies":[{"value":"1"}]`), wantErr: "missing key (scheme)"},
		{name: "dependency scheme", in: edit(`"duration":0`, `"duration":0,"dependencies":[{"scheme":1,"value":"1"}]`), wantErr: "dependency scheme must be a string"},
		{name: "shell not mapping", in: edit(`"duration":0`, `"duration":0,"shell":1`), wantErr: "attributes.system.shell must be a dictionary"},
		{name: "shell options not mapping", in: edit(`"duration":0`, `"duration":0,"shell":{"options":1}`), wantErr: "attributes.system.shell.options must be a dictionary"},
		{name: "job not mapping", in: edit(`"duration":0`, `"duration":0,"job":"x"`), wantErr: "attributes.system.job must be a dictionary"},
		{name: "job name not string", in: edit(`"duration":0`, `"duration":0,"job":{"name":1}`), wantErr: "attributes.system.job.name must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Parse (-want +got):\n%s", diff)
				}
			}
			checkRoundTrip(t, got)
		})
	}
}

// TestYAMLAliasBomb: a "billion laughs" document must fail on the node
// budget, quickly and without growing memory.
func TestYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	_, err := Parse([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "alias bomb") {
		t.Fatalf("Parse error = %v, want the alias budget to trip", err)
	}
	// Aliases within budget are expanded.
	j, err := Parse([]byte(`
version: 1
resources: [{type: slot, count: 1, label: t, with: [{type: core, count: 1}]}]
tasks: [{command: &cmd [app], slot: t, count: {per_slot: 1}}]
attributes: {system: {duration: 0}, user: {again: *cmd}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"again": []any{"app"}}, j.Attributes.User); diff != "" {
		t.Errorf("alias expansion (-want +got):\n%s", diff)
	}
}

// TestValidate covers what only a hand-built Jobspec can hold.
func TestValidate(t *testing.T) {
	good := func() *Jobspec {
		j, err := Parse([]byte(minimal))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	yes := true
	tests := []struct {
		name    string
		mutate  func(*Jobspec)
		wantErr string
	}{
		{name: "valid", mutate: func(*Jobspec) {}},
		{name: "version 0", mutate: func(j *Jobspec) { j.Version = 0 }, wantErr: "version must be >= 1"},
		{name: "both counts", mutate: func(j *Jobspec) { j.Tasks[0].Count.Total = 2 }, wantErr: "count must have exactly one key set"},
		{name: "no count", mutate: func(j *Jobspec) { j.Tasks[0].Count = Count{} }, wantErr: "count per_slot or total must be set"},
		{name: "negative per_slot", mutate: func(j *Jobspec) { j.Tasks[0].Count = Count{PerSlot: -1} }, wantErr: "tasks per_slot count must be >= 1"},
		{name: "negative total", mutate: func(j *Jobspec) { j.Tasks[0].Count = Count{Total: -1} }, wantErr: "tasks total count must be >= 1"},
		{name: "empty command", mutate: func(j *Jobspec) { j.Tasks[0].Command = nil }, wantErr: "tasks command array length must be >= 1"},
		{name: "nan duration", mutate: func(j *Jobspec) { j.Attributes.System.Duration = math.NaN() }, wantErr: "attributes.system.duration must be a normal, finite value"},
		{name: "exclusive slot", mutate: func(j *Jobspec) { j.Resources[0].Exclusive = &yes }},
		{name: "empty user", mutate: func(j *Jobspec) { j.Attributes.User = map[string]any{} }, wantErr: "if present, attributes.user must contain values"},
		{name: "user not JSON", mutate: func(j *Jobspec) { j.Attributes.User = map[string]any{"f": func() {}} }, wantErr: "attributes.user: value of type func() cannot be written as JSON"},
		{name: "extra shadows field", mutate: func(j *Jobspec) { j.Attributes.System.Extra = map[string]any{"cwd": "/"} }, wantErr: "extraneous key (cwd) in Extra duplicates a System field"},
		{name: "job extra name", mutate: func(j *Jobspec) { j.Attributes.System.Job.Extra = map[string]string{"name": "x"} }, wantErr: "extraneous key (name) in Extra duplicates Name"},
		{name: "shell extra options", mutate: func(j *Jobspec) { j.Attributes.System.Shell.Extra = map[string]any{"options": 1} }, wantErr: "extraneous key (options) in Extra duplicates Options"},
		{name: "dependency extra scheme", mutate: func(j *Jobspec) {
			j.Attributes.System.Dependencies = []Dependency{{Scheme: "a", Value: "b", Extra: map[string]any{"scheme": "c"}}}
		}, wantErr: "extraneous key (scheme) in Extra duplicates Scheme"},
		{name: "constraints not object", mutate: func(j *Jobspec) { j.Attributes.System.Constraints = json.RawMessage(`[]`) }, wantErr: "attributes.system.constraints must be a mapping"},
		{name: "constraints not JSON", mutate: func(j *Jobspec) { j.Attributes.System.Constraints = json.RawMessage(`{`) }, wantErr: "attributes.system.constraints: json:"},
		{name: "command not UTF-8", mutate: func(j *Jobspec) { j.Tasks[0].Command = []string{"\xcc"} }, wantErr: "tasks[0]: string is not valid UTF-8"},
		{name: "core type not UTF-8", mutate: func(j *Jobspec) { j.Resources[0].With[0].Unit = "\xff" }, wantErr: "resources[0].with[0]: string is not valid UTF-8"},
		{name: "env not UTF-8", mutate: func(j *Jobspec) { j.Attributes.System.Environment = map[string]string{"A": "\xff"} }, wantErr: "attributes.system: string is not valid UTF-8"},
		{name: "user key not UTF-8", mutate: func(j *Jobspec) { j.Attributes.User = map[string]any{"\xff": 1} }, wantErr: "attributes.user: string is not valid UTF-8"},
		{name: "extra value not UTF-8", mutate: func(j *Jobspec) { j.Attributes.System.Extra = map[string]any{"x": []any{"\xff"}} }, wantErr: "attributes.system: string is not valid UTF-8"},
		{name: "deep hand-built graph", mutate: func(j *Jobspec) {
			r := Resource{Type: "core", Count: 1}
			for range 100 {
				r = Resource{Type: "core", Count: 1, With: []Resource{r}}
			}
			j.Resources[0].With = []Resource{r}
		}, wantErr: "nesting is deeper than 64 levels"},
		{name: "no resources", mutate: func(j *Jobspec) { j.Resources = nil }, wantErr: "requires exactly one top-level resource"},
		{name: "no tasks", mutate: func(j *Jobspec) { j.Tasks = nil }, wantErr: "jobspec V1 requires exactly one task (got 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := good()
			tt.mutate(j)
			err := j.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	var nilSpec *Jobspec
	if err := nilSpec.Validate(); err == nil {
		t.Error("Validate of a nil jobspec succeeded")
	}
}

// TestFormatFloat pins reals to Python's float repr, which json.dumps
// (and so flux submit) writes.
func TestFormatFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{3600, "3600.0"},
		{0.1, "0.1"},
		{-2.5, "-2.5"},
		{1e15, "1000000000000000.0"},
		{9999999999999998, "9999999999999998.0"},
		{1e16, "1e+16"},
		{1.5e300, "1.5e+300"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.2345e-7, "1.2345e-07"},
		{123456789.123, "123456789.123"},
		{5e-324, "5e-324"},
		{1700000000, "1700000000.0"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
	}
	for _, tt := range tests {
		if got := formatFloat(tt.in); got != tt.want {
			t.Errorf("formatFloat(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarshalJSON(t *testing.T) {
	j, err := Parse([]byte(edit(`"duration":0`, `"duration":3.6e3,"environment":{"Z":"ünï\"\\\n\u0001\u007f","A":"</>"},"user2":1E-7`)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := j.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	// Keys sorted, compact, reals as Python repr, strings escaped as
	// json.dumps(ensure_ascii=False) escapes them.
	want := `{"attributes":{"system":{"duration":3600.0,"environment":{"A":"</>","Z":"ünï\"\\\n\u0001` + "\x7f" + `"},"user2":1e-07}},` +
		`"resources":[{"count":1,"label":"task","type":"slot","with":[{"count":1,"type":"core"}]}],` +
		`"tasks":[{"command":["app"],"count":{"per_slot":1},"slot":"task"}],"version":1}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("MarshalJSON (-want +got):\n%s", diff)
	}
	// encoding/json goes through MarshalJSON (its Marshal would also
	// HTML-escape '<' and '>', hence the Encoder).
	var std strings.Builder
	enc := json.NewEncoder(&std)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want+"\n", std.String()); diff != "" {
		t.Errorf("json.Marshal (-want +got):\n%s", diff)
	}
	// Hand-built values with Go types are written canonically too.
	j.Attributes.User = map[string]any{"f": 2.0, "i": 3, "s": []string{"b\xffc"}, "m": map[string]string{"k": "v"}, "n": json.Number("+07")}
	got, err = j.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"user":{"f":2.0,"i":3,"m":{"k":"v"},"n":7,"s":["b`+"\ufffd"+`c"]}`) {
		t.Errorf("MarshalJSON of Go values = %s", got)
	}
	j.Attributes.User = map[string]any{"bad": math.Inf(1)}
	if _, err := j.MarshalJSON(); err == nil {
		t.Error("MarshalJSON wrote +Inf")
	}
	j.Attributes.User = nil
	deep := Resource{Type: "core", Count: 1}
	for range MaxDepth {
		deep = Resource{Type: "core", Count: 1, With: []Resource{deep}}
	}
	j.Resources = []Resource{deep}
	if _, err := j.MarshalJSON(); err == nil || !strings.Contains(err.Error(), "resources nest deeper than 64 levels") {
		t.Errorf("MarshalJSON of a too deep graph: %v", err)
	}
}

func TestCounts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Counts
	}{
		{name: "minimal", in: minimal, want: Counts{NSlots: 1, NCores: 1, NTasks: 1, CoresPerSlot: 1}},
		{
			name: "exclusive nodes with gpus and total",
			in: edit(`{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}`,
				`{"type":"node","count":3,"exclusive":true,"with":[{"type":"slot","count":2,"label":"task","with":[{"type":"core","count":4},{"type":"gpu","count":1}]}]}`),
			want: Counts{NNodes: 3, NSlots: 6, NCores: 24, NGPUs: 6, NTasks: 6, CoresPerSlot: 4, GPUsPerSlot: 1, Exclusive: true},
		},
		{
			name: "total tasks and duration",
			in:   strings.Replace(edit(`"per_slot":1`, `"total":7`), `"duration":0`, `"duration":90.5`, 1),
			want: Counts{NSlots: 1, NCores: 1, NTasks: 7, CoresPerSlot: 1, Duration: 90.5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, j.Counts()); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
		})
	}
	// A malformed, hand-built jobspec must not make Counts fail.
	for _, j := range []*Jobspec{{}, {Resources: []Resource{{Type: "node", Count: 2}}}, {Resources: []Resource{{Type: "x"}}, Tasks: []Task{{}}}} {
		_ = j.Counts()
	}
}
