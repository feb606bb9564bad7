package exec

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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

// fakeLauncher hands out agents played by the test over pipes.
type fakeLauncher struct {
	agents []*launcher.Agent
	err    error
}

func (f *fakeLauncher) Connect(context.Context) ([]*launcher.Agent, error) { return f.agents, f.err }

// end is the test's side of a connection.
type end struct {
	t    *testing.T
	name string
	c    wire.Conn
	// drains: the job manager's end keeps the host drain notices here
	// (execproto.TopicHostDrain) rather than among the stream it checks.
	keepDrains bool
	mu         sync.Mutex
	drains     []execproto.HostDrain
}

// drainsSeen is what the host drain notices said so far.
func (e *end) drainsSeen() []execproto.HostDrain {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]execproto.HostDrain(nil), e.drains...)
}

func (e *end) next() wire.Message {
	e.t.Helper()
	type got struct {
		m   wire.Message
		err error
	}
	ch := make(chan got, 1)
	go func() {
		for {
			m, err := e.c.Recv()
			if err == nil && e.keepDrains && m.Topic == execproto.TopicHostDrain {
				var d execproto.HostDrain
				if err := json.Unmarshal(m.Payload, &d); err == nil {
					e.mu.Lock()
					e.drains = append(e.drains, d)
					e.mu.Unlock()
					continue
				}
			}
			ch <- got{m, err}
			return
		}
	}()
	select {
	case g := <-ch:
		if g.err != nil {
			e.t.Fatalf("%s: %v", e.name, g.err)
		}
		return g.m
	case <-time.After(10 * time.Second):
		e.t.Fatalf("%s: nothing received", e.name)
	}
	return wire.Message{}
}

func (e *end) expect(topic string, typ wire.Type) wire.Message {
	e.t.Helper()
	m := e.next()
	if m.Topic != topic || m.Type != typ {
		e.t.Fatalf("%s: got %s %s %s, want %s %s", e.name, m.Topic, m.Type, m.Payload, topic, typ)
	}
	return m
}

func (e *end) send(m wire.Message, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.Send(m); err != nil {
		e.t.Fatal(err)
	}
}

type rig struct {
	t      *testing.T
	jm     *end
	agents []*end
	done   chan error
}

// newRig runs the router over agents whose hellos are given, this
// build's first, and plays the job manager's hello answer.
func newRig(t *testing.T, hellos ...agentproto.Hello) (*rig, execproto.Hello) {
	r := &rig{t: t, done: make(chan error, 1)}
	fl := &fakeLauncher{}
	for i, h := range hellos {
		ours, theirs := wire.Pipe()
		fl.agents = append(fl.agents, &launcher.Agent{Conn: ours, Hello: h, Name: "agent" + string(rune('0'+i))})
		r.agents = append(r.agents, &end{t: t, name: h.Build, c: theirs})
	}
	jmEnd, svcEnd := wire.Pipe()
	r.jm = &end{t: t, name: "job manager", c: jmEnd}
	go func() { r.done <- Run(svcEnd, Options{Launcher: fl, KillGrace: 2 * time.Second}) }()
	t.Cleanup(func() { jmEnd.Close() })
	m := r.jm.expect(execproto.TopicHello, wire.Request)
	h, err := execproto.DecodeHello(m)
	if err != nil {
		t.Fatal(err)
	}
	r.jm.send(wire.NewResponse(execproto.TopicHello, nil))
	return r, h
}

func (r *rig) start(id fluid.ID, reattach bool) {
	r.jm.send(wire.NewRequest("job-exec.start", execproto.Start{ID: id, UserID: 0, Jobspec: json.RawMessage(`{}`), Reattach: reattach, R: json.RawMessage(`{}`)}))
}

// expectStart checks that agent i got the start of id.
func (r *rig) expectStart(i int, id fluid.ID) agentproto.Start {
	r.t.Helper()
	var s agentproto.Start
	if err := wire.Decode(r.agents[i].expect(agentproto.TopicStart, wire.Request), &s, "id", "userid", "jobspec", "reattach"); err != nil {
		r.t.Fatal(err)
	}
	if s.ID != id {
		r.t.Fatalf("agent %d: start of %s, want %s", i, s.ID, id)
	}
	return s
}

func (r *rig) respond(i int, id fluid.ID, typ string, data any) {
	r.t.Helper()
	m, err := execproto.NewResponse("job-exec", id, typ, data)
	if err != nil {
		r.t.Fatal(err)
	}
	m.Topic = agentproto.TopicStart
	r.agents[i].send(m, nil)
}

// expectResponse checks the job manager's next message.
func (r *rig) expectResponse(id fluid.ID, typ string) execproto.Response {
	r.t.Helper()
	resp, _, err := execproto.DecodeResponse(r.jm.expect("job-exec.start", wire.Response))
	if err != nil {
		r.t.Fatal(err)
	}
	if resp.ID != id || resp.Type != typ {
		r.t.Fatalf("job manager got %s %s, want %s %s", resp.ID, resp.Type, id, typ)
	}
	return resp
}

