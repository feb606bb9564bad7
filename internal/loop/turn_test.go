package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// heldExec is an exec service whose jobs start at once and end only when
// the test says so.
type heldExec struct {
	c       wire.Conn
	started chan fluid.ID
	// onStart, if set, is called when a start request arrives.
	onStart func(fluid.ID)
}

func newHeldExec(c wire.Conn) *heldExec {
	e := &heldExec{c: c, started: make(chan fluid.ID, 64)}
	go e.serve()
	return e
}

func (e *heldExec) serve() {
	hello, _ := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: "job-exec"})
	if e.c.Send(hello) != nil {
		return
	}
	for {
		m, err := e.c.Recv()
		if err != nil {
			return
		}
		if m.Type != wire.Request || m.Topic != execproto.Topic("job-exec", execproto.MethodStart) {
			continue
		}
		s, err := execproto.DecodeStart(m)
		if err != nil {
			return
		}
		if e.onStart != nil {
			e.onStart(s.ID)
		}
		e.respond(s.ID, execproto.TypeStart, nil)
		e.started <- s.ID
	}
}

func (e *heldExec) respond(id fluid.ID, typ string, data any) {
	msg, _ := execproto.NewResponse("job-exec", id, typ, data)
	e.c.Send(msg)
}

// end reports job id finished with status, and its resources released.
func (e *heldExec) end(id fluid.ID, status int) {
	e.respond(id, execproto.TypeFinish, execproto.Finish{Status: status})
	e.respond(id, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
}

// countingConn counts the alloc requests the loop sends the scheduler.
type countingConn struct {
	wire.Conn
	allocs *atomic.Int64
}

func (c countingConn) Send(m wire.Message) error {
	if m.Type == wire.Request && m.Topic == schedproto.TopicAlloc {
		c.allocs.Add(1)
	}
	return c.Conn.Send(m)
}

// syncBuffer is a log destination the loop writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is a loop over a fresh store whose commits fail (as on a full
// filesystem) while fail is set, with the built-in scheduler on two
// cores and a heldExec.
type harness struct {
	st      *store.Store
	jm      *jobmgr.Manager // for settings made before run
	l       *loop.Loop
	exec    *heldExec
	fail    atomic.Bool
	commits atomic.Int64 // commits attempted that wrote something
	// onCommit, if set before Run, is called at each commit attempt.
	onCommit func()
	allocs   atomic.Int64
	log      syncBuffer
	cancel   context.CancelFunc
	done     chan error
	sched    *loop.Peer
	// schedStarts counts the schedulers started (a local one is started
	// again after a failed commit it heard of).
	schedStarts atomic.Int64
	// startCommits are the commits attempted when each job's start
	// request reached the exec service.
	startCommits map[fluid.ID]int64

	mu    sync.Mutex
	conns []wire.Conn
}

// newHarness prepares the loop; run starts it.
func newHarness(t *testing.T) *harness { return newHarnessWith(t, false, 8) }

// newHarnessWith prepares the loop; with local, its scheduler is a local
// peer, as fluxsched runs its own: exchanged with inside turns, and
// started anew at each connect. limit is the scheduler's (0: unlimited).
func newHarnessWith(t *testing.T, local bool, limit int) *harness {
	t.Helper()
	h := &harness{done: make(chan error, 1)}
	st, err := store.Open(t.TempDir()+"/fluxq.db", store.Options{Timeout: time.Second, FailCommit: func() error {
		h.commits.Add(1)
		if h.onCommit != nil {
			h.onCommit()
		}
		if h.fail.Load() {
			return syscall.ENOSPC
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.st = st
	execConn, execEnd := wire.Pipe()
	h.exec = newHeldExec(execEnd)
	h.startCommits = map[fluid.ID]int64{}
	h.exec.onStart = func(id fluid.ID) {
		h.mu.Lock()
		h.startCommits[id] = h.commits.Load()
		h.mu.Unlock()
	}
	h.conns = []wire.Conn{execConn, execEnd}
	startSched := func() wire.Conn {
		schedConn, schedEnd := wire.Pipe()
		go sched.Run(schedEnd, sched.Options{Default: sched.DefaultPolicy(), Limit: limit})
		h.mu.Lock()
		h.conns = append(h.conns, schedConn, schedEnd)
		h.mu.Unlock()
		h.schedStarts.Add(1)
		return countingConn{schedConn, &h.allocs}
	}
	schedPeer := &loop.Peer{Local: true, Connect: func() (wire.Conn, error) { return startSched(), nil }}
	if !local {
		schedPeer = loop.Once(startSched())
	}
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
	jm := jobmgr.New(jobmgr.Config{Inventory: inv, Owner: 100})
	log := slog.New(slog.NewTextHandler(&h.log, nil))
	h.l = loop.New(st, jm, schedPeer, loop.Once(execConn), log)
	h.jm = jm
	h.sched = schedPeer
	t.Cleanup(func() { h.stop(t) })
	return h
}

func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.l.Run(ctx) }()
}

func (h *harness) stop(t *testing.T) {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	if err := <-h.done; err != nil {
		t.Errorf("the loop ended with %v", err)
	}
	h.sched.Close()
	h.mu.Lock()
	for _, c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.st.Close()
}

// submitOp is the operation fluxq submit runs in the loop: n `true` jobs.
func submitOp(t *testing.T, n int) func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	reqs := make([]state.SubmitRequest, n)
	for i := range reqs {
		reqs[i] = state.SubmitRequest{Jobspec: spec, UserID: 100, Owner: true, Urgency: 16}
	}
	return func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := state.Submit(tx, jm.Now(), reqs, nil)
		if err != nil {
			return nil, err
		}
		return ids, jm.Submitted(tx, recs)
	}
}

func activeOp(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.Active(), nil }

func (h *harness) active(t *testing.T) int {
	t.Helper()
	v, err := h.l.Do(context.Background(), activeOp)
	if err != nil {
		t.Fatal(err)
	}
	return v.(int)
}

// record reads a job's record from the store, as the loop last committed it.
func (h *harness) record(t *testing.T, id fluid.ID) *state.Record {
	t.Helper()
	var rec *state.Record
	err := h.st.View(func(tx *store.Tx) (err error) {
		rec, err = state.Load(tx, id)
		return err
	})
	if err != nil {
		t.Fatalf("job %s: %v", id, err)
	}
	return rec
}

// waitStarted returns the next job the exec service was asked to start.
func (h *harness) waitStarted(t *testing.T) fluid.ID {
	t.Helper()
	select {
	case id := <-h.exec.started:
		return id
	case <-time.After(30 * time.Second):
		t.Fatal("no job started within 30s")
		return 0
	}
}

// waitFor waits until job id's stored record satisfies ok.
func (h *harness) waitFor(t *testing.T, id fluid.ID, ok func(*state.Record) bool) *state.Record {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := h.l.JobChanged(id)
		if rec := h.record(t, id); ok(rec) {
			return rec
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("job %s: not as awaited within 30s", id)
		}
	}
}

