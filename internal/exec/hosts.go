package exec

import (
	"context"
	"fmt"
	"strconv"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/wire"
)

// Lost hosts (issue 29). With one agent per host, the loss of a host's
// connection does not end the registration: the jobs there run on, with
// their agent, and the exec service reaches the host again
// (HostLauncher.ConnectHost, retried from retryMin doubling to retryMax).
// The agent's hello names the jobs it runs or holds the end of; each part
// the job manager still waits for is taken back (a start with reattach:
// the agent never launches a job twice) and its stream goes on, what it
// had already reported not passed on twice.
//
// A host lost for longer than Options.HostTimeout is given up: each job
// with a part on it that has not ended there gets a node-failure exception
// (severity 0, so the job manager ends the job, and the tasks on the other
// hosts are killed on its exception notice), and the part counts as
// released. Should the host come back later its agent's jobs are no
// longer the job manager's to see: they are taken back only to be killed,
// and acknowledged at their end, so that nothing of a job given up runs
// on after the job manager freed its resources, and no job runs twice.

const (
	retryMin = 100 * time.Millisecond
	retryMax = 30 * time.Second
)

// lose starts the reconnection of host, whose agent l (nil: never
// reached) is gone, and its host-timeout. Called with mu held.
func (r *router) lose(host string, l *agentLink) {
	if l != nil {
		l.gone = true
	}
	if r.timers == nil {
		r.timers = map[string]*time.Timer{}
	}
	if t := r.timers[host]; t != nil {
		t.Stop()
	}
	if r.opts.HostTimeout > 0 {
		r.timers[host] = time.AfterFunc(r.opts.HostTimeout, func() { r.hostTimedOut(host) })
	} else {
		delete(r.timers, host)
	}
	hl, ok := r.opts.Launcher.(launcher.HostLauncher)
	if !ok {
		return
	}
	go r.reconnect(hl, host)
}

// reconnect reaches host's agent again, with backoff, until it answers
// or the registration ends.
func (r *router) reconnect(hl launcher.HostLauncher, host string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	wait := retryMin
	for {
		t := time.NewTimer(wait)
		select {
		case <-r.done:
			t.Stop()
			return
		case <-t.C:
		}
		a, err := hl.ConnectHost(ctx, host)
		if err == nil {
			r.reattach(host, a)
			return
		}
		r.mu.Lock()
		over := r.over
		r.mu.Unlock()
		if over {
			return
		}
		r.mu.Lock()
		if r.lostWhy == nil {
			r.lostWhy = map[string]string{}
		}
		r.lostWhy[host] = err.Error()
		if !r.drained[host] {
			// Drained in the launcher's words (ssh's own line), once
			// per outage: the scheduler places nothing more there.
			r.hostDrain(host, true, err.Error())
		}
		r.mu.Unlock()
		r.opts.Log.Warn("exec agent not reached", "host", host, "err", err, "retry", min(2*wait, retryMax))
		wait = min(2*wait, retryMax)
	}
}

// reattach takes a host's agent back: the parts it runs go on on it.
func (r *router) reattach(host string, a *launcher.Agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		a.Conn.Close()
		return
	}
	if t := r.timers[host]; t != nil {
		t.Stop()
		delete(r.timers, host)
	}
	if a.Hosts == nil {
		a.Hosts = []string{host}
	}
	// Always: a drain an earlier registration made is lifted too (the
	// loop lifts only the exec service's, and nothing if none).
	r.hostDrain(host, false, "")
	delete(r.lostWhy, host)
	l := &agentLink{Agent: a}
	old := r.byHost[host]
	r.agents = append(r.agents, l)
	for _, h := range a.Hosts {
		r.byHost[h] = l
	}
	r.opts.Log.Info("exec agent reached again", "host", host, "agent", a.Name, "running", len(a.Hello.Running), "ended", len(a.Hello.Ended))
	held := map[fluid.ID]bool{}
	for _, id := range a.Hello.Running {
		held[id] = true
	}
	for _, id := range a.Hello.Ended {
		held[id] = true
	}
	for id := range held {
		s := r.jobs[id]
		var p *part
		if s != nil && old != nil {
			p = s.part(old)
		}
		if p == nil || p.lost {
			// Given up, or acknowledged meanwhile: killed, then forgotten.
			r.orphans[id] = append(r.orphans[id], l)
			r.forward(l, wire.Message{Topic: agentproto.TopicStart, Type: wire.Request,
				Payload: []byte(`{"id":` + strconv.FormatUint(uint64(id), 10) + `,"userid":0,"jobspec":{},"reattach":true}`)})
			r.sendAgent(l, agentproto.TopicKill, execproto.Kill{ID: id, Signal: 9})
			continue
		}
		p.l = l
		if !s.open {
			continue // held from a hello: the job manager's reattach comes
		}
		// The agent says again what it said: the exceptions already passed
		// on are dropped; a finish or release already had is ignored.
		p.skip = p.exceptions
		r.forward(l, wire.Message{Topic: agentproto.TopicStart, Type: wire.Request, Payload: reattachPayload(p.payload)})
	}
	// A part of a job that this agent does not hold: it ended and its end
	// was lost with the agent's journal; it is given up as a lost host's.
	for id, s := range r.jobs {
		for _, p := range s.parts {
			if s.open && p.l == old && old != nil && !held[id] && !p.released {
				p.l = l
				r.giveUp(id, s, p, fmt.Sprintf("host %s: its exec agent no longer holds the job", host))
			}
		}
	}
	go r.read(l)
}

