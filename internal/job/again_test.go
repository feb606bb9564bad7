package job

import (
	"testing"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
)

// TestAgainContext reads the submit context's again_of and retry, and
// the memo's retried_as; a malformed one refuses the submit event.
func TestAgainContext(t *testing.T) {
	const prev = fluid.ID(1 << 24)
	for _, tc := range []struct {
		name    string
		ctx     []any
		againOf fluid.ID
		retry   int
		refused bool
	}{
		{"neither", nil, 0, 0, false},
		{"resubmitted", []any{"again_of", prev.String()}, prev, 0, false},
		{"a retry", []any{"again_of", prev.String(), "retry", 2}, prev, 2, false},
		{"a retry of nothing", []any{"retry", 1}, 0, 0, true},
		{"retry 0", []any{"again_of", prev.String(), "retry", 0}, 0, 0, true},
		{"not an id", []any{"again_of", "nosuch"}, 0, 0, true},
		{"a number", []any{"again_of", 5}, 0, 0, true},
		{"id 0", []any{"again_of", fluid.ID(0).String()}, 0, 0, true},
	} {
		args := append([]any{"urgency", 16, "userid", 1000, "flags", 0}, tc.ctx...)
		j, err := Replay(7, []eventlog.Event{ev(1, "submit", args...)})
		if (err != nil) != tc.refused {
			t.Errorf("%s: err = %v, refused %v", tc.name, err, tc.refused)
			continue
		}
		if err == nil && (j.AgainOf != tc.againOf || j.Retry != tc.retry) {
			t.Errorf("%s: again_of %s retry %d; want %s, %d", tc.name, j.AgainOf, j.Retry, tc.againOf, tc.retry)
		}
	}
	j, err := Replay(7, cat(submitted(), []eventlog.Event{ev(5, "memo", MemoRetriedAs, prev.String())}))
	if err != nil || j.RetriedAs() != prev {
		t.Errorf("retried_as memo: %v, %v", j, err)
	}
}
