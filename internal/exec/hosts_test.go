package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/wire"
)

// hostLauncher is a launcher.HostLauncher whose hosts' agents the test
// plays over pipes; ConnectHost takes the next agent queued for a host,
// and fails while none is.
type hostLauncher struct {
	fakeLauncher
	mu    sync.Mutex
	next  map[string][]*launcher.Agent
	tries map[string]int
}

func (h *hostLauncher) Hosts() []string {
	var out []string
	for _, a := range h.agents {
		out = append(out, a.Hosts...)
	}
	return out
}

func (h *hostLauncher) ConnectHost(_ context.Context, host string) (*launcher.Agent, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tries[host]++
	if q := h.next[host]; len(q) > 0 {
		h.next[host] = q[1:]
		return q[0], nil
	}
	return nil, errors.New("ssh: connect to host " + host + " port 22: Connection refused")
}

// queue makes host's agent answer again with hello; it returns the
// test's end of it.
func (h *hostLauncher) queue(t *testing.T, host string, hello agentproto.Hello) *end {
	ours, theirs := wire.Pipe()
	h.mu.Lock()
	h.next[host] = append(h.next[host], &launcher.Agent{Conn: ours, Hello: hello, Name: host, Hosts: []string{host}})
	h.mu.Unlock()
	return &end{t: t, name: host + " again", c: theirs}
}

func newLossRig(t *testing.T, hostTimeout time.Duration, n int, more ...func(*Options)) (*rig, *hostLauncher) {
	r := &rig{t: t, done: make(chan error, 1)}
	hl := &hostLauncher{next: map[string][]*launcher.Agent{}, tries: map[string]int{}}
	for i := range n {
		ours, theirs := wire.Pipe()
		host := fmt.Sprintf("n%d", i)
		hl.agents = append(hl.agents, &launcher.Agent{Conn: ours, Hello: agentproto.Hello{Build: "b"}, Name: host, Hosts: []string{host}})
		r.agents = append(r.agents, &end{t: t, name: host, c: theirs})
	}
	jmEnd, svcEnd := wire.Pipe()
	r.jm = &end{t: t, name: "job manager", c: jmEnd, keepDrains: true}
	opts := Options{Launcher: hl, KillGrace: 2 * time.Second, HostTimeout: hostTimeout}
	for _, f := range more {
		f(&opts)
	}
	go func() {
		r.done <- Run(svcEnd, opts)
	}()
	t.Cleanup(func() { jmEnd.Close() })
	r.jm.expect(execproto.TopicHello, wire.Request)
	r.jm.send(wire.NewResponse(execproto.TopicHello, nil))
	return r, hl
}

// A job on n0 and n1 whose n1 connection drops: n0 is not disturbed,
// the router reaches n1 again and takes the part back (reattach), what n1
// says again is not passed on twice: one start, one exception, one
// finish, one release.
func TestHostReconnect(t *testing.T) {
	r, hl := newLossRig(t, time.Hour, 2)
	r.startR(3, rOf(0, 1), false)
	r.expectStart(0, 3)
	r.expectStart(1, 3)
	r.respond(0, 3, execproto.TypeStart, nil)
	r.respond(1, 3, execproto.TypeStart, nil)
	r.expectResponse(3, execproto.TypeStart)
	r.respond(1, 3, execproto.TypeException, execproto.Exception{Severity: 1, Type: "note", Note: "once"})
	r.expectResponse(3, execproto.TypeException)
	again := hl.queue(t, "n1", agentproto.Hello{Build: "b", Running: []fluid.ID{3}})
	r.agents[1].c.Close()
	var s agentproto.Start
	if err := wire.Decode(again.expect(agentproto.TopicStart, wire.Request), &s, "id", "userid", "jobspec", "reattach"); err != nil {
		t.Fatal(err)
	}
	if s.ID != 3 || !s.Reattach || s.Ranks != "1" {
		t.Fatalf("reattach start %+v, want job 3, reattach, ranks 1", s)
	}
	r.agents[1] = again
	// Said again by the agent taking the job back: dropped.
	r.respond(1, 3, execproto.TypeException, execproto.Exception{Severity: 1, Type: "note", Note: "once"})
	r.finish(1, 3, nil)
	r.finish(0, 3, nil)
	r.expectResponse(3, execproto.TypeFinish)
	r.expectResponse(3, execproto.TypeRelease)
	r.ack(3)
	r.expectAck(0, 3)
	r.expectAck(1, 3)
	r.expectServing()
}