// waitInactive waits until job id is inactive in the store.
func (h *harness) waitInactive(t *testing.T, id fluid.ID) *state.Record {
	t.Helper()
	return h.waitFor(t, id, func(rec *state.Record) bool { return rec.Job.State == job.Inactive })
}

// The loop's commit rule: a request's reply is sent only once the turn
// that ran it has committed, and a turn whose commit fails answers with
// the store's error, keeps nothing (neither in the store nor in the job
// manager's memory), and tells the scheduler nothing.
func TestRepliesAfterCommit(t *testing.T) {
	h := newHarness(t)
	reply := make(chan loop.Result, 1)
	// The first commit after the operation ran is its turn's: the reply
	// must not be out yet.
	var ran, early atomic.Bool
	h.onCommit = func() {
		if ran.CompareAndSwap(true, false) && len(reply) > 0 {
			early.Store(true)
		}
	}
	submit := submitOp(t, 1)
	op := func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ran.Store(true)
		return submit(tx, jm)
	}
	h.run()

	// A refused commit.
	h.fail.Store(true)
	if err := h.l.Enqueue(context.Background(), loop.Call{Op: op, Reply: reply}); err != nil {
		t.Fatal(err)
	}
	r := <-reply
	var werr *store.WriteError
	if !errors.As(r.Err, &werr) || !store.NoSpace(r.Err) {
		t.Fatalf("submit on a full store: %v, want a *store.WriteError for ENOSPC", r.Err)
	}
	if r.Value != nil {
		t.Errorf("submit on a full store returned %v beside its error", r.Value)
	}
	if n := h.active(t); n != 0 {
		t.Errorf("%d jobs active after a refused commit, want 0", n)
	}
	if err := h.st.View(func(tx *store.Tx) error {
		if id := tx.LastJobID(); id != 0 {
			t.Errorf("last job id %d stored by a refused commit", id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Then one that commits.
	h.fail.Store(false)
	before := h.commits.Load()
	if err := h.l.Enqueue(context.Background(), loop.Call{Op: op, Reply: reply}); err != nil {
		t.Fatal(err)
	}
	r = <-reply
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if h.commits.Load() == before {
		t.Error("the submit was answered with no commit")
	}
	if early.Load() {
		t.Error("a reply was sent before its turn's commit")
	}
	ids := r.Value.([]fluid.ID)
	id := h.waitStarted(t)
	if id != ids[0] {
		t.Fatalf("started %s, want %s", id, ids[0])
	}
	h.exec.end(id, 0)
	h.waitInactive(t, id)
	// One job allocated once: the refused turn sent no alloc request.
	if n := h.allocs.Load(); n != 1 {
		t.Errorf("the scheduler got %d alloc requests, want 1", n)
	}
}

// While the store cannot be written, what the exec service reports is
// kept and handled again until a commit succeeds: the job ends once, its
// finish recorded once. Requests are still answered meanwhile: one that
// only reads gets its value, one that writes gets the store's error. The
// failure is logged once, and the recovery once.
func TestFailedCommitRetried(t *testing.T) {
	h := newHarness(t)
	h.run()
	v, err := h.l.Do(context.Background(), submitOp(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	id := v.([]fluid.ID)[0]
	if got := h.waitStarted(t); got != id {
		t.Fatalf("started %s, want %s", got, id)
	}
	// The start is committed before the test goes on.
	h.waitFor(t, id, func(rec *state.Record) bool { return rec.Job.State == job.Run })

	h.fail.Store(true)
	before := h.commits.Load()
	h.exec.end(id, 0)
	// Wait for the loop to have tried, and failed, more than once.
	for h.commits.Load() < before+2 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.active(t); n != 1 {
		t.Errorf("%d jobs active while the finish cannot be committed, want 1", n)
	}
	if _, err := h.l.Do(context.Background(), submitOp(t, 1)); !store.NoSpace(err) {
		t.Errorf("submit while the store is full: %v, want ENOSPC", err)
	}
	if st := h.record(t, id).Job.State; st != job.Run {
		t.Errorf("job stored as %v while its finish cannot be committed, want %v", st, job.Run)
	}

	h.fail.Store(false)
	rec := h.waitInactive(t, id)
	finishes := 0
	for _, e := range rec.Events {
		if e.Name == "finish" {
			finishes++
		}
	}
	if finishes != 1 || rec.Job.Result != job.Completed {
		t.Errorf("job %s: %d finish events, result %v; want 1, completed", id, finishes, rec.Job.Result)
	}
	if n := h.active(t); n != 0 {
		t.Errorf("%d jobs active after recovery, want 0", n)
	}
	h.stop(t)
	log := h.log.String()
	for _, msg := range []string{"cannot commit: refusing work until the store can be written", "the store can be written again"} {
		if n := strings.Count(log, msg); n != 1 {
			t.Errorf("%q logged %d times, want once:\n%s", msg, n, log)
		}
	}
}

// The requests of one turn run in order, each seeing the store as the
// ones before it left it, listing summaries included (the loop saves them
// before each operation, not only at the end of the turn).
func TestRequestsInOrder(t *testing.T) {
	h := newHarness(t)
	var ids []fluid.ID
	var order []string
	first := make(chan loop.Result, 1)
	second := make(chan loop.Result, 1)
	third := make(chan loop.Result, 1)
	submit := submitOp(t, 2)
	// Queued before the loop runs, so its first turn takes all three.
	reqs := []loop.Call{
		{Op: func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			order = append(order, "submit")
			v, err := submit(tx, jm)
			if err == nil {
				ids = v.([]fluid.ID)
			}
			return v, err
		}, Reply: first},
		{Op: func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			order = append(order, "refuse")
			return nil, errors.New("refused")
		}, Reply: second},
		{Op: func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			order = append(order, "read")
			// How many stored summaries say what the eventlogs do.
			n := 0
			for _, id := range ids {
				rec, err := state.Load(tx, id)
				if err != nil {
					return nil, err
				}
				raw, err := tx.JobValue(uint64(id), store.JobSummary)
				if err != nil {
					return nil, err
				}
				var got state.Summary
				if err := json.Unmarshal(raw, &got); err != nil {
					return nil, err
				}
				if cmp.Equal(*state.Summarize(rec), got) {
					n++
				}
			}
			return n, nil
		}, Reply: third},
	}
	for _, r := range reqs {
		if err := h.l.Enqueue(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	// Each commit notes how many of the operations had run by then.
	var seen []int
	h.onCommit = func() { seen = append(seen, len(order)) }
	h.run()
	r1, r2, r3 := <-first, <-second, <-third
	if r1.Err != nil || r3.Err != nil {
		t.Fatalf("submit: %v; read: %v", r1.Err, r3.Err)
	}
	if r2.Err == nil || r2.Err.Error() != "refused" {
		t.Errorf("the refused request got %v, want its own error", r2.Err)
	}
	if got := strings.Join(order, ","); got != "submit,refuse,read" {
		t.Errorf("operations ran in the order %s", got)
	}
	if n := r3.Value.(int); n != len(ids) || n != 2 {
		t.Errorf("the last request saw %d summaries up to date of the first one's %d jobs", n, len(ids))
	}
	// A refused request does not undo the turn: the jobs are stored.
	for _, id := range ids {
		h.record(t, id)
	}
	// One turn, one commit for the three: no commit saw some of them run
	// and not the others.
	h.stop(t)
	for _, n := range seen {
		if n != 0 && n != 3 {
			t.Errorf("a commit came after %d of the three operations queued together; commits saw %v", n, seen)
		}
	}
}

// JobChanged wakes a follower of one job only for that job's events;
// Changed wakes on any job's.
func TestJobChanged(t *testing.T) {
	h := newHarness(t)
	h.run()
	v, err := h.l.Do(context.Background(), submitOp(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	ids := v.([]fluid.ID)
	started := map[fluid.ID]bool{h.waitStarted(t): true, h.waitStarted(t): true}
	if !started[ids[0]] || !started[ids[1]] {
		t.Fatalf("started %v, want %v", started, ids)
	}
	// Both have started (the exec service's start event is recorded).
	for _, id := range ids {
		h.waitFor(t, id, func(rec *state.Record) bool { return hasEvent(rec, "start") })
	}
	first, second, anyJob := h.l.JobChanged(ids[0]), h.l.JobChanged(ids[1]), h.l.Changed()
	h.exec.end(ids[0], 0)
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("the follower of the ending job was not woken")
	}
	select {
	case <-anyJob:
	default:
		t.Error("Changed was not closed by a turn that posted events")
	}
	h.waitInactive(t, ids[0])
	select {
	case <-second:
		t.Errorf("the follower of %s was woken by %s's events", ids[1], ids[0])
	default:
	}
	h.exec.end(ids[1], 1)
	if rec := h.waitInactive(t, ids[1]); rec.Job.Result != job.Failed {
		t.Errorf("job with status 1: result %v, want failed", rec.Job.Result)
	}
}

func hasEvent(rec *state.Record, name string) bool {
	for _, e := range rec.Events {
		if e.Name == name {
			return true
		}
	}
	return false
}

// A job whose begin time falls due with nothing else happening is woken
// by the loop's own timer.
func TestBeginTimeWakes(t *testing.T) {
	h := newHarness(t)
	h.run()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp",
		BeginTime: float64(time.Now().Add(300*time.Millisecond).UnixNano()) / 1e9})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	v, err := h.l.Do(context.Background(), func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := state.Submit(tx, jm.Now(), []state.SubmitRequest{{Jobspec: spec, UserID: 100, Owner: true, Urgency: 16}}, nil)
		if err != nil {
			return nil, err
		}
		return ids, jm.Submitted(tx, recs)
	})
	if err != nil {
		t.Fatal(err)
	}
	id := v.([]fluid.ID)[0]
	if st := h.record(t, id).Job.State; st != job.Depend {
		t.Fatalf("job with a begin time ahead: %v, want %v", st, job.Depend)
	}
	if got := h.waitStarted(t); got != id {
		t.Fatalf("started %s, want %s", got, id)
	}
	h.exec.end(id, 0)
	h.waitInactive(t, id)
}

// Submit and Do give up when their context ends, whether or not the loop
// runs.
func TestDoContextEnds(t *testing.T) {
	h := newHarness(t)
	// A full queue: Submit waits, until its context ends.
	for i := 0; i < loop.MaxBatch; i++ {
		if err := h.l.Enqueue(context.Background(), loop.Call{Op: activeOp}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.l.Do(ctx, activeOp); !errors.Is(err, context.Canceled) {
		t.Errorf("Do with an ended context: %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.l.Enqueue(ctx, loop.Call{Op: activeOp}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Submit to a full queue: %v, want context.DeadlineExceeded", err)
	}
	// The loop then answers them all.
	h.run()
	if n := h.active(t); n != 0 {
		t.Errorf("%d active, want 0", n)
	}
}

// TestFullStoreLoggedOnce: while the store cannot be written, turns that
// write nothing (a read in the loop, a request that needs no write) go on
// succeeding, for they commit nothing. They are no sign that the store
// can be written again: the failure is logged once, and the recovery once,
// when a turn that wrote has committed (issue 24: on a full disk the
// recovery was logged 141 times, each before another failure).
func TestFullStoreLoggedOnce(t *testing.T) {
	h := newHarness(t)
	h.run()
	read := func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, nil }
	h.fail.Store(true)
	for i := 0; i < 5; i++ {
		if _, err := h.l.Do(context.Background(), submitOp(t, 1)); !store.NoSpace(err) {
			t.Fatalf("submit while the store is full: %v, want ENOSPC", err)
		}
		if _, err := h.l.Do(context.Background(), read); err != nil {
			t.Fatalf("a read while the store is full: %v", err)
		}
	}
	if n := strings.Count(h.log.String(), "the store can be written again"); n != 0 {
		t.Errorf("recovery logged %d times while every write failed:\n%s", n, h.log.String())
	}
	h.fail.Store(false)
	if _, err := h.l.Do(context.Background(), read); err != nil {
		t.Fatal(err)
	}
	if _, err := h.l.Do(context.Background(), submitOp(t, 1)); err != nil {
		t.Fatalf("submit once the store can be written: %v", err)
	}
	h.stop(t)
	log := h.log.String()
	for _, msg := range []string{"cannot commit: refusing work until the store can be written", "the store can be written again"} {
		if n := strings.Count(log, msg); n != 1 {
			t.Errorf("%q logged %d times, want once:\n%s", msg, n, log)
		}
	}
}
