package sim

import (
	"encoding/json"
	"testing"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	jobstate "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/state"
)

// The sink keeps what the job manager reads back while a job is active,
// and after it only a never-started job's exception note.
func TestSinkKeeps(t *testing.T) {
	ev := func(name string, ctx map[string]any) eventlog.Event {
		return eventlog.Event{Timestamp: 1, Name: name, Context: ctx}
	}
	submit := []eventlog.Event{ev(jobstate.EventSubmit, map[string]any{"urgency": 16, "userid": 1, "flags": 0, "version": 1}), ev(jobstate.EventValidate, nil), ev(jobstate.EventDepend, nil), ev(jobstate.EventPriority, map[string]any{"priority": 16})}
	deny := ev(jobstate.EventException, map[string]any{"type": "alloc", "severity": 0, "note": "unsatisfiable"})
	note := ev(jobstate.EventException, map[string]any{"type": "exec", "severity": 1, "note": "output truncated"})
	for _, c := range []struct {
		name     string
		events   []eventlog.Event
		jobspec  bool   // still held
		nonfatal bool   // HasException of note
		deny     string // the note kept
	}{
		{"queued", nil, true, false, ""},
		{"denied", []eventlog.Event{deny}, true, false, "unsatisfiable"},
		{"denied and clean", []eventlog.Event{deny, ev(jobstate.EventClean, nil)}, false, false, "unsatisfiable"},
		{"started with a note", []eventlog.Event{ev(jobstate.EventAlloc, nil), ev(jobstate.EventStart, nil), note}, true, true, ""},
		{"started, note, clean", []eventlog.Event{ev(jobstate.EventAlloc, nil), ev(jobstate.EventStart, nil), note, ev(jobstate.EventFinish, map[string]any{"status": 0}), ev(jobstate.EventRelease, map[string]any{"ranks": "all", "final": true}), ev(jobstate.EventFree, nil), ev(jobstate.EventClean, nil)}, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newSink()
			id := fluid.ID(42)
			rec := &state.Record{Job: &jobstate.Job{ID: id}, Raw: json.RawMessage(`{"version":1}`)}
			k.submitted([]*state.Record{rec})
			for _, e := range append(append([]eventlog.Event(nil), submit...), c.events...) {
				if err := k.Append(nil, rec, e); err != nil {
					t.Fatalf("%s: %v", e.Name, err)
				}
			}
			_, err := k.Jobspec(nil, rec)
			if held := err == nil; held != c.jobspec {
				t.Errorf("jobspec held %v, want %v", held, c.jobspec)
			}
			if dup, _ := k.HasException(nil, id, "exec", 1, "output truncated"); dup != c.nonfatal {
				t.Errorf("HasException %v, want %v", dup, c.nonfatal)
			}
			if got := k.notes[id]; got != c.deny {
				t.Errorf("note %q, want %q", got, c.deny)
			}
		})
	}
}