// A host lost past host-timeout: its jobs get a node-failure exception
// (severity 0), the other hosts' parts are told (their tasks end), and
// the job ends once they release. When the host answers later, the job it
// still runs is killed there and acknowledged, never reported.
func TestHostTimeoutNodeFailure(t *testing.T) {
	r, hl := newLossRig(t, 200*time.Millisecond, 2)
	r.startR(4, rOf(0, 1), false)
	r.expectStart(0, 4)
	r.expectStart(1, 4)
	r.respond(0, 4, execproto.TypeStart, nil)
	r.respond(1, 4, execproto.TypeStart, nil)
	r.expectResponse(4, execproto.TypeStart)
	r.agents[1].c.Close()
	e := r.expectResponse(4, execproto.TypeException)
	if !strings.Contains(string(e.Data), `"severity":0,"type":"node-failure","note":"host n1 lost for longer than host-timeout (200ms)"`) {
		t.Fatalf("exception %s", e.Data)
	}
	var n execproto.ExceptionNotice
	if err := wire.Decode(r.agents[0].expect(agentproto.TopicException, wire.Request), &n, "id", "severity", "type"); err != nil || n.ID != 4 || n.Type != "node-failure" {
		t.Fatalf("notice to n0: %+v %v", n, err)
	}
	r.respond(0, 4, execproto.TypeFinish, execproto.Finish{Status: 15})
	r.respond(0, 4, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	r.expectResponse(4, execproto.TypeFinish)
	r.expectResponse(4, execproto.TypeRelease)
	r.ack(4)
	r.expectAck(0, 4)
	// n1 was drained in ssh's words as its connection failed (100 ms).
	lost := execproto.HostDrain{Host: "n1", Drain: true, Reason: "ssh: connect to host n1 port 22: Connection refused"}
	if !slices.Contains(r.jm.drainsSeen(), lost) {
		t.Fatalf("host drains %+v, want %+v among them", r.jm.drainsSeen(), lost)
	}
	// n1 comes back, still running job 4: taken back to be killed.
	again := hl.queue(t, "n1", agentproto.Hello{Build: "b", Running: []fluid.ID{4}})
	var s agentproto.Start
	if err := wire.Decode(again.expect(agentproto.TopicStart, wire.Request), &s, "id", "userid", "jobspec", "reattach"); err != nil || s.ID != 4 || !s.Reattach {
		t.Fatalf("orphan start %+v %v", s, err)
	}
	again.expect(agentproto.TopicKill, wire.Request)
	r.agents[1] = again
	r.finish(1, 4, nil)
	r.expectAck(1, 4)
	// Nothing of it reached the job manager: the next start is answered
	// first.
	r.startR(5, rOf(1), false)
	r.expectStart(1, 5)
	r.respond(1, 5, execproto.TypeStart, nil)
	r.expectResponse(5, execproto.TypeStart)
	// And undrained as it answered: the last word on n1.
	var last execproto.HostDrain
	for _, d := range r.jm.drainsSeen() {
		if d.Host == "n1" {
			last = d
		}
	}
	if last != (execproto.HostDrain{Host: "n1"}) {
		t.Fatalf("n1's last host drain %+v, want an undrain", last)
	}
}

// A host not reached at the start is tried again with backoff.
func TestHostRetried(t *testing.T) {
	r, hl := newLossRig(t, time.Hour, 1)
	r.agents[0].c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		hl.mu.Lock()
		n := hl.tries["n0"]
		hl.mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("n0 tried %d times", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Back, with a job the job manager never gave it (its end lost in a
	// restart of fluxsched's store, say): killed, acknowledged at its end.
	again := hl.queue(t, "n0", agentproto.Hello{Build: "b", Running: []fluid.ID{9}})
	r.agents[0] = again
	r.expectStart(0, 9)
	again.expect(agentproto.TopicKill, wire.Request)
	r.finish(0, 9, nil)
	r.expectAck(0, 9)
	r.startR(6, rOf(0), false)
	r.expectStart(0, 6)
}