func (r *rig) ack(ids ...fluid.ID) {
	r.jm.send(wire.NewRequest("job-exec.ack", execproto.Ack{IDs: ids}))
}

func (r *rig) expectAck(i int, ids ...fluid.ID) {
	r.t.Helper()
	var a agentproto.Ack
	if err := wire.Decode(r.agents[i].expect(agentproto.TopicAck, wire.Request), &a, "ids"); err != nil {
		r.t.Fatal(err)
	}
	if len(a.IDs) != len(ids) {
		r.t.Fatalf("agent %d: ack %v, want %v", i, a.IDs, ids)
	}
	for k := range ids {
		if a.IDs[k] != ids[k] {
			r.t.Fatalf("agent %d: ack %v, want %v", i, a.IDs, ids)
		}
	}
}

func (r *rig) finish(i int, id fluid.ID, usage *execproto.Usage) {
	r.respond(i, id, execproto.TypeFinish, execproto.Finish{Status: 0, Usage: usage})
	r.respond(i, id, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
}

// A new job goes to this build's agent with the kill grace; its
// responses, usage too, reach the job manager as RFC 32's; the job
// manager's ack reaches the agent.
func TestStartFinishAck(t *testing.T) {
	r, h := newRig(t, agentproto.Hello{Build: "new", PID: 1})
	if len(h.Ended) != 0 {
		t.Fatalf("hello ended = %v", h.Ended)
	}
	r.start(7, false)
	if s := r.expectStart(0, 7); s.KillGrace != 2 {
		t.Errorf("kill grace = %v, want 2", s.KillGrace)
	}
	r.respond(0, 7, execproto.TypeStart, nil)
	r.expectResponse(7, execproto.TypeStart)
	r.finish(0, 7, &execproto.Usage{UserCPU: 1, SysCPU: 2, MaxRSS: 3})
	_, data, err := execproto.DecodeResponse(r.jm.expect("job-exec.start", wire.Response))
	if f, ok := data.(*execproto.Finish); err != nil || !ok || f.Usage == nil || f.Usage.MaxRSS != 3 {
		t.Fatalf("finish = %#v, %v", data, err)
	}
	r.expectResponse(7, execproto.TypeRelease)
	r.ack(7)
	r.expectAck(0, 7)
	// Kills and exceptions of a job no agent holds any more go nowhere.
	r.jm.send(wire.NewRequest("job-exec.kill", execproto.Kill{ID: 7, Signal: 15}))
	r.start(8, false)
	r.expectStart(0, 8)
}

// An upgrade: the agent of the older build is retired, keeps the jobs it
// runs (taken back there, as are its unacknowledged ends, named in the
// hello), and new jobs go to this build's agent.
func TestUpgradeRoutesByHolder(t *testing.T) {
	r, h := newRig(t,
		agentproto.Hello{Build: "new", PID: 1},
		agentproto.Hello{Build: "old", PID: 2, Running: []fluid.ID{1}, Ended: []fluid.ID{2}})
	if len(h.Ended) != 1 || h.Ended[0] != 2 {
		t.Fatalf("hello ended = %v, want [2]", h.Ended)
	}
	r.agents[1].expect(agentproto.TopicRetire, wire.Request)
	r.start(1, true)
	r.expectStart(1, 1)
	r.start(2, true)
	r.expectStart(1, 2)
	r.start(3, false)
	r.expectStart(0, 3)
	// Signals follow the job to its agent.
	r.jm.send(wire.NewRequest("job-exec.kill", execproto.Kill{ID: 1, Signal: 10}))
	var k execproto.Kill
	if err := wire.Decode(r.agents[1].expect(agentproto.TopicKill, wire.Request), &k, "id", "signal"); err != nil || k.ID != 1 || k.Signal != 10 {
		t.Fatalf("kill = %+v, %v", k, err)
	}
	r.jm.send(wire.NewRequest("job-exec.exception", execproto.ExceptionNotice{ID: 3, Type: "cancel"}))
	r.agents[0].expect(agentproto.TopicException, wire.Request)

	r.finish(1, 1, nil)
	r.expectResponse(1, execproto.TypeFinish)
	r.expectResponse(1, execproto.TypeRelease)
	r.finish(1, 2, nil)
	r.expectResponse(2, execproto.TypeFinish)
	r.expectResponse(2, execproto.TypeRelease)
	r.ack(1, 2)
	r.expectAck(1, 1, 2)
	// The retired agent exits, holding nothing: the service goes on.
	r.agents[1].c.Close()
	r.start(4, false)
	r.expectStart(0, 4)
	r.expectServing()
}

// expectServing fails the test if Run has returned.
func (r *rig) expectServing() {
	r.t.Helper()
	select {
	case err := <-r.done:
		r.t.Fatalf("Run returned %v", err)
	default:
	}
}

// Losing an agent that runs jobs ends the registration, so that the job
// manager reattaches them through a new one.
func TestAgentLostEndsRegistration(t *testing.T) {
	r, _ := newRig(t, agentproto.Hello{Build: "new", PID: 1})
	r.start(5, false)
	r.expectStart(0, 5)
	r.agents[0].c.Close()
	select {
	case err := <-r.done:
		if err == nil || !strings.Contains(err.Error(), "hung up") {
			t.Fatalf("Run = %v, want the agent's loss", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

// RFC 32: a second start while a job's stream is open is a protocol
// error, answered with an error response.
func TestSecondStartIsFatal(t *testing.T) {
	r, _ := newRig(t, agentproto.Hello{Build: "new", PID: 1})
	r.start(5, false)
	r.expectStart(0, 5)
	r.start(5, false)
	if m := r.jm.expect("job-exec.start", wire.Response); m.Errnum != wire.EPROTO {
		t.Fatalf("second start answered %+v", m)
	}
	if err := <-r.done; err == nil {
		t.Fatal("Run returned nil")
	}
}

// The job manager hanging up ends Run quietly; the agents' connections
// are closed and their jobs left running.
func TestManagerHangUp(t *testing.T) {
	r, _ := newRig(t, agentproto.Hello{Build: "new", PID: 1})
	r.jm.c.Close()
	if err := <-r.done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if _, err := r.agents[0].c.Recv(); err != io.EOF {
		t.Fatalf("agent connection: %v, want closed", err)
	}
}

// A launcher that cannot reach or start an agent fails the registration.
func TestNoAgent(t *testing.T) {
	_, svc := wire.Pipe()
	err := Run(svc, Options{Launcher: &fakeLauncher{err: errors.New("the exec agent did not answer")}})
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("Run = %v", err)
	}
}

func TestStartID(t *testing.T) {
	for in, want := range map[string]fluid.ID{
		`{"id":42,"userid":0,"jobspec":{},"reattach":false}`: 42,
		`{"userid":0,"id":42}`:                               0,
		`{"id":"42","userid":0}`:                             0,
		`{"id":42}`:                                          0,
		`{"id":,"x":1}`:                                      0,
	} {
		if got, ok := startID(json.RawMessage(in)); got != want || ok != (want != 0) {
			t.Errorf("startID(%s) = %v %v, want %v", in, got, ok, want)
		}
	}
}

// A start not written as the job manager writes it is decoded in full:
// routed all the same, or refused by name when it is bad.
func TestStartDecodedInFull(t *testing.T) {
	r, _ := newRig(t, agentproto.Hello{Build: "new", PID: 1})
	r.jm.send(wire.Message{Topic: "job-exec.start", Type: wire.Request,
		Payload: json.RawMessage(`{"reattach":false,"jobspec":{},"userid":0,"id":9}`)}, nil)
	if s := r.expectStart(0, 9); s.KillGrace != 2 {
		t.Errorf("kill grace = %v", s.KillGrace)
	}
	r.jm.send(wire.Message{Topic: "job-exec.start", Type: wire.Request, Payload: json.RawMessage(`{"userid":0}`)}, nil)
	if m := r.jm.expect("job-exec.start", wire.Response); m.Errnum != wire.EPROTO || !strings.Contains(m.Errstr, `"id"`) {
		t.Fatalf("bad start answered %+v", m)
	}
}

// A start's memory limit is what its R grants, summed over its ranks (the
// local agent runs them all); a start whose R grants none has none.
func TestStartMemory(t *testing.T) {
	r2 := `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":67108864},{"rank":"1","children":{"core":"0"},"memory":1048576}],"nodelist":["n0","n1"]}}`
	tests := []struct {
		name    string
		jobspec string
		R       string
		want    uint64
	}{
		{"no memory", `{}`, `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["n0"]}}`, 0},
		{"memory in the jobspec alone", `{"resources":[{"type":"memory","count":4}]}`, `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["n0"]}}`, 0},
		{"two ranks", `{}`, r2, 64<<20 + 1<<20},
		{"a bad R", `{}`, `{"version":1,"execution":{"R_lite":[{"rank":"0","memory":"lots"}]}}`, 0},
	}
	r, _ := newRig(t, agentproto.Hello{Build: "new", PID: 1})
	for i, tc := range tests {
		id := fluid.ID(100 + i)
		r.jm.send(wire.NewRequest("job-exec.start", execproto.Start{ID: id, Jobspec: json.RawMessage(tc.jobspec), R: json.RawMessage(tc.R)}))
		if s := r.expectStart(0, id); s.Memory != tc.want || s.KillGrace != 2 {
			t.Errorf("%s: memory %d, kill grace %v; want %d, 2", tc.name, s.Memory, s.KillGrace, tc.want)
		}
		if got := memoryOf(json.RawMessage(`{"R":` + tc.R + `}`)); got != tc.want {
			t.Errorf("%s: memoryOf = %d, want %d", tc.name, got, tc.want)
		}
	}
}
