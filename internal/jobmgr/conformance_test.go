package jobmgr_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// peer is the test's side of a conversation with the job manager, over
// the JSON-lines transport a --sched-cmd scheduler would use.
type peer struct {
	t    *testing.T
	name string
	c    wire.Conn
	msgs chan wire.Message
	// acks are the exec service's ack notifications, set aside from
	// msgs: they follow commits, not the RFC 32 exchange tests follow.
	acks chan execproto.Ack
}

func linePair(t *testing.T, name string) (jm wire.Conn, p *peer) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	d := &delivery{Conn: wire.NewLineConn(ar, aw, aw.Close)}
	jm = d
	c := &sender{Conn: wire.NewLineConn(br, bw, bw.Close), d: d}
	p = &peer{t: t, name: name, c: c, msgs: make(chan wire.Message, 1024), acks: make(chan execproto.Ack, 1024)}
	go func() {
		for {
			m, err := c.Recv()
			if err != nil {
				close(p.msgs)
				return
			}
			if m.Type == wire.Request && m.Topic == execproto.Topic("job-exec", execproto.MethodAck) {
				if a, err := execproto.DecodeAck(m); err == nil {
					p.acks <- a
					continue
				}
			}
			p.msgs <- m
		}
	}()
	return jm, p
}

// delivery is the job manager's side of a pair, counting its receives:
// the loop's reader asks for message n+1 only once message n is queued
// for the loop, so a receive begun after n sends means all n are there.
type delivery struct {
	wire.Conn
	mu    sync.Mutex
	recvs int
}

func (d *delivery) Recv() (wire.Message, error) {
	d.mu.Lock()
	d.recvs++
	d.mu.Unlock()
	return d.Conn.Recv()
}

// sender is the test's side of a pair: Send returns once the loop holds
// the message, so a request the test makes next (h.do, h.submit) cannot
// overtake it, as it could through the reader goroutine. A turn handles
// the peers' messages it has before its requests.
type sender struct {
	wire.Conn
	d    *delivery
	sent int
}

func (s *sender) Send(m wire.Message) error {
	if err := s.Conn.Send(m); err != nil {
		return err
	}
	s.sent++
	// Bounded: a loop that has stopped reading (a test's crash) never
	// asks again.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Microsecond) {
		s.d.mu.Lock()
		held := s.d.recvs > s.sent
		s.d.mu.Unlock()
		if held {
			break
		}
	}
	return nil
}

// expect returns the next message, which must have this topic and type.
func (p *peer) expect(topic string, typ wire.Type) wire.Message {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatalf("%s: connection closed while expecting %s %s", p.name, topic, typ)
		}
		if m.Topic != topic || m.Type != typ {
			p.t.Fatalf("%s: got %s %s %s, want %s %s", p.name, m.Topic, m.Type, m.Payload, topic, typ)
		}
		return m
	case <-time.After(30 * time.Second):
		p.t.Fatalf("%s: nothing received, want %s %s", p.name, topic, typ)
	}
	return wire.Message{}
}

// quiet checks that nothing more arrives once the loop has finished a
// round trip (proved by a request answered after whatever was pending).
func (p *peer) quiet(h *harness) {
	p.t.Helper()
	h.do(func(*store.Tx, *jobmgr.Manager) (any, error) { return nil, nil })
	select {
	case m := <-p.msgs:
		p.t.Fatalf("%s: unexpected %s %s %s", p.name, m.Topic, m.Type, m.Payload)
	default:
	}
}

func (p *peer) request(topic string, v any) {
	p.t.Helper()
	m, err := wire.NewRequest(topic, v)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.c.Send(m); err != nil {
		p.t.Fatal(err)
	}
}

func (p *peer) respond(topic string, v any) {
	p.t.Helper()
	m, err := wire.NewResponse(topic, v)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.c.Send(m); err != nil {
		p.t.Fatal(err)
	}
}

