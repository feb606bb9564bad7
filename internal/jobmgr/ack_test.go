package jobmgr_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/wire"
)

// expectAck waits for the exec service's next ack notification.
func (h *harness) expectAck(want ...fluid.ID) {
	h.t.Helper()
	select {
	case a := <-h.exec.acks:
		slices.Sort(a.IDs)
		slices.Sort(want)
		if !slices.Equal(a.IDs, want) {
			h.t.Fatalf("ack %v, want %v", a.IDs, want)
		}
	case <-time.After(30 * time.Second):
		h.t.Fatalf("no ack, want %v", want)
	}
}

// noAck checks that no ack came by the end of a round trip.
func (h *harness) noAck() {
	h.t.Helper()
	h.exec.quiet(h)
	select {
	case a := <-h.exec.acks:
		h.t.Fatalf("unexpected ack %v", a.IDs)
	default:
	}
}

func (h *harness) execHelloEnded(ended ...fluid.ID) {
	h.t.Helper()
	h.exec.request(execproto.TopicHello, execproto.Hello{Service: "job-exec", Ended: ended})
	if m := h.exec.expect(execproto.TopicHello, wire.Response); m.IsError() {
		h.t.Fatalf("exec-hello refused: %v", m.Err())
	}
}

// A job's end is acknowledged once its final release is committed, and
// its usage is kept beside the job, not in the finish event.
func TestAckAfterFinalRelease(t *testing.T) {
	h := newHarness(t)
	id := h.startedJob()
	h.execRespond(id, execproto.TypeStart, nil)
	usage := &execproto.Usage{UserCPU: 1.5, SysCPU: 0.25, MaxRSS: 200 << 20}
	h.execRespond(id, execproto.TypeFinish, execproto.Finish{Status: 0, Usage: usage})
	h.noAck() // not before the final release
	h.execRespond(id, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	h.expectAck(id)
	h.expectFree(id)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
	rec := h.record(id)
	if rec.Usage == nil || *rec.Usage != *usage {
		t.Errorf("usage = %+v, want %+v", rec.Usage, usage)
	}
	if rec.Summary.Usage == nil || *rec.Summary.Usage != *usage {
		t.Errorf("summary usage = %+v, want %+v", rec.Summary.Usage, usage)
	}
	if ctx := rec.Events[6].Context; len(ctx) != 1 {
		t.Errorf("finish context = %v, want the status alone", ctx)
	}
}

// On hello, ends the exec service holds for jobs that will not be taken
// back are acknowledged at once; a running job's end is acknowledged
// only after it is reported again and committed.
func TestHelloAcksEnded(t *testing.T) {
	h := newHarness(t)
	done := h.startedJob()
	h.execRespond(done, execproto.TypeStart, nil)
	h.finishJob(done, 0)
	h.expectAck(done)
	h.expectFree(done)
	wantEvents(t, h, done, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
	running := h.submit(16)
	h.expectAlloc(running)
	h.succeed(running)
	h.expectStart(running, false)
	h.execRespond(running, execproto.TypeStart, nil)
	wantEvents(t, h, running, "submit", "validate", "depend", "priority", "alloc", "start")
	h.stop()

	h.start()
	h.handshake(limited8)
	unknown := fluid.ID(12345)
	h.execHelloEnded(done, running, unknown)
	h.expectAck(done, unknown)
	h.expectStart(running, true)
	h.noAck()
	h.finishJob(running, 0)
	h.expectAck(running)
	h.expectFree(running)
	wantEvents(t, h, running, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
}

// A job whose start request went out but whose start was never committed
// (fluxsched died in between) is not reattached: the exec service, which
// may have launched it, must answer start, or the job could never finish.
// The same whether or not the boot is known, as long as it is the same:
// the exec agent's record of a launch, written but not synced, is still
// there after a restart of fluxsched alone.
func TestUnstartedJobIsNotReattached(t *testing.T) {
	for _, boot := range []string{"", "boot-1"} {
		t.Run("boot "+boot, func(t *testing.T) {
			h := newHarness(t)
			h.boot = boot
			id := h.startedJob()
			wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc")
			h.stop()

			h.start()
			h.handshake(limited8)
			h.execHello()
			h.expectStart(id, false)
			h.execRespond(id, execproto.TypeStart, nil)
			h.finishJob(id, 0)
			h.expectFree(id)
			wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
		})
	}
}

// After a restart of the machine, a job allocated before it whose start
// was never committed may have been launched all the same (the record of
// a launch is not synced): it gets a fatal exception and is reattached,
// never started again, then and at every later restart. A job that had
// not been allocated is scheduled as usual.
func TestRebootedUnstartedJobIsNotStarted(t *testing.T) {
	h := newHarness(t)
	h.boot = "boot-1"
	id := h.startedJob()
	h.stop()

	h.boot = "boot-2"
	h.start()
	h.handshake(limited8)
	h.execHello()
	h.expectStart(id, true)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "exception")
	if ev := h.record(id).Events[5]; ev.Context["note"] != jobmgr.NoteRebooted || ev.Context["type"] != "exec" {
		t.Errorf("exception = %v, want an exec exception %q", ev.Context, jobmgr.NoteRebooted)
	}
	h.stop()

	// The same boot again: still reattached, never launched.
	h.start()
	h.handshake(limited8)
	h.execHello()
	h.expectStart(id, true)
	h.execRespond(id, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	h.expectFree(id)
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "alloc", "exception", "release", "free", "clean")
	next := h.submit(16)
	h.expectAlloc(next)
}
