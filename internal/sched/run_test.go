package sched

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// failAfter bounds each wait; it is a failure bound, never a
// synchronisation: every wait ends as soon as the message arrives.
const failAfter = 30 * time.Second

// fakeJM is the job manager's end of the conversation, for conformance
// tests: it reads everything the scheduler sends into a channel.
type fakeJM struct {
	t    *testing.T
	conn wire.Conn
	in   chan wire.Message
	done chan error // Run's result
}

func startRun(t *testing.T, opts Options) *fakeJM {
	t.Helper()
	jm, sc := wire.Pipe()
	f := &fakeJM{t: t, conn: jm, in: make(chan wire.Message, 1<<16), done: make(chan error, 1)}
	go func() { f.done <- Run(sc, opts) }()
	go func() {
		defer close(f.in)
		for {
			m, err := jm.Recv()
			if err != nil {
				return
			}
			f.in <- m
		}
	}()
	t.Cleanup(func() { jm.Close() })
	return f
}

func (f *fakeJM) recv() wire.Message {
	f.t.Helper()
	select {
	case m, ok := <-f.in:
		if !ok {
			f.t.Fatal("scheduler closed the connection")
		}
		return m
	case <-time.After(failAfter):
		f.t.Fatal("timed out waiting for the scheduler")
	}
	return wire.Message{}
}

func (f *fakeJM) send(m wire.Message, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.conn.Send(m); err != nil {
		f.t.Fatal(err)
	}
}

// expectRequest receives the next message and checks it is a request for
// topic.
func (f *fakeJM) expectRequest(topic string) wire.Message {
	f.t.Helper()
	m := f.recv()
	if m.Type != wire.Request || m.Topic != topic {
		f.t.Fatalf("got %s %s %s, want request %s", m.Type, m.Topic, m.Payload, topic)
	}
	return m
}

// handshake answers acquire, hello (with the given jobs) and ready, and
// returns the ready request.
func (f *fakeJM) handshake(inventory *rset.R, up string, hello ...schedproto.HelloJob) schedproto.Ready {
	f.t.Helper()
	// RFC 28 / sched-simple: resource.acquire comes first.
	f.expectRequest(schedproto.TopicAcquire)
	res, err := inventory.MarshalJSON()
	if err != nil {
		f.t.Fatal(err)
	}
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Resources: res, Up: &up}))
	// RFC 27: "Before any other RPCs are sent to the job manager, the
	// scheduler SHALL send an empty request to job-manager.sched-hello".
	if m := f.expectRequest(schedproto.TopicHello); len(m.Payload) != 0 {
		f.t.Errorf("hello payload %s, want empty", m.Payload)
	}
	for _, h := range hello {
		f.send(wire.NewResponse(schedproto.TopicHello, h))
	}
	f.send(wire.NewError(schedproto.TopicHello, wire.ENODATA, ""), nil)
	// RFC 27: ready once the hello handshake is done.
	ready, err := schedproto.DecodeReady(f.expectRequest(schedproto.TopicReady))
	if err != nil {
		f.t.Fatal(err)
	}
	f.send(wire.NewResponse(schedproto.TopicReady, schedproto.ReadyResponse{Count: 0}))
	return ready
}

func (f *fakeJM) alloc(t *testing.T, id uint64, o jobspec.Options) {
	t.Helper()
	f.send(wire.NewRequest(schedproto.TopicAlloc, schedproto.Alloc{ID: fluid.ID(id), Priority: 16, UserID: 1000,
		TSubmit: float64(id), Jobspec: spec(t, o)}))
}

// tracker checks RFC 27's rules on the alloc responses of each job: any
// number of ANNOTATE, then exactly one SUCCESS, DENY or CANCEL, then
// nothing.
type tracker struct {
	t      *testing.T
	final  map[fluid.ID]string // "SUCCESS rank0/core0", "DENY note", "CANCEL"
	events []string            // in arrival order, for ordering checks
	freed  map[fluid.ID]int
}

func newTracker(t *testing.T) *tracker {
	return &tracker{t: t, final: map[fluid.ID]string{}, freed: map[fluid.ID]int{}}
}