type harness struct {
	t      *testing.T
	path   string
	st     *store.Store
	l      *loop.Loop
	cancel context.CancelFunc
	done   chan error
	sched  *peer
	exec   *peer
	inv    *rset.R
	res    *reservation.State // nil: the manager makes one of inv's hosts
	boot   string             // the machine's boot id the next start gives its job manager
}

func inventory() *rset.R {
	return rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "fluxq.db"), inv: inventory()}
	h.open()
	return h
}

func (h *harness) open() {
	st, err := store.Open(h.path, store.Options{Timeout: 10 * time.Second})
	if err != nil {
		h.t.Fatal(err)
	}
	h.st = st
}

// start runs a loop with fresh connections.
func (h *harness) start() {
	schedConn, sched := linePair(h.t, "scheduler")
	execConn, exec := linePair(h.t, "exec")
	h.sched, h.exec = sched, exec
	jm := jobmgr.New(jobmgr.Config{Inventory: h.inv, Reservations: h.res, Owner: 100, BootID: h.boot})
	h.l = loop.New(h.st, jm, loop.Once(schedConn), loop.Once(execConn), nil)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.l.Run(ctx) }()
	h.t.Cleanup(h.stop)
}

// stop ends the loop as a crash would leave things: nothing more is said.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("loop: %v", err)
	}
	h.cancel = nil
	h.sched.c.Close()
	h.exec.c.Close()
}

func (h *harness) do(op func(*store.Tx, *jobmgr.Manager) (any, error)) any {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := h.l.Do(ctx, op)
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

func (h *harness) submit(urgency int) fluid.ID {
	h.t.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}})
	if err != nil {
		h.t.Fatal(err)
	}
	b, _ := js.MarshalJSON()
	v := h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := ops.Submit(tx, time.Now(), []ops.SubmitRequest{{Jobspec: b, UserID: 100, Owner: true, Urgency: urgency}}, nil)
		if err != nil {
			return nil, err
		}
		return ids[0], jm.Submitted(tx, recs)
	})
	return v.(fluid.ID)
}

// startedJob starts the manager, submits a job at urgency 16 and takes it
// through the scheduler's and the exec service's hellos to its start
// request: where most tests of a running job begin.
func (h *harness) startedJob() fluid.ID {
	h.t.Helper()
	h.start()
	id := h.submit(16)
	h.handshake(limited8)
	h.execHello()
	h.expectAlloc(id)
	h.succeed(id)
	h.expectStart(id, false)
	return id
}

func (h *harness) events(id fluid.ID) []string {
	h.t.Helper()
	v := h.do(func(tx *store.Tx, _ *jobmgr.Manager) (any, error) {
		rec, err := ops.Load(tx, id)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range rec.Events {
			names = append(names, e.Name)
		}
		return names, nil
	})
	return v.([]string)
}

func (h *harness) record(id fluid.ID) *ops.Record {
	h.t.Helper()
	return h.do(func(tx *store.Tx, _ *jobmgr.Manager) (any, error) { return ops.Load(tx, id) }).(*ops.Record)
}

// handshake plays the scheduler's side of acquire, hello and ready, and
// returns the hello replay.
func (h *harness) handshake(mode schedproto.Ready) []schedproto.HelloJob {
	h.t.Helper()
	h.sched.request(schedproto.TopicAcquire, nil)
	m := h.sched.expect(schedproto.TopicAcquire, wire.Response)
	a, err := schedproto.DecodeAcquire(m, true)
	if err != nil || a.Up == nil || *a.Up != h.inv.Ranks().String() {
		h.t.Fatalf("acquire = %+v, %v", a, err)
	}
	h.sched.request(schedproto.TopicHello, nil)
	var jobs []schedproto.HelloJob
	for {
		m := h.sched.expect(schedproto.TopicHello, wire.Response)
		if m.IsError() {
			// RFC 27: the stream ends with ENODATA.
			if m.Errnum != wire.ENODATA {
				h.t.Fatalf("hello ended with errnum %d", m.Errnum)
			}
			break
		}
		hj, err := schedproto.DecodeHelloJob(m)
		if err != nil {
			h.t.Fatal(err)
		}
		jobs = append(jobs, hj)
	}
	h.sched.request(schedproto.TopicReady, mode)
	if _, err := schedproto.DecodeReadyResponse(h.sched.expect(schedproto.TopicReady, wire.Response)); err != nil {
		h.t.Fatal(err)
	}
	return jobs
}

