package exec

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Outputs asks a host's agent on its connection, with a matchtag of its
// own, and hands back that answer; a host whose connection is gone, or
// goes while the request waits, is an error at once, not a wait.
func TestOutputsRead(t *testing.T) {
	var outs Outputs
	r, _ := newLossRig(t, 0, 2, func(o *Options) { o.Outputs = &outs })
	deadline := time.Now().Add(5 * time.Second)
	for {
		outs.mu.Lock()
		up := outs.r != nil
		outs.mu.Unlock()
		if up {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the registration never served Outputs")
		}
		time.Sleep(time.Millisecond)
	}
	type result struct {
		out agentproto.Output
		err error
	}
	read := func(host string, req agentproto.OutputRequest) chan result {
		ch := make(chan result, 1)
		go func() {
			out, err := outs.Read(context.Background(), host, req)
			ch <- result{out, err}
		}()
		return ch
	}
	want := agentproto.OutputRequest{ID: 5, UserID: 7, Stream: "stderr", Offset: 3, Max: 10}
	got := read("n0", want)
	m := r.agents[0].expect(agentproto.TopicOutput, wire.Request)
	req, err := agentproto.DecodeOutputRequest(m)
	if err != nil || req != want || m.Matchtag == 0 {
		t.Fatalf("agent.output = %+v (matchtag %d), %v; want %+v with a matchtag", req, m.Matchtag, err, want)
	}
	// An answer of another request is not this one's.
	stray, _ := wire.NewResponse(agentproto.TopicOutput, agentproto.Output{Data: []byte("stray")})
	stray.Matchtag = m.Matchtag + 100
	r.agents[0].send(stray, nil)
	resp, err := wire.NewResponse(agentproto.TopicOutput, agentproto.Output{Data: []byte("hello"), Size: 8})
	r.agents[0].send(resp.Answering(m), err)
	if res := <-got; res.err != nil || string(res.out.Data) != "hello" || res.out.Size != 8 {
		t.Errorf("Read = %q size %d, %v; want hello, 8", res.out.Data, res.out.Size, res.err)
	}
	// The agent's error is the reader's.
	got = read("n0", want)
	m = r.agents[0].expect(agentproto.TopicOutput, wire.Request)
	r.agents[0].send(wire.NewError(agentproto.TopicOutput, 1, "permission denied: job 5 is not yours").Answering(m), nil)
	if res := <-got; res.err == nil || !strings.Contains(res.err.Error(), "not yours") {
		t.Errorf("Read of a refused job = %v, want the agent's refusal", res.err)
	}
	// A request in flight when the host's connection drops.
	got = read("n1", want)
	r.agents[1].expect(agentproto.TopicOutput, wire.Request)
	r.agents[1].c.Close()
	select {
	case res := <-got:
		if res.err == nil || !strings.Contains(res.err.Error(), "connection to its exec agent was lost") {
			t.Errorf("Read across a lost connection = %v", res.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read waits on a lost host")
	}
	// Then the host is unreachable, at once, in the launcher's words
	// once it has tried.
	deadline = time.Now().Add(5 * time.Second)
	for {
		_, err := outs.Read(context.Background(), "n1", want)
		if err == nil || !strings.Contains(err.Error(), "unreachable: ") {
			t.Fatalf("Read of a lost host = %v, want unreachable", err)
		}
		if strings.Contains(err.Error(), "Connection refused") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Read of a lost host = %v, never in the launcher's words", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := outs.Read(context.Background(), "n9", want); err == nil || !strings.Contains(err.Error(), "not reached yet") {
		t.Errorf("Read of a host with no agent = %v", err)
	}
}
