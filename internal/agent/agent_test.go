package agent

// End-to-end tests of the agent with the real runner: real jobs, forked
// by the agent, over the real socket. Every job a test starts has ended
// when it returns (the agents are in this process: closing one leaves its
// jobs' processes running, as a kill -9 would, so those tests wait for
// their jobs to end).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/fluid"
)

func TestRealJobs(t *testing.T) {
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	r := makeR(t)
	p.start(1, false, makeJobspec(t, "true"), r)
	p.start(2, false, makeJobspec(t, "sh", "-c", "exit 3"), r)
	p.start(3, false, makeJobspec(t, "no-such-command-xyz"), r)
	for _, tc := range []struct {
		id     fluid.ID
		types  []string
		status int
	}{
		{1, []string{"start", "finish", "release"}, 0},
		{2, []string{"start", "finish", "release"}, 3 << 8},
		{3, []string{"start", "exception", "finish", "release"}, 127 << 8},
	} {
		rs := p.released(tc.id, 10*time.Second)
		if diff := cmp.Diff(tc.types, types(rs)); diff != "" {
			t.Errorf("job %d (-want +got):\n%s", tc.id, diff)
			continue
		}
		if f := finish(t, rs); f.Status != tc.status || f.Usage == nil {
			t.Errorf("job %d finish = %+v, want status %d with usage", tc.id, f, tc.status)
		}
	}
	p.send(agentproto.TopicAck, agentproto.Ack{IDs: []fluid.ID{1, 2, 3}})
	p.wait("nothing held", 5*time.Second, func() bool { return true })
	if h := p.hello(); len(h.Running)+len(h.Ended) != 0 {
		// The acks may still be on their way: give them a moment.
		time.Sleep(100 * time.Millisecond)
		if h = p.hello(); len(h.Running)+len(h.Ended) != 0 {
			t.Errorf("hello after the acks = %+v", h)
		}
	}
}

// A burst of jobs, as fluxsched sends it: each is started and finished
// once.
func TestRealBurst(t *testing.T) {
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	js, r := makeJobspec(t, "true"), makeR(t)
	const n = 200
	for i := fluid.ID(1); i <= n; i++ {
		p.start(i, false, js, r)
	}
	for i := fluid.ID(1); i <= n; i++ {
		rs := p.released(i, 30*time.Second)
		if diff := cmp.Diff([]string{"start", "finish", "release"}, types(rs)); diff != "" {
			t.Fatalf("job %d (-want +got):\n%s", i, diff)
		}
	}
}

// The agent dies (closed as a kill -9 leaves things) with jobs running;
// the next agent takes them back: each ends exactly once, none is run
// again, and fluxsched hears the status was lost.
func TestRealAgentRestart(t *testing.T) {
	state := stateDir(t)
	ran := filepath.Join(t.TempDir(), "ran")
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	r := makeR(t)
	for i := fluid.ID(1); i <= 3; i++ {
		p.start(i, false, makeJobspec(t, "sh", "-c", fmt.Sprintf("echo %d >> %s; sleep 1", i, ran)), r)
	}
	p.wait("starts", 10*time.Second, func() bool {
		return len(p.streamLocked(1)) == 1 && len(p.streamLocked(2)) == 1 && len(p.streamLocked(3)) == 1
	})
	a.Close()

	startAgent(t, state, "b1")
	q := dial(t, state, "b1")
	if h := q.hello(); len(h.Running)+len(h.Ended) != 3 {
		t.Fatalf("hello after the restart = %+v, want the 3 jobs", h)
	}
	for i := fluid.ID(1); i <= 3; i++ {
		q.start(i, true, makeJobspec(t, "sh", "-c", "echo again >> "+ran), r)
	}
	for i := fluid.ID(1); i <= 3; i++ {
		rs := q.released(i, 10*time.Second)
		if diff := cmp.Diff([]string{"exception", "release"}, types(rs)); diff != "" {
			t.Errorf("job %d (-want +got):\n%s", i, diff)
		}
		if e := exceptions(t, rs); len(e) != 1 || e[0].Note != NoteStatusLost {
			t.Errorf("job %d exceptions = %+v", i, e)
		}
	}
	b, _ := os.ReadFile(ran)
	if got := strings.Fields(string(b)); len(got) != 3 {
		t.Errorf("the jobs ran %q, want each once", got)
	}
	time.Sleep(200 * time.Millisecond)
	q.mu.Lock()
	n := len(q.starts)
	q.mu.Unlock()
	if n != 6 {
		t.Errorf("%d start responses, want 6: each job's end is reported once", n)
	}
}

// agent.cancel from a connection that is not fluxsched's (fluxq cancel
// with no fluxsched): the job's processes end now, and the next fluxsched
// is told.
func TestRealCancelWithoutFluxsched(t *testing.T) {
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(1, false, makeJobspec(t, "sleep", "30"), makeR(t))
	p.wait("start", 10*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })
	p.lc.Close()

	o := dial(t, state, "b1")
	if m := o.call(agentproto.TopicCancel, agentproto.Cancel{ID: 1}); m.IsError() {
		t.Fatal(m.Err())
	}
	q := dial(t, state, "b1")
	deadline := time.Now().Add(10 * time.Second)
	for len(q.hello().Ended) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the canceled job has not ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	q.start(1, true, makeJobspec(t, "sleep", "30"), makeR(t))
	rs := q.released(1, 10*time.Second)
	if f := finish(t, rs); syscall.WaitStatus(f.Status).Signal() != syscall.SIGTERM {
		t.Errorf("finish = %+v, want killed by SIGTERM", f)
	}
}

// stop --force ends the jobs, then the agent.
func TestRealStopForce(t *testing.T) {
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(1, false, makeJobspec(t, "sleep", "30"), makeR(t))
	p.wait("start", 10*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })
	o := dial(t, state, "b1")
	if m := o.call(agentproto.TopicStop, agentproto.Stop{Force: true}); m.IsError() {
		t.Fatal(m.Err())
	}
	if err := a.exited(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	rs := p.released(1, time.Second)
	if diff := cmp.Diff([]string{"start", "finish", "release"}, types(rs)); diff != "" {
		t.Errorf("job 1 (-want +got):\n%s", diff)
	}
}