func (h *harness) execHello() {
	h.t.Helper()
	h.exec.request(execproto.TopicHello, execproto.Hello{Service: "job-exec"})
	if m := h.exec.expect(execproto.TopicHello, wire.Response); m.IsError() {
		h.t.Fatalf("exec-hello refused: %v", m.Err())
	}
}

func (h *harness) expectAlloc(id fluid.ID) schedproto.Alloc {
	h.t.Helper()
	a, err := schedproto.DecodeAlloc(h.sched.expect(schedproto.TopicAlloc, wire.Request))
	if err != nil {
		h.t.Fatal(err)
	}
	if a.ID != id {
		h.t.Fatalf("sched.alloc for %s, want %s", a.ID, id)
	}
	return a
}

func allocR(t *testing.T) json.RawMessage {
	b, err := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0")}}).WithTimes(1, 0).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (h *harness) succeed(id fluid.ID) {
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Success, R: allocR(h.t),
		Annotations: json.RawMessage(`{"sched":{"resource_summary":"rank0/core0","reason_pending":null}}`)})
}

func (h *harness) expectStart(id fluid.ID, reattach bool) execproto.Start {
	h.t.Helper()
	s, err := execproto.DecodeStart(h.exec.expect("job-exec.start", wire.Request))
	if err != nil {
		h.t.Fatal(err)
	}
	if s.ID != id || s.Reattach != reattach || len(s.R) == 0 {
		h.t.Fatalf("start = id %s reattach %v R %s; want id %s reattach %v with R", s.ID, s.Reattach, s.R, id, reattach)
	}
	return s
}

func (h *harness) execRespond(id fluid.ID, typ string, data any) {
	h.t.Helper()
	m, err := execproto.NewResponse("job-exec", id, typ, data)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.exec.c.Send(m); err != nil {
		h.t.Fatal(err)
	}
}

