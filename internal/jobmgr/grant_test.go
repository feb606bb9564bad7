package jobmgr_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// fourByTwo is the instance of the refusal tests: node0-node3 of two
// cores each, and a spare node, spare0 (rank 4), outside the instance.
func fourByTwo(t *testing.T, h *harness) {
	t.Helper()
	var nodes []rset.Node
	for i := range 5 {
		host := fmt.Sprintf("node%d", i)
		if i == 4 {
			host = "spare0"
		}
		nodes = append(nodes, rset.Node{Rank: uint(i), Hostname: host, Cores: idset.MustParse("0-1")})
	}
	h.inv = rset.New(nodes)
	res, err := reservation.New(reservation.Support{}, []string{"node0", "node1", "node2", "node3"},
		[]reservation.Node{{Name: "spare0", Rank: 4}}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.res = res
}

// rOf encodes an R of one rank, for a SUCCESS.
func rOf(t *testing.T, n rset.Node, start, exp float64) json.RawMessage {
	t.Helper()
	b, err := rset.New([]rset.Node{n}).WithTimes(start, exp).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A SUCCESS whose R does not fit the inventory or the free resources is
// refused: the scheduler gets EINVAL on sched.alloc naming the job and
// what was wrong, the job a fatal alloc exception with the same reason,
// nothing of R is stored, and the next good SUCCESS still runs.
func TestSuccessRefused(t *testing.T) {
	cores := idset.MustParse
	tests := []struct {
		name string
		r    func(t *testing.T, holder fluid.ID) json.RawMessage
		why  func(holder fluid.ID) string
	}{
		{"rank not in the instance",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 7, Hostname: "node7", Cores: cores("0")}, 1, 0)
			},
			func(fluid.ID) string { return "rank 7 is not in the instance" }},
		{"cores beyond the node",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 1, Hostname: "node1", Cores: cores("0-5")}, 1, 0)
			},
			func(fluid.ID) string { return "rank 1 (node1) has no core 2-5" }},
		{"host of another name",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 1, Hostname: "nosuch", Cores: cores("0")}, 1, 0)
			},
			func(fluid.ID) string { return "rank 1 is host node1, not nosuch" }},
		{"a gpu the node lacks",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 2, Hostname: "node2", Cores: cores("0"), GPUs: cores("0")}, 1, 0)
			},
			func(fluid.ID) string { return "rank 2 (node2) has no gpu 0" }},
		{"memory the node lacks",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 2, Hostname: "node2", Extra: map[string]idset.Set{"memory": cores("0-3")}}, 1, 0)
			},
			func(fluid.ID) string { return "rank 2 (node2) has no memory 0-3" }},
		{"more memory than the node has",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 2, Hostname: "node2", Cores: cores("0"), Memory: 3 << 30}, 1, 0)
			},
			func(fluid.ID) string { return "rank 2 (node2) has 0B of memory, not 3G" }},
		{"cores another job holds",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 0, Hostname: "node0", Cores: cores("0-1")}, 1, 0)
			},
			func(holder fluid.ID) string { return "core 0 on rank 0 (node0) is allocated to job " + holder.String() }},
		{"a spare outside the instance",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 4, Hostname: "spare0", Cores: cores("0")}, 1, 0)
			},
			func(fluid.ID) string { return "rank 4 (spare0) is a spare node outside the instance" }},
		{"expiration past the bound",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 1, Hostname: "node1", Cores: cores("0")}, 1, 3e11)
			},
			func(fluid.ID) string {
				return "R's expiration: time 300000000000 is later than the latest allowed, 9000-01-01T00:00:00Z"
			}},
		{"starttime past the bound",
			func(t *testing.T, _ fluid.ID) json.RawMessage {
				return rOf(t, rset.Node{Rank: 1, Hostname: "node1", Cores: cores("0")}, 3e11, 0)
			},
			func(fluid.ID) string {
				return "R's starttime: time 300000000000 is later than the latest allowed, 9000-01-01T00:00:00Z"
			}},
		{"expiration before starttime",
			func(*testing.T, fluid.ID) json.RawMessage {
				return json.RawMessage(`{"version":1,"execution":{"R_lite":[{"rank":"1","children":{"core":"0"}}],"starttime":10,"expiration":5}}`)
			},
			func(fluid.ID) string { return "R: execution: expiration 5 must be greater than starttime 10" }},
		{"R that does not parse",
			func(*testing.T, fluid.ID) json.RawMessage { return json.RawMessage(`{"version":2}`) },
			func(fluid.ID) string { return "R: invalid version=2" }},
		{"no resources",
			func(*testing.T, fluid.ID) json.RawMessage {
				return json.RawMessage(`{"version":1,"execution":{"R_lite":[]}}`)
			},
			func(fluid.ID) string { return "R holds no resources" }},
		{"no R",
			func(*testing.T, fluid.ID) json.RawMessage { return nil },
			func(fluid.ID) string { return "it carries no R" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			fourByTwo(t, h)
			holder := h.startedJob() // rank 0, core 0 (allocR)
			h.execRespond(holder, execproto.TypeStart, nil)

			id := h.submit(16)
			h.expectAlloc(id)
			h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Success, R: tc.r(t, holder),
				Annotations: json.RawMessage(`{"sched":{"resource_summary":"bogus"}}`)})
			why := tc.why(holder)
			m := h.sched.expect(schedproto.TopicAlloc, wire.Response)
			if want := fmt.Sprintf("SUCCESS for job %d refused: %s", uint64(id), why); m.Errnum != wire.EINVAL || m.Errstr != want {
				t.Fatalf("scheduler got errnum %d %q, want %d %q", m.Errnum, m.Errstr, wire.EINVAL, want)
			}
			wantEvents(t, h, id, "submit", "validate", "depend", "priority", "exception", "clean")
			rec := h.record(id)
			ex := rec.Events[4].Context
			if ex["type"] != "alloc" || ex["severity"] != json.Number("0") || ex["note"] != "the scheduler's allocation was refused: "+why {
				t.Errorf("exception = %v", ex)
			}
			if rec.R != nil || len(rec.RawR) != 0 || rec.Job.Allocated || rec.Annotations != nil {
				t.Errorf("refused job kept R %s (allocated %v), annotations %v", rec.RawR, rec.Job.Allocated, rec.Annotations)
			}

			// The scheduler goes on: a good SUCCESS beside the holder runs.
			next := h.submit(16)
			h.expectAlloc(next)
			h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: next, Type: schedproto.Success,
				R: rOf(t, rset.Node{Rank: 0, Hostname: "node0", Cores: cores("1")}, 1, 0)})
			h.expectStart(next, false)
			h.sched.quiet(h)
		})
	}
}

