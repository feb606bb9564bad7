package fluxq

import (
	"testing"

	"github.com/fluxq/fluxq/internal/eventlog"
)

// TestJobEndCode: the exit status of fluxq run and attach, from the
// job's events: the tasks' code, or 1 for a job a fatal exception ended,
// whether before its tasks or after tasks that succeeded.
func TestJobEndCode(t *testing.T) {
	finish := func(status int) eventlog.Event {
		return eventlog.Event{Name: "finish", Context: map[string]any{"status": float64(status)}}
	}
	exc := func(typ string, sev int) eventlog.Event {
		return eventlog.Event{Name: "exception", Context: map[string]any{"type": typ, "severity": float64(sev), "note": "n"}}
	}
	for _, tc := range []struct {
		name string
		evs  []eventlog.Event
		want int
	}{
		{"success", []eventlog.Event{finish(0)}, 0},
		{"exit 3", []eventlog.Event{finish(3 << 8)}, 3},
		{"killed", []eventlog.Event{exc("cancel", 0), finish(15)}, 143},
		{"canceled before it ran", []eventlog.Event{exc("cancel", 0)}, 1},
		{"lost output after a success", []eventlog.Event{exc("exec", 0), finish(0)}, 1},
		{"lost output after exit 3", []eventlog.Event{exc("exec", 0), finish(3 << 8)}, 3},
		{"a warning only", []eventlog.Event{exc("test", 1), finish(0)}, 0},
	} {
		var end jobEnd
		for _, ev := range tc.evs {
			end.apply(ev)
		}
		if got := end.code(); got != tc.want {
			t.Errorf("%s: code %d, want %d", tc.name, got, tc.want)
		}
	}
}
