package jobmgr_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/schedproto"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// newFullHarness is a harness whose store fails every commit, as a full
// filesystem does, while *full is set.
func newFullHarness(t *testing.T, full *atomic.Bool) *harness {
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "fluxq.db"), inv: inventory()}
	st, err := store.Open(h.path, store.Options{Timeout: 10 * time.Second, FailCommit: func() error {
		if full.Load() {
			return syscall.ENOSPC
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.st = st
	return h
}

// stored reads a job's event names from the store itself, beside the
// loop, which answers nothing that needs a commit while the store is full.
func stored(t *testing.T, h *harness, id fluid.ID) []string {
	t.Helper()
	var names []string
	err := h.st.View(func(tx *store.Tx) error {
		rec, err := ops.Load(tx, id)
		if err != nil {
			return err
		}
		for _, e := range rec.Events {
			names = append(names, e.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A commit that fails (a full filesystem) refuses the turn as a whole and
// the loop keeps running: a request gets the store's error, naming the
// file, as a no-space error; what the scheduler and the exec service said
// in that turn is neither lost nor applied twice, but handled once the
// store can be written again; and the job manager, put back as it was
// before the turn, still takes those messages as answers to its requests.
func TestFullStoreRefusesTurn(t *testing.T) {
	var full atomic.Bool
	h := newFullHarness(t, &full)
	h.start()
	id := h.submit(16)
	h.handshake(limited8)
	h.execHello()
	h.expectAlloc(id)
	pending := []string{"submit", "validate", "depend", "priority"}

	// The allocation arrives while the store is full.
	full.Store(true)
	h.succeed(id)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		return nil, jm.Cancel(tx, id, 100, "")
	})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "cannot write the store "+h.path+": no space left on device") {
		t.Fatalf("request on a full store: err = %v, want the store's no-space error naming %s", err, h.path)
	}
	time.Sleep(600 * time.Millisecond) // a retry or two, still full
	if got := stored(t, h, id); !cmp.Equal(got, pending) {
		t.Fatalf("eventlog while full = %v, want %v", got, pending)
	}
	select {
	case m := <-h.exec.msgs:
		t.Fatalf("exec service got %s %s before the alloc was committed", m.Topic, m.Type)
	case err := <-h.done:
		t.Fatalf("loop ended on a full store: %v", err)
	default:
	}

	// Space returns: the allocation is kept, once, and the job starts.
	full.Store(false)
	h.expectStart(id, false)
	h.execRespond(id, execproto.TypeStart, nil)
	wantEvents(t, h, id, append(pending, "alloc", "start")...)

	// The job ends while the store is full again: its finish and release
	// wait, and are kept once space returns.
	full.Store(true)
	h.finishJob(id, 0)
	time.Sleep(600 * time.Millisecond)
	if got := stored(t, h, id); !cmp.Equal(got, append(pending, "alloc", "start")) {
		t.Fatalf("eventlog while full = %v", got)
	}
	full.Store(false)
	h.expectFree(id)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
	if r := h.record(id).Summary.Result; r != job.Completed {
		t.Errorf("result = %q, want COMPLETED", r)
	}
	h.sched.quiet(h)
	h.exec.quiet(h)
}

// Saving and restoring the job manager around a failed turn leaves it as
// it was, even when the turn submitted, allocated and ended jobs.
func TestRestoreUndoesTurn(t *testing.T) {
	var full atomic.Bool
	h := newFullHarness(t, &full)
	h.start()
	a := h.submit(16)
	h.handshake(schedproto.Ready{Mode: schedproto.ModeUnlimited})
	h.execHello()
	h.expectAlloc(a)
	before := h.do(func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.Counts(nil), nil })

	full.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One failed turn: a new job, and the first one canceled.
	_, err := h.l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}})
		if err != nil {
			return nil, err
		}
		b, _ := js.MarshalJSON()
		_, recs, err := ops.Submit(tx, time.Now(), []ops.SubmitRequest{{Jobspec: b, UserID: 100, Urgency: 16}}, nil)
		if err != nil {
			return nil, err
		}
		if err := jm.Submitted(tx, recs); err != nil {
			return nil, err
		}
		return nil, jm.Cancel(tx, a, 100, "")
	})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	full.Store(false)
	after := h.do(func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.Counts(nil), nil })
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("counts after a refused turn (-before +after):\n%s", diff)
	}
	// The cancel never happened: the request is still the scheduler's.
	h.sched.quiet(h)
	h.succeed(a)
	h.expectStart(a, false)
}

