package daemon

import "testing"

// [policy.scheduler] reaches a scheduler command as one JSON object,
// {} when there is none.
func TestSchedParams(t *testing.T) {
	tests := []struct {
		name  string
		table map[string]any
		want  string
	}{
		{"absent", nil, `{}`},
		{"empty", map[string]any{}, `{}`},
		{"keys", map[string]any{"queue-depth": int64(4), "site-knob": "fast", "nested": map[string]any{"a": []any{true}}},
			`{"nested":{"a":[true]},"queue-depth":4,"site-knob":"fast"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schedParams(tc.table)
			if err != nil || got != tc.want {
				t.Errorf("schedParams = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}