// finishJob plays the exec service's side of a job that runs and exits.
func (h *harness) finishJob(id fluid.ID, status int) {
	h.execRespond(id, execproto.TypeFinish, execproto.Finish{Status: status})
	h.execRespond(id, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
}

func (h *harness) expectFree(id fluid.ID) {
	h.t.Helper()
	f, err := schedproto.DecodeJobID(h.sched.expect(schedproto.TopicFree, wire.Request))
	if err != nil || f.ID != id {
		h.t.Fatalf("sched.free = %+v, %v; want job %s", f, err, id)
	}
	h.sched.respond(schedproto.TopicFree, schedproto.JobID{ID: id})
}

func wantEvents(t *testing.T, h *harness, id fluid.ID, want ...string) {
	t.Helper()
	// The last event may still be in flight: wait for the loop to settle.
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := h.events(id)
		if cmp.Equal(want, got) || time.Now().After(deadline) {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("eventlog of %s (-want +got):\n%s", id, diff)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var limited8 = schedproto.Ready{Mode: schedproto.ModeLimited, Limit: 8}

// The acceptance eventlog of a completed job, and the RFC 27/32 message
// order that produces it.
func TestLifecycle(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	if jobs := h.handshake(limited8); len(jobs) != 0 {
		t.Fatalf("hello replayed %d jobs, want none", len(jobs))
	}
	h.execHello()
	a := h.expectAlloc(id)
	if a.Priority != 16 || a.UserID != 100 || a.TSubmit == 0 || !strings.Contains(string(a.Jobspec), `"true"`) {
		t.Errorf("alloc = %+v", a)
	}
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Annotate,
		Annotations: json.RawMessage(`{"sched":{"reason_pending":"insufficient resources","jobs_ahead":0}}`)})
	h.succeed(id)
	h.expectStart(id, false)
	h.execRespond(id, execproto.TypeStart, nil)
	h.finishJob(id, 0)
	h.expectFree(id)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
	rec := h.record(id)
	if rec.Summary.Result != job.Completed {
		t.Errorf("result = %q", rec.Summary.Result)
	}
	// RFC 27: the alloc event carries the merged annotations (null deleted).
	want := map[string]any{"sched": map[string]any{"resource_summary": "rank0/core0", "jobs_ahead": json.Number("0")}}
	alloc := rec.Events[4]
	if diff := cmp.Diff(want, alloc.Context["annotations"]); diff != "" {
		t.Errorf("alloc annotations (-want +got):\n%s", diff)
	}
	h.sched.quiet(h)
	h.exec.quiet(h)
}

// RFC 27: a job canceled while its alloc is pending gets sched.cancel; the
// CANCEL response lets it finish cleaning.
func TestCancelPending(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	h.handshake(limited8)
	h.expectAlloc(id)
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Cancel(tx, id, 100, "") })
	c, err := schedproto.DecodeJobID(h.sched.expect(schedproto.TopicCancel, wire.Request))
	if err != nil || c.ID != id {
		t.Fatalf("sched.cancel = %+v, %v", c, err)
	}
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Cancel})
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "exception", "clean")
	if r := h.record(id).Summary.Result; r != job.Canceled {
		t.Errorf("result = %q, want CANCELED", r)
	}
}

// RFC 27: DENY becomes an alloc exception carrying the note.
func TestDeny(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	h.handshake(limited8)
	h.expectAlloc(id)
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Deny, Note: "unsatisfiable request"})
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "exception", "clean")
	rec := h.record(id)
	ex := rec.Events[4].Context
	if ex["type"] != "alloc" || ex["note"] != "unsatisfiable request" || ex["severity"] != json.Number("0") {
		t.Errorf("exception context = %v", ex)
	}
	if rec.Summary.Result != job.Failed {
		t.Errorf("result = %q", rec.Summary.Result)
	}
}

// RFC 27 limited mode: at most limit requests; a higher-priority arrival
// makes the job manager cancel the lowest outstanding one.
func TestLimitedModeCancelsLowest(t *testing.T) {
	h := newHarness(t)
	h.start()
	low := h.submit(16)
	h.handshake(schedproto.Ready{Mode: schedproto.ModeLimited, Limit: 1})
	h.expectAlloc(low)
	h.sched.quiet(h)
	high := h.submit(31)
	c, err := schedproto.DecodeJobID(h.sched.expect(schedproto.TopicCancel, wire.Request))
	if err != nil || c.ID != low {
		t.Fatalf("sched.cancel = %+v, %v; want %s", c, err, low)
	}
	h.sched.quiet(h) // no alloc for high while the limit is used
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: low, Type: schedproto.Cancel})
	h.expectAlloc(high)
	h.sched.quiet(h)
	// The canceled request was the job manager's doing: the job still waits.
	if s := h.record(low).Summary.State; s != job.Sched {
		t.Errorf("low job state = %s, want SCHED", s)
	}
}

// RFC 27 unlimited mode: every SCHED job is sent at once, in priority then
// submit order.
func TestUnlimitedModeOrder(t *testing.T) {
	h := newHarness(t)
	h.start()
	a := h.submit(16)
	b := h.submit(20)
	c := h.submit(16)
	held := h.submit(0)
	h.handshake(schedproto.Ready{Mode: schedproto.ModeUnlimited})
	h.expectAlloc(b)
	h.expectAlloc(a)
	h.expectAlloc(c)
	h.sched.quiet(h) // a held job is not sent
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Urgency(tx, held, 100, 16) })
	h.expectAlloc(held)
	// An urgency change of a job at the scheduler is a sched.prioritize.
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Urgency(tx, a, 100, 25) })
	p, err := schedproto.DecodePrioritize(h.sched.expect(schedproto.TopicPrioritize, wire.Request))
	if err != nil || len(p.Jobs) != 1 || p.Jobs[0] != [2]uint64{uint64(a), 25} {
		t.Fatalf("prioritize = %+v, %v", p, err)
	}
}

