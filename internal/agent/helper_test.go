package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/wire"
)

// running is an agent served by a goroutine, as `fluxsched agent` runs it.
type running struct {
	*Agent
	stopCtx context.CancelFunc
	ran     chan error
}

// startAgent starts an agent on state; the test's cleanup closes it if the
// test has not (jobs are left as a kill -9 would leave them, so tests that
// run real jobs end them first).
func startAgent(t *testing.T, state, build string) *running {
	t.Helper()
	a, err := New(Options{StateDir: state, Build: build, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Agent: a, stopCtx: cancel, ran: make(chan error, 1)}
	go func() { r.ran <- a.Run(ctx) }()
	t.Cleanup(func() {
		select {
		case <-r.ran:
		default:
			a.Close()
			<-r.ran
		}
		cancel()
	})
	return r
}

// exited waits for Run to return.
func (r *running) exited(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-r.ran:
		r.ran <- err // for the cleanup
		return err
	case <-time.After(within):
		t.Fatalf("agent still running after %s", within)
		return nil
	}
}

// peer is fluxsched's end of an agent connection, over the real socket.
type peer struct {
	t  testing.TB
	lc wire.Conn

	mu     sync.Mutex
	cond   *sync.Cond
	msgs   []wire.Message // responses other than agent.start
	starts []resp
	eof    bool
}

type resp struct {
	id   fluid.ID
	typ  string
	data json.RawMessage
}

func dial(t testing.TB, state, build string) *peer {
	t.Helper()
	c, err := net.Dial("unix", SocketPath(filepath.Join(state, agentproto.Dir), build))
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, lc: wire.NewLineConn(c, c, c.Close)}
	p.cond = sync.NewCond(&p.mu)
	go p.read()
	t.Cleanup(func() { p.lc.Close() })
	return p
}

func (p *peer) read() {
	for {
		m, err := p.lc.Recv()
		p.mu.Lock()
		if err != nil {
			p.eof = true
			p.cond.Broadcast()
			p.mu.Unlock()
			return
		}
		if m.Topic == agentproto.TopicStart && !m.IsError() {
			var r execproto.Response
			if err := json.Unmarshal(m.Payload, &r); err != nil {
				p.t.Errorf("bad start response %s: %v", m.Payload, err)
			}
			// Checked as fluxsched's exec service checks it.
			if _, _, err := execproto.DecodeResponse(wire.Message{Topic: m.Topic, Type: m.Type, Payload: m.Payload}); err != nil {
				p.t.Errorf("start response %s: %v", m.Payload, err)
			}
			p.starts = append(p.starts, resp{id: r.ID, typ: r.Type, data: r.Data})
		} else {
			p.msgs = append(p.msgs, m)
		}
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

func (p *peer) send(topic string, v any) {
	p.t.Helper()
	m, err := wire.NewRequest(topic, v)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.lc.Send(m); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits until cond holds (under p.mu) or the deadline passes.
func (p *peer) wait(what string, within time.Duration, cond func() bool) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	t := time.AfterFunc(within, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer t.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for !cond() {
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; start responses so far: %v", what, p.starts)
		}
		p.cond.Wait()
	}
}

// call sends a request and returns its response.
func (p *peer) call(topic string, v any) wire.Message {
	p.t.Helper()
	p.mu.Lock()
	n := len(p.msgs)
	p.mu.Unlock()
	p.send(topic, v)
	var m wire.Message
	p.wait("a response to "+topic, 10*time.Second, func() bool {
		for _, x := range p.msgs[n:] {
			if x.Topic == topic {
				m = x
				return true
			}
		}
		return false
	})
	return m
}

func (p *peer) hello() agentproto.Hello {
	p.t.Helper()
	m := p.call(agentproto.TopicHello, agentproto.HelloRequest{Build: "test"})
	h, err := agentproto.DecodeHello(m)
	if err != nil {
		p.t.Fatal(err)
	}
	return h
}

func (p *peer) start(id fluid.ID, reattach bool, jobspec, r json.RawMessage) {
	p.t.Helper()
	p.send(agentproto.TopicStart, agentproto.Start{Start: execproto.Start{ID: id, UserID: uint32(os.Geteuid()),
		Jobspec: jobspec, R: r, Reattach: reattach}, KillGrace: 1})
}

// stream returns the types of id's start responses so far.
func (p *peer) stream(id fluid.ID) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.streamLocked(id)
}

func (p *peer) streamLocked(id fluid.ID) []string {
	var out []string
	for _, r := range p.starts {
		if r.id == id {
			out = append(out, r.typ)
		}
	}
	return out
}

// released waits for id's final release and returns its stream.
func (p *peer) released(id fluid.ID, within time.Duration) []resp {
	p.t.Helper()
	p.wait(fmt.Sprintf("job %d's release", id), within, func() bool {
		s := p.streamLocked(id)
		return len(s) > 0 && s[len(s)-1] == execproto.TypeRelease
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []resp
	for _, r := range p.starts {
		if r.id == id {
			out = append(out, r)
		}
	}
	return out
}

func types(rs []resp) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.typ
	}
	return out
}

func finish(t *testing.T, rs []resp) agentproto.Finish {
	t.Helper()
	for _, r := range rs {
		if r.typ == execproto.TypeFinish {
			var f agentproto.Finish
			if err := json.Unmarshal(r.data, &f); err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no finish in %v", types(rs))
	return agentproto.Finish{}
}

func exceptions(t *testing.T, rs []resp) []execproto.Exception {
	t.Helper()
	var out []execproto.Exception
	for _, r := range rs {
		if r.typ == execproto.TypeException {
			var e execproto.Exception
			if err := json.Unmarshal(r.data, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

func makeJobspec(t testing.TB, command ...string) json.RawMessage {
	t.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{Command: command, Environment: map[string]string{"PATH": os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func makeR(t testing.TB) json.RawMessage {
	t.Helper()
	b, err := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0")}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stateDir is a fresh state directory.
func stateDir(t *testing.T) string {
	d := t.TempDir()
	if err := os.MkdirAll(filepath.Join(d, "jobs"), 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
