package shell

import "testing"

func TestInputPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts map[string]any
		cwd  string
		want string
	}{
		{"none", map[string]any{}, "/w", ""},
		{"absolute", map[string]any{"input": InputOptions("/data/in")}, "/w", "/data/in"},
		{"relative to cwd", map[string]any{"input": InputOptions("in")}, "/w", "/w/in"},
		{"no cwd", map[string]any{"input": InputOptions("in")}, "", "in"},
		// flux-shell's other input types (the KVS, its service) are
		// not files.
		{"not a file", map[string]any{"input": map[string]any{"stdin": map[string]any{"type": "service", "path": "x"}}}, "/w", ""},
		{"malformed", map[string]any{"input": "in"}, "/w", ""},
	} {
		if got := InputPath(tc.opts, tc.cwd); got != tc.want {
			t.Errorf("%s: InputPath = %q, want %q", tc.name, got, tc.want)
		}
	}
}
