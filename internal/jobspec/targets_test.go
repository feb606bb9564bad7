package jobspec

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Node-reservation specification, "Spawn targeting behavior": absent means
// the default session; otherwise the job may map onto the union of the
// named sessions, "default" naming the default pool.
func TestTargets(t *testing.T) {
	const shape = "attributes.system.targets must be a non-empty array of allocation ids"
	tests := []struct {
		name    string
		extra   map[string]any // attributes.system extra keys; nil for none
		want    []string
		wantErr string
	}{
		{name: "absent", extra: nil, want: nil},
		{name: "other keys only", extra: map[string]any{"note": "x"}, want: nil},
		{name: "one reservation", extra: map[string]any{"targets": []any{"r1"}}, want: []string{"r1"}},
		{name: "union keeps order", extra: map[string]any{"targets": []any{"r2", "default", "r1"}}, want: []string{"r2", "default", "r1"}},
		{name: "default alone", extra: map[string]any{"targets": []any{"default"}}, want: []string{"default"}},
		{name: "go string slice", extra: map[string]any{"targets": []string{"r1", "r3"}}, want: []string{"r1", "r3"}},
		{name: "empty array", extra: map[string]any{"targets": []any{}}, wantErr: shape},
		{name: "empty string slice", extra: map[string]any{"targets": []string{}}, wantErr: shape},
		{name: "string, not array", extra: map[string]any{"targets": "r1"}, wantErr: shape},
		{name: "object", extra: map[string]any{"targets": map[string]any{"r1": true}}, wantErr: shape},
		{name: "null", extra: map[string]any{"targets": nil}, wantErr: shape},
		{name: "number entry", extra: map[string]any{"targets": []any{"r1", json.Number("2")}},
			wantErr: "attributes.system.targets[1] must be a non-empty string of printable characters without spaces"},
		{name: "empty entry", extra: map[string]any{"targets": []any{""}},
			wantErr: "attributes.system.targets[0] must be a non-empty string of printable characters without spaces"},
		{name: "newline in entry", extra: map[string]any{"targets": []any{"r1\nr2"}},
			wantErr: "attributes.system.targets[0] must be a non-empty string of printable characters without spaces"},
		{name: "space in entry", extra: map[string]any{"targets": []any{"r 1"}},
			wantErr: "attributes.system.targets[0] must be a non-empty string of printable characters without spaces"},
		{name: "duplicate", extra: map[string]any{"targets": []any{"r1", "default", "r1"}},
			wantErr: `attributes.system.targets names "r1" twice`},
		{name: "duplicate default", extra: map[string]any{"targets": []any{"default", "default"}},
			wantErr: `attributes.system.targets names "default" twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := &Jobspec{Attributes: Attributes{System: System{Extra: tc.extra}}}
			got, err := js.Targets()
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

// What Parse stores for the key (a []any of string) is what Targets reads,
// from JSON and YAML alike.
func TestTargetsParsed(t *testing.T) {
	js, err := FromOptions(Options{Command: []string{"true"}, Extra: map[string]any{TargetsKey: []string{"r4", DefaultSession}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	yaml := []byte(`version: 1
resources: [{type: slot, count: 1, label: task, with: [{type: core, count: 1}]}]
tasks: [{command: ["true"], slot: task, count: {per_slot: 1}}]
attributes: {system: {duration: 0, targets: [r4, default]}}
`)
	for name, data := range map[string][]byte{"json": raw, "yaml": yaml} {
		parsed, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := parsed.Targets()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff([]string{"r4", "default"}, got); diff != "" {
			t.Errorf("%s: targets (-want +got):\n%s", name, diff)
		}
	}
	var nilSpec *Jobspec
	if got, err := nilSpec.Targets(); got != nil || err != nil {
		t.Errorf("nil jobspec: %v, %v", got, err)
	}
}