func (k *tracker) add(m wire.Message) {
	k.t.Helper()
	if m.Type != wire.Response {
		k.t.Fatalf("unexpected request %s", m.Topic)
	}
	switch m.Topic {
	case schedproto.TopicAlloc:
		// RFC 27: errnum zero, the job id in the payload.
		r, err := schedproto.DecodeAllocResponse(m)
		if err != nil {
			k.t.Fatalf("bad alloc response: %v", err)
		}
		if f, ok := k.final[r.ID]; ok {
			k.t.Errorf("job %d: %s after final %s", r.ID, r.Type, f)
		}
		var s string
		switch r.Type {
		case schedproto.Success:
			rr, err := rset.Parse(r.R)
			if err != nil {
				k.t.Fatalf("job %d: R: %v", r.ID, err)
			}
			s = "SUCCESS " + rr.String()
		case schedproto.Deny:
			s = "DENY " + r.Note
		case schedproto.Cancel:
			s = "CANCEL"
		case schedproto.Annotate:
			k.events = append(k.events, fmt.Sprintf("%d ANNOTATE", r.ID))
			return
		}
		k.final[r.ID] = s
		k.events = append(k.events, fmt.Sprintf("%d %s", r.ID, s))
	case schedproto.TopicFree:
		j, err := schedproto.DecodeJobID(m)
		if err != nil {
			k.t.Fatalf("bad free response: %v", err)
		}
		k.freed[j.ID]++
		k.events = append(k.events, fmt.Sprintf("%d FREED", j.ID))
	default:
		k.events = append(k.events, fmt.Sprintf("%s errnum=%d", m.Topic, m.Errnum))
	}
}

// waitFor receives until cond holds.
func (k *tracker) waitFor(f *fakeJM, cond func() bool) {
	k.t.Helper()
	for !cond() {
		k.add(f.recv())
	}
}

func inventory2x2(t *testing.T) *rset.R {
	t.Helper()
	r, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node[0-1]", Cores: "0-1"}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The whole conversation over an in-process pipe.
func TestRunConformance(t *testing.T) {
	inv := inventory2x2(t)
	f := startRun(t, Options{Default: QueuePolicy{Match: resource.FirstFit}, Limit: 8, Now: func() float64 { return 100 }})
	held, _ := inv.SelectRanks(inv.Ranks()).Intersection(parseSummary(t, "rank0/core0")).MarshalJSON()
	ready := f.handshake(inv, "0-1", schedproto.HelloJob{ID: 100, Priority: 16, UserID: 1000, TSubmit: 1, R: held})
	if ready != (schedproto.Ready{Mode: schedproto.ModeLimited, Limit: 8}) {
		t.Errorf("ready = %+v, want limited 8", ready)
	}

	k := newTracker(t)
	// Five one-core jobs on three free cores (core 0 of node0 is held by
	// the replayed job), and one that can never fit.
	for id := uint64(1); id <= 5; id++ {
		f.alloc(t, id, jobspec.Options{})
	}
	f.alloc(t, 6, jobspec.Options{NTasks: 5})
	k.waitFor(f, func() bool { return len(k.final) == 4 })
	want := map[fluid.ID]string{1: "SUCCESS rank0/core1", 2: "SUCCESS rank1/core0", 3: "SUCCESS rank1/core1", 6: "DENY unsatisfiable request"}
	if diff := cmp.Diff(want, k.final); diff != "" {
		t.Errorf("finals (-want +got):\n%s", diff)
	}

	// sched.cancel of a pending alloc: CANCEL; of anything else: nothing.
	// sched.prioritize: no response (RFC 27).
	f.send(wire.NewRequest(schedproto.TopicCancel, schedproto.JobID{ID: 5}))
	f.send(wire.NewRequest(schedproto.TopicCancel, schedproto.JobID{ID: 1}))
	f.send(wire.NewRequest(schedproto.TopicPrioritize, schedproto.Prioritize{Jobs: [][2]uint64{{4, 20}, {1, 3}}}))
	// sched.free of the replayed job: answered, and its core goes to job 4.
	f.send(wire.NewRequest(schedproto.TopicFree, schedproto.JobID{ID: 100}))
	k.waitFor(f, func() bool { return len(k.final) == 6 && k.freed[100] == 1 })
	want[5], want[4] = "CANCEL", "SUCCESS rank0/core0"
	if diff := cmp.Diff(want, k.final); diff != "" {
		t.Errorf("finals (-want +got):\n%s", diff)
	}

	// A drained node takes no new work; undrained, it does.
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Down: ptr("1")}))
	f.send(wire.NewRequest(schedproto.TopicFree, schedproto.JobID{ID: 2}))
	f.alloc(t, 7, jobspec.Options{})
	k.waitFor(f, func() bool { return k.freed[2] == 1 && len(k.events) > 0 && k.events[len(k.events)-1] == "7 ANNOTATE" })
	f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Up: ptr("1")}))
	k.waitFor(f, func() bool { return k.final[7] != "" })
	if k.final[7] != "SUCCESS rank1/core0" {
		t.Errorf("job 7: %s, want SUCCESS rank1/core0", k.final[7])
	}

	// An unknown method gets ENOSYS, and the scheduler carries on.
	f.send(wire.NewRequest("sched.nosuch", nil))
	f.send(wire.NewRequest(schedproto.TopicFree, schedproto.JobID{ID: 7}))
	k.waitFor(f, func() bool { return k.freed[7] == 1 })
	if !contains(k.events, fmt.Sprintf("sched.nosuch errnum=%d", wire.ENOSYS)) {
		t.Errorf("no ENOSYS for an unknown method: %v", k.events)
	}

	// Every alloc was answered once with a final response; annotations
	// came only before it (checked by the tracker as they arrived).
	for id := fluid.ID(1); id <= 7; id++ {
		if k.final[id] == "" {
			t.Errorf("job %d never got a final response", id)
		}
	}
	// The job manager goes away: Run returns nil.
	f.conn.Close()
	select {
	case err := <-f.done:
		if err != nil {
			t.Errorf("Run = %v, want nil on EOF", err)
		}
	case <-time.After(failAfter):
		t.Fatal("Run did not return after EOF")
	}
}