// RFC 27 Finalization: an error response suspends scheduling until the
// next hello and ready, after which outstanding work is sent again.
func TestErrorResponseSuspends(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	h.handshake(limited8)
	h.expectAlloc(id)
	if err := h.sched.c.Send(wire.NewError(schedproto.TopicAlloc, wire.ENOSYS, "gone")); err != nil {
		t.Fatal(err)
	}
	h.submit(16)
	h.sched.quiet(h)
	h.handshake(limited8)
	h.expectAlloc(id)
}

// RFC 27 hello and RFC 32 reattach: after a restart the scheduler is told
// of allocated jobs (with their R) and the exec service is asked to
// reattach, and the job still finishes exactly once.
func TestRestartReplay(t *testing.T) {
	h := newHarness(t)
	id := h.startedJob()
	h.execRespond(id, execproto.TypeStart, nil)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start")
	h.stop()

	h.start()
	jobs := h.handshake(limited8)
	if len(jobs) != 1 || jobs[0].ID != id || len(jobs[0].R) == 0 || jobs[0].Priority != 16 {
		t.Fatalf("hello replay = %+v", jobs)
	}
	h.execHello()
	h.expectStart(id, true)
	h.execRespond(id, execproto.TypeStart, nil) // a reattached job is not started twice
	h.finishJob(id, 0)
	h.expectFree(id)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
}

// RFC 32: an exception may come before start; the final release comes
// last and only then is the job's allocation freed.
func TestExecExceptionBeforeStartAndPartialRelease(t *testing.T) {
	h := newHarness(t)
	h.start()
	a := h.submit(16)
	h.handshake(schedproto.Ready{Mode: schedproto.ModeUnlimited})
	h.execHello()
	h.expectAlloc(a)
	h.succeed(a)
	h.expectStart(a, false)
	h.execRespond(a, execproto.TypeException, execproto.Exception{Severity: 0, Type: "exec", Note: "cannot start"})
	h.sched.quiet(h) // no free before the final release
	h.execRespond(a, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	h.expectFree(a)
	wantEvents(t, h, a, "submit", "validate", "depend", "priority", "alloc", "exception", "release", "free", "clean")

	b := h.submit(16)
	h.expectAlloc(b)
	h.succeed(b)
	h.expectStart(b, false)
	h.execRespond(b, execproto.TypeStart, nil)
	h.execRespond(b, execproto.TypeRelease, execproto.Release{Ranks: "0", Final: false})
	h.execRespond(b, execproto.TypeFinish, execproto.Finish{Status: 256})
	h.sched.quiet(h)
	h.execRespond(b, execproto.TypeRelease, execproto.Release{Ranks: "0", Final: true})
	h.expectFree(b)
	wantEvents(t, h, b, "submit", "validate", "depend", "priority", "alloc", "start", "release", "finish", "release", "free", "clean")
	if r := h.record(b).Summary; r.Result != job.Failed || *r.ReturnCode != 1 {
		t.Errorf("result %q returncode %v", r.Result, r.ReturnCode)
	}
}

// A running job canceled: the exec service hears of the exception and
// the job ends CANCELED after its shell's finish and final release.
func TestCancelRunning(t *testing.T) {
	h := newHarness(t)
	id := h.startedJob()
	h.execRespond(id, execproto.TypeStart, nil)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start")
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Cancel(tx, id, 100, "stop") })
	ex, err := execproto.DecodeException(h.exec.expect("job-exec.exception", wire.Request))
	if err != nil || ex.ID != id || ex.Type != "cancel" || ex.Severity != 0 {
		t.Fatalf("exec exception = %+v, %v", ex, err)
	}
	h.finishJob(id, 15) // SIGTERM
	h.expectFree(id)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "exception", "finish", "release", "free", "clean")
	if r := h.record(id).Summary.Result; r != job.Canceled {
		t.Errorf("result = %q", r)
	}
}