// Resources whose sched.free was sent are the scheduler's again: a
// SUCCESS that hands them out before it answers the free is taken.
func TestSuccessOnResourcesBeingFreed(t *testing.T) {
	h := newHarness(t)
	a := h.startedJob()
	b := h.submit(16)
	h.expectAlloc(b)
	h.execRespond(a, execproto.TypeStart, nil)
	h.finishJob(a, 0)
	f, err := schedproto.DecodeJobID(h.sched.expect(schedproto.TopicFree, wire.Request))
	if err != nil || f.ID != a {
		t.Fatalf("sched.free = %+v, %v; want job %s", f, err, a)
	}
	h.succeed(b) // rank 0 core 0, a's, before a's free response
	h.expectStart(b, false)
	h.sched.respond(schedproto.TopicFree, schedproto.JobID{ID: a})
	wantEvents(t, h, a, "submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean")
	wantEvents(t, h, b, "submit", "validate", "depend", "priority", "alloc")
	h.sched.quiet(h)
}

// After a restart, what the jobs held is known again before the first
// SUCCESS: one on a running job's cores is refused.
func TestSuccessRefusedAfterRestart(t *testing.T) {
	h := newHarness(t)
	a := h.startedJob()
	h.execRespond(a, execproto.TypeStart, nil)
	b := h.submit(16)
	h.expectAlloc(b)
	h.stop()

	h.start()
	if jobs := h.handshake(limited8); len(jobs) != 1 || jobs[0].ID != a {
		t.Fatalf("hello replay = %+v", jobs)
	}
	h.execHello()
	h.expectStart(a, true)
	h.expectAlloc(b)
	h.succeed(b)
	m := h.sched.expect(schedproto.TopicAlloc, wire.Response)
	if want := fmt.Sprintf("SUCCESS for job %d refused: core 0 on rank 0 (node0) is allocated to job %s", uint64(b), a); m.Errnum != wire.EINVAL || m.Errstr != want {
		t.Fatalf("scheduler got errnum %d %q, want %q", m.Errnum, m.Errstr, want)
	}
	wantEvents(t, h, b, "submit", "validate", "depend", "priority", "exception", "clean")
}

