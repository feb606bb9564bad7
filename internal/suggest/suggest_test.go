package suggest

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	tests := []struct {
		typed      string
		candidates []string
		want       []string
	}{
		{"quues", []string{"resource", "queues", "policy"}, []string{"queues"}},
		{"ntaks", []string{"ntasks", "nodes", "name"}, []string{"ntasks"}},
		{"sumbit", []string{"submit", "run"}, []string{"submit"}},
		{"x", []string{"y", "z"}, nil},
		{"queues", []string{"queues"}, nil},
		{"polcy", []string{"policy", "match-policy"}, []string{"policy"}},
	}
	for _, tt := range tests {
		if got := Names(tt.typed, tt.candidates); !slices.Equal(got, tt.want) {
			t.Errorf("Names(%q, %q) = %q, want %q", tt.typed, tt.candidates, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"sumbit", "submit", 1}, {"quues", "queues", 1}, {"abc", "abc", 0}} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