// RFC 32: a non-fatal exception the exec service raised does not end the
// job, so a later fatal one (a cancel) must still reach the exec service,
// or the job's tasks run on.
func TestCancelAfterNonFatalExecException(t *testing.T) {
	h := newHarness(t)
	id := h.startedJob()
	h.execRespond(id, execproto.TypeStart, nil)
	h.execRespond(id, execproto.TypeException, execproto.Exception{Severity: 1, Type: "exec", Note: "a task is slow"})
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Cancel(tx, id, 100, "stop") })
	ex, err := execproto.DecodeException(h.exec.expect("job-exec.exception", wire.Request))
	if err != nil || ex.ID != id || ex.Type != "cancel" || ex.Severity != 0 {
		t.Fatalf("exec exception = %+v, %v", ex, err)
	}
	h.finishJob(id, 15)
	h.expectFree(id)
	if r := h.record(id).Summary.Result; r != job.Canceled {
		t.Errorf("result = %q", r)
	}
}

func TestUserErrors(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	tests := []struct {
		name string
		op   func(tx *store.Tx, jm *jobmgr.Manager) error
		want string
	}{
		{"unknown id", func(tx *store.Tx, jm *jobmgr.Manager) error { return jm.Cancel(tx, 12345, 100, "") }, "unknown job id"},
		{"not the owner", func(tx *store.Tx, jm *jobmgr.Manager) error { return jm.Cancel(tx, id, 555, "") }, "permission denied"},
		{"urgency not owner", func(tx *store.Tx, jm *jobmgr.Manager) error { return jm.Urgency(tx, id, 555, 3) }, "permission denied"},
	}
	var mu sync.Mutex
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := h.l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, tc.op(tx, jm) })
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// The instance owner (100 here) may cancel; afterwards the job is inactive.
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Cancel(tx, id, 100, "") })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Cancel(tx, id, 100, "") })
	if err == nil || err.Error() != "job is inactive" {
		t.Errorf("second cancel err = %v, want job is inactive", err)
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name         string
		base, update map[string]any
		want         map[string]any
	}{
		{"add", nil, map[string]any{"a": 1}, map[string]any{"a": 1}},
		{"replace", map[string]any{"a": 1}, map[string]any{"a": 2}, map[string]any{"a": 2}},
		{"null deletes", map[string]any{"a": 1, "b": 2}, map[string]any{"a": nil}, map[string]any{"b": 2}},
		{"nested merge", map[string]any{"sched": map[string]any{"x": 1, "y": 2}}, map[string]any{"sched": map[string]any{"y": nil, "z": 3}},
			map[string]any{"sched": map[string]any{"x": 1, "z": 3}}},
		{"dict replaces scalar", map[string]any{"a": 1}, map[string]any{"a": map[string]any{"b": 1}}, map[string]any{"a": map[string]any{"b": 1}}},
		{"scalar replaces dict", map[string]any{"a": map[string]any{"b": 1}}, map[string]any{"a": 5}, map[string]any{"a": 5}},
		{"emptied dict removed", map[string]any{"sched": map[string]any{"x": 1}}, map[string]any{"sched": map[string]any{"x": nil}}, nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, jobmgr.Merge(tc.base, tc.update)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// RFC 27 limited mode: each finished request (SUCCESS here) frees a place
// for the next waiting job, so a queue longer than the limit drains.
func TestLimitedModeRefills(t *testing.T) {
	h := newHarness(t)
	h.start()
	var ids []fluid.ID
	for i := 0; i < 4; i++ {
		ids = append(ids, h.submit(16))
	}
	h.handshake(schedproto.Ready{Mode: schedproto.ModeLimited, Limit: 2})
	h.expectAlloc(ids[0])
	h.expectAlloc(ids[1])
	h.sched.quiet(h)
	h.succeed(ids[0])
	h.expectAlloc(ids[2])
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: ids[1], Type: schedproto.Deny, Note: "no"})
	h.expectAlloc(ids[3])
	h.sched.quiet(h)
}

