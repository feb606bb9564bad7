package jobmgr_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

func updates(kv ...string) []api.JobUpdate {
	var out []api.JobUpdate
	for i := 0; i < len(kv); i += 2 {
		out = append(out, api.JobUpdate{Key: kv[i], Value: json.RawMessage(kv[i+1])})
	}
	return out
}

// RFC 27: a job whose request is at the scheduler is asked for again
// after an update: sched.cancel, and once the scheduler answers CANCEL a
// new sched.alloc carrying the updated jobspec. A dry run sends nothing.
func TestUpdateAsksAgain(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	h.handshake(limited8)
	h.expectAlloc(id)
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		return jm.Update(tx, id, 100, updates("duration", `60`), true)
	})
	h.sched.quiet(h)
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		return jm.Update(tx, id, 100, updates("duration", `60`, "name", `"renamed"`), false)
	})
	c, err := schedproto.DecodeJobID(h.sched.expect(schedproto.TopicCancel, wire.Request))
	if err != nil || c.ID != id {
		t.Fatalf("sched.cancel = %+v, %v; want %s", c, err, id)
	}
	h.sched.quiet(h)
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Cancel})
	a := h.expectAlloc(id)
	if js := string(a.Jobspec); !strings.Contains(js, `"duration":60`) || !strings.Contains(js, `"name":"renamed"`) {
		t.Errorf("alloc jobspec = %s", js)
	}
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "jobspec-update")
	if got := h.record(id).Spec.Name; got != "renamed" {
		t.Errorf("stored name = %q", got)
	}
}

// A running job's duration: R's expiration moves, with a resource-update
// event, and the exec service is told (job-exec.expiration).
func TestUpdateRunningDuration(t *testing.T) {
	h := newHarness(t)
	id := h.startedJob()
	h.execRespond(id, execproto.TypeStart, nil)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start")
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		return jm.Update(tx, id, 100, updates("duration", `"1h"`), false)
	})
	e, err := execproto.DecodeExpiration(h.exec.expect("job-exec.expiration", wire.Request))
	// allocR starts at 1 (seconds since the epoch).
	if err != nil || e.ID != id || e.Expiration != 3601 {
		t.Fatalf("expiration = %+v, %v; want %s at 3601", e, err, id)
	}
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "jobspec-update", "resource-update")
	if got := h.record(id).R.Expiration(); got != 3601 {
		t.Errorf("stored R expires at %v", got)
	}
	// Anything else of a running job is refused, and changes nothing.
	_, err = h.l.Do(t.Context(), func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		return jm.Update(tx, id, 100, updates("duration", `"2h"`, "queue", `"batch"`), false)
	})
	if err == nil || !strings.Contains(err.Error(), "only the duration of a running job may be updated") {
		t.Errorf("queue of a running job: %v", err)
	}
	h.exec.quiet(h)
}