// retryDo runs a request until a turn commits it, as a user would after
// a no-space error.
func retryDo(t *testing.T, h *harness, op func(*store.Tx, *jobmgr.Manager) (any, error)) any {
	t.Helper()
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		v, err := h.l.Do(ctx, op)
		cancel()
		if err == nil {
			return v
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatal(err)
		}
	}
	t.Fatal("no turn committed in 100 tries")
	return nil
}

func retrySubmit(t *testing.T, h *harness, deps ...jobspec.Dependency) fluid.ID {
	t.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	js.Attributes.System.Dependencies = deps
	b, _ := js.MarshalJSON()
	return retryDo(t, h, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := ops.Submit(tx, time.Now(), []ops.SubmitRequest{{Jobspec: b, UserID: 100, Urgency: 16}}, nil)
		if err != nil {
			return nil, err
		}
		return ids[0], jm.Submitted(tx, recs)
	}).(fluid.ID)
}

// Every turn's first commit fails: each is restored (and checked against
// a full copy of the manager: jobmgr.VerifyRestore) and done again, and
// two jobs, one depending on the other, still go their whole way, every
// event once, every message to a peer once.
func TestEveryTurnFailsOnce(t *testing.T) {
	jobmgr.VerifyRestore(true)
	defer jobmgr.VerifyRestore(false)
	var flaky atomic.Bool
	var n atomic.Int64
	var full atomic.Bool
	h := newFullHarness(t, &full)
	// Fail every other commit, from the first one a turn tries.
	st, err := store.Open(h.path+"2", store.Options{Timeout: 10 * time.Second, FailCommit: func() error {
		if flaky.Load() && n.Add(1)%2 == 1 {
			return syscall.ENOSPC
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.st.Close()
	h.st, h.path = st, h.path+"2"
	h.start()
	h.do(func(*store.Tx, *jobmgr.Manager) (any, error) { return nil, nil }) // loaded
	flaky.Store(true)
	a := retrySubmit(t, h)
	b := retrySubmit(t, h, jobspec.Dependency{Scheme: "afterok", Value: a.String()})
	h.handshake(schedproto.Ready{Mode: schedproto.ModeUnlimited})
	h.execHello()
	h.expectAlloc(a)
	h.succeed(a)
	h.expectStart(a, false)
	h.execRespond(a, execproto.TypeStart, nil)
	h.finishJob(a, 0)
	h.expectFree(a)
	h.expectAlloc(b)
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: b, Type: schedproto.Deny, Note: "no"})
	all := []string{"submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean"}
	deadline := time.Now().Add(30 * time.Second)
	for !cmp.Equal(stored(t, h, a), all) || len(stored(t, h, b)) < 8 {
		if time.Now().After(deadline) {
			t.Fatalf("eventlogs: %v; %v", stored(t, h, a), stored(t, h, b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, want := stored(t, h, b), []string{"submit", "validate", "dependency-add", "dependency-remove", "depend", "priority", "exception", "clean"}; !cmp.Equal(got, want) {
		t.Errorf("eventlog of the dependent job (-want +got):\n%s", cmp.Diff(want, got))
	}
	if n.Load() < 10 {
		t.Errorf("only %d commits were tried", n.Load())
	}
	flaky.Store(false)
	h.sched.quiet(h)
	h.exec.quiet(h)
}