func ptr(s string) *string { return &s }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A burst of allocs is scheduled in batches, and every one is answered.
func TestRunBurst(t *testing.T) {
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node[0-3]", Cores: "0-7"}})
	if err != nil {
		t.Fatal(err)
	}
	f := startRun(t, Options{})
	if ready := f.handshake(inv, "0-3"); ready.Mode != schedproto.ModeUnlimited {
		t.Errorf("ready = %+v, want unlimited for Limit 0", ready)
	}
	// Enough to overrun any single read; every free moves every waiting
	// job up one, so annotations grow with the square of n.
	const n = 400
	js := spec(t, jobspec.Options{})
	for id := uint64(1); id <= n; id++ {
		f.send(wire.NewRequest(schedproto.TopicAlloc, schedproto.Alloc{ID: fluid.ID(id), Priority: 16, TSubmit: float64(id), Jobspec: js}))
	}
	k := newTracker(t)
	k.waitFor(f, func() bool { return len(k.final) == 32 })
	// Free whatever runs, round after round, until every job has run.
	freed := map[fluid.ID]bool{}
	for len(freed) < n {
		k.waitFor(f, func() bool { return len(k.final) > len(freed) })
		for id := range k.final {
			if !freed[id] {
				freed[id] = true
				f.send(wire.NewRequest(schedproto.TopicFree, schedproto.JobID{ID: id}))
			}
		}
	}
	k.waitFor(f, func() bool { return len(k.freed) == n })
	for id, s := range k.final {
		if !strings.HasPrefix(s, "SUCCESS ") {
			t.Errorf("job %d: %s", id, s)
		}
	}
	// FIFO: successes come in job order.
	var last uint64
	for _, e := range k.events {
		var id uint64
		var rest string
		fmt.Sscanf(e, "%d %s", &id, &rest)
		if rest == "SUCCESS" {
			if id < last {
				t.Fatalf("job %d allocated after job %d", id, last)
			}
			last = id
		}
	}
}