// RFC 33: stopping a queue cancels its pending alloc requests (RFC 27
// sched.cancel); its jobs stay in SCHED and get no new request until the
// queue starts again, while other queues' jobs are still sent.
func TestQueueStopCancelsAllocs(t *testing.T) {
	h := newHarness(t)
	h.start()
	set, err := queue.Compile(queue.Tables{
		Policy: queue.Policy{Jobspec: queue.JobspecPolicy{Defaults: queue.JobspecDefaults{System: queue.SystemDefaults{Queue: ptr("batch")}}}},
		Queues: map[string]queue.Config{"batch": {}, "debug": {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]queue.State{"batch": {Enabled: true, Started: true}, "debug": {Enabled: true, Started: true}}
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		if _, err := ops.StartQueues(tx, set); err != nil {
			return nil, err
		}
		jm.SetQueues(set, started)
		return nil, nil
	})
	id := h.submit(16) // to batch, the default
	h.handshake(limited8)
	h.expectAlloc(id)
	h.sched.quiet(h)

	stopped := map[string]queue.State{"batch": {Enabled: true}, "debug": {Enabled: true, Started: true}}
	h.do(func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { jm.SetQueues(set, stopped); return nil, nil })
	c, err := schedproto.DecodeJobID(h.sched.expect(schedproto.TopicCancel, wire.Request))
	if err != nil || c.ID != id {
		t.Fatalf("sched.cancel = %+v, %v; want %s", c, err, id)
	}
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Cancel})
	h.sched.quiet(h) // no new request while batch is stopped
	if s := h.record(id).Summary.State; s != job.Sched {
		t.Errorf("state after stop = %s, want SCHED", s)
	}
	counts := h.do(func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.Counts([]string{"batch"}), nil }).(jobmgr.QueueCounts)
	if counts.Queued != 1 || counts.Pending != 0 {
		t.Errorf("batch counts = %+v, want 1 queued, 0 pending", counts)
	}

	h.do(func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { jm.SetQueues(set, started); return nil, nil })
	h.expectAlloc(id)
	h.sched.quiet(h)
}

func ptr[T any](v T) *T { return &v }

// Flux: a guest changes its job's urgency within 0-16; above is the
// instance owner's, for any job.
func TestGuestUrgency(t *testing.T) {
	h := newHarness(t)
	h.start()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := js.MarshalJSON()
	id := h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := ops.Submit(tx, time.Now(), []ops.SubmitRequest{{Jobspec: b, UserID: 555, Urgency: 0}}, nil)
		if err != nil {
			return nil, err
		}
		return ids[0], jm.Submitted(tx, recs)
	}).(fluid.ID)
	urgency := func(uid uint32, u int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := h.l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Urgency(tx, id, uid, u) })
		return err
	}
	for _, u := range []int{17, 31} {
		if err := urgency(555, u); !errors.Is(err, api.ErrGuestUrgency) {
			t.Errorf("guest urgency %d: %v, want %v", u, err, api.ErrGuestUrgency)
		}
	}
	if err := urgency(555, 16); err != nil {
		t.Errorf("guest urgency 16: %v", err)
	}
	if err := urgency(100, 31); err != nil {
		t.Errorf("owner urgency 31: %v", err)
	}
	if u := h.record(id).Job.Urgency; u != 31 {
		t.Errorf("urgency = %d, want 31", u)
	}
}