// A SUCCESS that crosses a sched.cancel (the job left SCHED) is checked
// too: refused R is never held as stray R.
func TestLateSuccessRefused(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	h.handshake(limited8)
	h.expectAlloc(id)
	h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) { return nil, jm.Cancel(tx, id, 100, "") })
	h.sched.expect(schedproto.TopicCancel, wire.Request)
	h.sched.respond(schedproto.TopicAlloc, schedproto.AllocResponse{ID: id, Type: schedproto.Success,
		R: rOf(t, rset.Node{Rank: 3, Hostname: "node3", Cores: idset.MustParse("0")}, 1, 0)})
	if m := h.sched.expect(schedproto.TopicAlloc, wire.Response); m.Errnum != wire.EINVAL {
		t.Fatalf("scheduler got %+v, want EINVAL", m)
	}
	// No free is asked for what was never taken.
	wantEvents(t, h, id, "submit", "validate", "depend", "priority", "exception", "exception", "clean")
	h.sched.quiet(h)
}

// A refusal in a turn whose commit fails is undone with the turn and
// made again in the next: the scheduler hears it once, the job gets one
// exception, and what jobs hold (checked at every turn under
// VerifyRestore) stays as it was.
func TestRefusalInFailedTurn(t *testing.T) {
	jobmgr.VerifyRestore(true)
	defer jobmgr.VerifyRestore(false)
	var flaky atomic.Bool
	var n atomic.Int64
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "fluxq.db"), inv: inventory()}
	st, err := store.Open(h.path, store.Options{Timeout: 10 * time.Second, FailCommit: func() error {
		if flaky.Load() && n.Add(1)%2 == 1 {
			return syscall.ENOSPC
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.st = st
	h.start()
	h.do(func(*store.Tx, *jobmgr.Manager) (any, error) { return nil, nil }) // loaded
	flaky.Store(true)
	a := retrySubmit(t, h)
	h.handshake(schedproto.Ready{Mode: schedproto.ModeUnlimited})
	h.execHello()
	h.expectAlloc(a)
	h.succeed(a) // rank 0 core 0
	h.expectStart(a, false)
	b := retrySubmit(t, h)
	h.expectAlloc(b)
	h.succeed(b) // a's core
	if m := h.sched.expect(schedproto.TopicAlloc, wire.Response); m.Errnum != wire.EINVAL {
		t.Fatalf("scheduler got %+v, want EINVAL", m)
	}
	deadline := time.Now().Add(30 * time.Second)
	want := []string{"submit", "validate", "depend", "priority", "exception", "clean"}
	for !cmp.Equal(stored(t, h, b), want) {
		if time.Now().After(deadline) {
			t.Fatalf("eventlog of the refused job: %v, want %v", stored(t, h, b), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	flaky.Store(false)
	h.sched.quiet(h)
	h.exec.quiet(h)
}