// Protocol violations: an error response to the request (so the job
// manager suspends scheduling, RFC 27) and Run returns the error.
func TestRunProtocolErrors(t *testing.T) {
	tests := []struct {
		name    string
		send    func(f *fakeJM)
		topic   string
		wantErr string
	}{
		{"alloc without jobspec", func(f *fakeJM) {
			f.send(wire.Message{Topic: schedproto.TopicAlloc, Type: wire.Request, Payload: json.RawMessage(`{"id":1,"priority":16,"userid":1}`)}, nil)
		}, schedproto.TopicAlloc, `payload has no "jobspec"`},
		{"second alloc for a job", func(f *fakeJM) {
			f.alloc(f.t, 1, jobspec.Options{NTasks: 4})
			f.alloc(f.t, 1, jobspec.Options{})
		}, schedproto.TopicAlloc, "job already has an alloc request or resources"},
		{"free without id", func(f *fakeJM) {
			f.send(wire.Message{Topic: schedproto.TopicFree, Type: wire.Request, Payload: json.RawMessage(`{}`)}, nil)
		}, schedproto.TopicFree, `payload has no "id"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := startRun(t, Options{})
			f.handshake(inventory2x2(t), "0-1")
			tc.send(f)
			for {
				m := f.recv()
				if m.IsError() {
					if m.Topic != tc.topic || m.Errnum != wire.EPROTO || !strings.Contains(m.Errstr, tc.wantErr) {
						t.Errorf("error response %s %d %q", m.Topic, m.Errnum, m.Errstr)
					}
					break
				}
			}
			select {
			case err := <-f.done:
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Run = %v, want %q", err, tc.wantErr)
				}
			case <-time.After(failAfter):
				t.Fatal("Run did not return")
			}
		})
	}
}

// Failures during the handshake end Run; EOF at any point is clean.
func TestRunHandshakeEnds(t *testing.T) {
	t.Run("acquire fails", func(t *testing.T) {
		f := startRun(t, Options{})
		f.expectRequest(schedproto.TopicAcquire)
		f.send(wire.NewError(schedproto.TopicAcquire, wire.ENOSYS, "no resource service"), nil)
		if err := <-f.done; err == nil || !strings.Contains(err.Error(), "no resource service") {
			t.Errorf("Run = %v", err)
		}
	})
	t.Run("hello fails", func(t *testing.T) {
		f := startRun(t, Options{})
		f.expectRequest(schedproto.TopicAcquire)
		res, _ := inventory2x2(t).MarshalJSON()
		f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Resources: res, Up: ptr("0-1")}))
		f.expectRequest(schedproto.TopicHello)
		f.send(wire.NewError(schedproto.TopicHello, wire.EPROTO, "hello refused"), nil)
		if err := <-f.done; err == nil || !strings.Contains(err.Error(), "hello refused") {
			t.Errorf("Run = %v", err)
		}
	})
	t.Run("EOF during hello", func(t *testing.T) {
		f := startRun(t, Options{})
		f.expectRequest(schedproto.TopicAcquire)
		res, _ := inventory2x2(t).MarshalJSON()
		f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Resources: res, Up: ptr("0-1")}))
		f.expectRequest(schedproto.TopicHello)
		f.conn.Close()
		if err := <-f.done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	t.Run("bad inventory", func(t *testing.T) {
		f := startRun(t, Options{})
		f.expectRequest(schedproto.TopicAcquire)
		f.send(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Resources: json.RawMessage(`{"version":2}`), Up: ptr("")}))
		if err := <-f.done; err == nil || !strings.Contains(err.Error(), "resources") {
			t.Errorf("Run = %v", err)
		}
	})
}

// A sync request (schedproto.TopicSync, the loop's exchange inside a
// turn) is answered once everything sent before it is handled and the
// pass it started is done: here, after the free's answer and the
// allocation the free made possible.
func TestRunSync(t *testing.T) {
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node0", Cores: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	f := startRun(t, Options{})
	f.handshake(inv, "0")
	js := spec(t, jobspec.Options{})
	for id := uint64(1); id <= 2; id++ {
		f.send(wire.NewRequest(schedproto.TopicAlloc, schedproto.Alloc{ID: fluid.ID(id), Priority: 16, TSubmit: float64(id), Jobspec: js}))
	}
	k := newTracker(t)
	k.waitFor(f, func() bool { return k.final[1] != "" })
	f.send(wire.NewRequest(schedproto.TopicFree, schedproto.JobID{ID: 1}))
	f.send(schedproto.NewSync(7))
	var got []string
	for {
		m := f.recv()
		if schedproto.IsSyncAnswer(m, 7) {
			break
		}
		k.add(m)
		got = append(got, m.Topic)
	}
	if k.freed[1] != 1 || !strings.HasPrefix(k.final[2], "SUCCESS") {
		t.Errorf("before the sync answer: %v (freed %v, job 2 %q); want the free and job 2's allocation", got, k.freed, k.final[2])
	}
}

// A SUCCESS the job manager refuses (schedproto.Refused) gives back what
// it held: the next job gets the same core.
func TestRunRefusedSuccessFrees(t *testing.T) {
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node0", Cores: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	f := startRun(t, Options{Default: QueuePolicy{Match: resource.FirstFit}, Now: func() float64 { return 100 },
		Logf: func(format string, a ...any) { logged = append(logged, fmt.Sprintf(format, a...)) }})
	f.handshake(inv, "0")
	k := newTracker(t)
	f.alloc(t, 1, jobspec.Options{})
	k.waitFor(f, func() bool { return k.final[1] != "" })
	f.send(schedproto.Refused(1, "rank 0 is host node0, not nosuch"), nil)
	f.alloc(t, 2, jobspec.Options{})
	k.waitFor(f, func() bool { return k.final[2] != "" })
	if k.final[1] != "SUCCESS rank0/core0" || k.final[2] != "SUCCESS rank0/core0" {
		t.Errorf("finals %v, want both on rank0/core0", k.final)
	}
	f.conn.Close()
	<-f.done
	if !contains(logged, "sched.alloc: SUCCESS for job 1 refused: rank 0 is host node0, not nosuch") {
		t.Errorf("logged %q, want the refusal", logged)
	}
}
