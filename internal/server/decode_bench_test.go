package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
)

// BenchmarkDecodeSubmit decodes the parameters of a submission of 1,000
// jobs whose jobspecs carry an environment of 30 variables (2 KB each),
// as fluxq submit --cc 1-1000 sends them.
func BenchmarkDecodeSubmit(b *testing.B) {
	env := map[string]string{}
	for i := range 30 {
		env["VAR_"+strings.Repeat("x", i)] = strings.Repeat("v", 40)
	}
	js, err := json.Marshal(map[string]any{
		"version":    1,
		"resources":  []any{map[string]any{"type": "slot", "count": 1, "label": "task", "with": []any{map[string]any{"type": "core", "count": 1}}}},
		"tasks":      []any{map[string]any{"command": []string{"true"}, "slot": "task", "count": map[string]any{"per_slot": 1}}},
		"attributes": map[string]any{"system": map[string]any{"environment": env, "cwd": "/tmp"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	var p api.SubmitParams
	for range 1000 {
		p.Jobs = append(p.Jobs, api.SubmitJob{Jobspec: js, Urgency: 16})
	}
	raw, err := json.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		var got api.SubmitParams
		if err := decode(api.Submit.Name, raw, &got); err != nil {
			b.Fatal(err)
		}
		if len(got.Jobs) != 1000 || string(got.Jobs[999].Jobspec) != string(js) {
			b.Fatalf("decoded %d jobs", len(got.Jobs))
		}
	}
}
