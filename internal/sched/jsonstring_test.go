package sched

import (
	"testing"

	json "github.com/goccy/go-json"
)

// TestAppendJSONString holds the plain path to what encoding gives.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "rank[0-3]/core[0-1]", "rank0/core0,gpu1", `a"b`, `a\b`, "<&>", "tab\t", "é", "\x7f"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
}
