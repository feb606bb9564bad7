package jobmgr_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// ActiveOf, which [access] guest-max-active-jobs is checked against, counts
// a user's active jobs as they come and go: up at a submission, down when
// a job ends, unchanged by a turn whose commit failed (Restore), and
// counted again from the store at a restart (Load).
func TestActiveOf(t *testing.T) {
	var full atomic.Bool
	h := newFullHarness(t, &full)
	h.start()
	active := func(uid uint32) int {
		t.Helper()
		return h.do(func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.ActiveOf(uid), nil }).(int)
	}
	a := h.submit(16)
	h.submit(16)
	h.submit(16)
	if n := active(100); n != 3 {
		t.Fatalf("after 3 submissions ActiveOf = %d, want 3", n)
	}
	if n := active(101); n != 0 {
		t.Fatalf("another user's ActiveOf = %d, want 0", n)
	}
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Cancel(tx, a, 100, "") })
	if n := active(100); n != 2 {
		t.Fatalf("after a cancel ActiveOf = %d, want 2", n)
	}

	// A submission whose turn cannot commit leaves the count as it was.
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := js.MarshalJSON()
	full.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = h.l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		_, recs, err := ops.Submit(tx, time.Now(), []ops.SubmitRequest{{Jobspec: b, UserID: 100, Urgency: 16}, {Jobspec: b, UserID: 100, Urgency: 16}}, nil)
		if err != nil {
			return nil, err
		}
		return nil, jm.Submitted(tx, recs)
	})
	if err == nil {
		t.Fatal("a submission on a full store was committed")
	}
	full.Store(false)
	if n := active(100); n != 2 {
		t.Fatalf("after a refused turn ActiveOf = %d, want 2", n)
	}

	h.stop()
	h.start()
	if n := active(100); n != 2 {
		t.Fatalf("after a restart ActiveOf = %d, want 2", n)
	}
}

// A non-fatal exception the exec service reports again (an agent taking
// the job back after a restart reports all its exceptions) is posted
// once; another note is posted, and the job runs on.
func TestNoteOnce(t *testing.T) {
	h := newHarness(t)
	id := h.startedJob()
	h.execRespond(id, execproto.TypeStart, nil)
	note := execproto.Exception{Type: "output", Severity: 1, Note: "stdout: output.limit of 1k reached: the rest of the job's stdout is dropped"}
	h.execRespond(id, execproto.TypeException, note)
	h.execRespond(id, execproto.TypeException, note)
	other := note
	other.Note = "stderr: output.limit of 1k reached: the rest of the job's stderr is dropped"
	h.execRespond(id, execproto.TypeException, other)
	h.execRespond(id, execproto.TypeException, note)
	h.finishJob(id, 0)
	h.expectFree(id)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "exception", "exception", "finish", "release", "free", "clean")
	if r := h.record(id).Summary.Result; r != job.Completed {
		t.Errorf("result = %q, want COMPLETED", r)
	}
}
