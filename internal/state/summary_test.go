package state

import (
	"testing"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/job"
)

// A summary's returncode is Flux's (flux jobs' returncode), the same as
// fluxq jobs --json prints: 128+N for tasks killed by signal N (what
// Flux's job shell exits with: 143 canceled, 142 timed out), -128 for a
// job canceled before it ran, 1 for one denied before it ran. Its
// waitstatus is there only once the tasks finished.
func TestSummaryReturnCodeIsFlux(t *testing.T) {
	e := func(ts float64, name string, kv ...any) eventlog.Event {
		ev := eventlog.Event{Timestamp: ts, Name: name}
		if len(kv) > 0 {
			ev.Context = map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				ev.Context[kv[i].(string)] = kv[i+1]
			}
		}
		return ev
	}
	pending := []eventlog.Event{
		e(1, "submit", "urgency", 16, "userid", 1000, "flags", 0, "version", 1),
		e(2, "validate"), e(3, "depend"), e(4, "priority", "priority", 16),
	}
	ran := func(status int) []eventlog.Event {
		return append(append([]eventlog.Event{}, pending...),
			e(5, "alloc"), e(6, "start"), e(7, "finish", "status", status),
			e(8, "release", "ranks", "all", "final", true), e(9, "free"), e(10, "clean"))
	}
	none := -1000
	for _, tc := range []struct {
		name   string
		events []eventlog.Event
		rc, ws int // none: absent
	}{
		{"exit 0", ran(job.WaitStatusExited(0)), 0, 0},
		{"exit 3", ran(job.WaitStatusExited(3)), 3, 3 << 8},
		{"killed by SIGKILL", ran(job.WaitStatusSignaled(9)), 137, 9},
		{"killed by SIGTERM (a cancel)", ran(job.WaitStatusSignaled(15)), 143, 15},
		{"killed by SIGALRM (the time limit)", ran(job.WaitStatusSignaled(14)), 142, 14},
		{"canceled while pending", append(append([]eventlog.Event{}, pending...),
			e(5, "exception", "type", "cancel", "severity", 0, "note", "", "userid", 1000), e(6, "clean")), -128, none},
		{"denied", append(append([]eventlog.Event{}, pending...),
			e(5, "exception", "type", "alloc", "severity", 0, "note", "unsatisfiable"), e(6, "clean")), 1, none},
		{"pending", pending, none, none},
	} {
		j, err := job.Replay(1, tc.events)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := Summarize(&Record{Job: j})
		rc, ws := none, none
		if s.ReturnCode != nil {
			rc = *s.ReturnCode
		}
		if s.WaitStatus != nil {
			ws = *s.WaitStatus
		}
		if rc != tc.rc || ws != tc.ws {
			t.Errorf("%s: returncode %d, waitstatus %d; want %d, %d (%d: absent)", tc.name, rc, ws, tc.rc, tc.ws, none)
		}
	}
}