// reattachPayload is a part's start with reattach set: the agent holds the
// job, so it is taken back, never launched.
func reattachPayload(p []byte) []byte {
	const from, to = `"reattach":false`, `"reattach":true`
	i := indexOf(p, from)
	if i < 0 {
		return p
	}
	out := make([]byte, 0, len(p)+1)
	out = append(out, p[:i]...)
	out = append(out, to...)
	return append(out, p[i+len(from):]...)
}

func indexOf(p []byte, s string) int {
	for i := 0; i+len(s) <= len(p); i++ {
		if string(p[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// hostTimedOut gives up the parts on host, lost for longer than
// HostTimeout.
func (r *router) hostTimedOut(host string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over || r.timers[host] == nil {
		return // ended, or reached again meanwhile
	}
	delete(r.timers, host)
	l := r.byHost[host]
	r.opts.Log.Warn("exec agent lost past host-timeout: its jobs end", "host", host, "host-timeout", r.opts.HostTimeout)
	for id, s := range r.jobs {
		for _, p := range s.parts {
			if l != nil && p.l == l && !p.released {
				r.giveUp(id, s, p, fmt.Sprintf("host %s lost for longer than host-timeout (%s)", host, r.opts.HostTimeout))
			}
		}
	}
}

// giveUp ends a part for the job manager with a node-failure exception.
func (r *router) giveUp(id fluid.ID, s *split, p *part, note string) {
	p.lost, p.released = true, true
	if s.open {
		r.refuseNote(id, note)
		r.tellOthers(id, s, p, execproto.Exception{Severity: 0, Type: "node-failure", Note: note})
		r.progress(id, s)
	}
}

func (r *router) refuseNote(id fluid.ID, note string) {
	exc, _ := json.Marshal(execproto.Exception{Severity: 0, Type: "node-failure", Note: note})
	r.sendResponse(id, execproto.TypeException, exc)
}

// fromOrphan serves a response for an orphan: at its final release the
// agent is told it may forget it.
func (r *router) fromOrphan(l *agentLink, resp execproto.Response) bool {
	ls := r.orphans[resp.ID]
	i := -1
	for k, o := range ls {
		if o == l {
			i = k
		}
	}
	if i < 0 {
		return false
	}
	var rel execproto.Release
	if resp.Type == execproto.TypeRelease && json.Unmarshal(resp.Data, &rel) == nil && rel.Final {
		r.orphans[resp.ID] = append(ls[:i], ls[i+1:]...)
		if len(r.orphans[resp.ID]) == 0 {
			delete(r.orphans, resp.ID)
		}
		r.sendAgent(l, agentproto.TopicAck, agentproto.Ack{IDs: []fluid.ID{resp.ID}})
	}
	return true
}

// hostDrain tells the job manager that host cannot be reached (drain,
// with why) or answers again. The loop drains it through the drain write
// and undrains only a drain the exec service made, never an admin's.
// Called with mu held.
func (r *router) hostDrain(host string, drain bool, reason string) {
	if r.drained == nil {
		r.drained = map[string]bool{}
	}
	r.drained[host] = drain
	m, err := wire.NewRequest(execproto.TopicHostDrain, execproto.HostDrain{Host: host, Drain: drain, Reason: reason})
	if err != nil {
		return // our own type always encodes
	}
	r.send(m)
}
