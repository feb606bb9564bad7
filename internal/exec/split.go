package exec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/wire"
)

// Routing by host (issue 29). With a launcher.HostLauncher every agent
// runs the ranks of its own hosts (launcher.Agent.Hosts), so a job whose R
// spans several hosts is started on each of their agents: each gets the
// whole R and the ranks it runs (agentproto.Start.Ranks), not R cut down
// to its ranks, because the layout of tasks over R (which task is global
// rank n, how many nodes and tasks the job has) must come out the same on
// every host, and it is computed over all of R's ranks.
//
// Toward the job manager the parts are one RFC 32 stream: one start
// response once every part has started (or ended without starting), each
// part's exceptions as they come, one finish once every started part has
// finished, with the worst wait status (the highest, as flux-core's
// job-exec keeps the largest of its shells' statuses) and the usage
// summed (the largest resident set kept), then one final release once
// every part has released. Kills, exceptions, expirations and acks go to
// every part.

// split is a job run by the agents of several hosts.
type split struct {
	parts []*part
	open  bool // its start stream is open
	// started and finished say what was sent to the job manager.
	started, finished bool
	finish            agentproto.Finish
	haveFinish        bool
}

// part is the share of a split job one agent runs.
type part struct {
	l                           *agentLink
	started, finished, released bool
	// lost: given up with its host (hosts.go).
	lost bool
	// payload is the start sent for it, for a reattach.
	payload []byte
	// exceptions counts those passed on; skip those to drop, said again
	// after a reattach.
	exceptions, skip int
}

func (s *split) part(l *agentLink) *part {
	for _, p := range s.parts {
		if p.l == l {
			return p
		}
	}
	return nil
}

// hostMode reports whether the agents are one per host: then starts are
// routed by R's hosts.
func (r *router) hostMode() bool { return r.byHost != nil }

// addHeld records, from an agent's hello, a job it runs or holds the end
// of.
func (r *router) addHeld(l *agentLink, id fluid.ID) {
	s := r.jobs[id]
	if s == nil {
		s = &split{}
		r.jobs[id] = s
	}
	if s.part(l) == nil {
		s.parts = append(s.parts, &part{l: l})
	}
}

// startSplit sends a start to the agents of the job's hosts, each with its
// ranks. A job with a host no agent was reached for is refused, as an
// agent refuses one it cannot run: nothing of it starts anywhere.
func (r *router) startSplit(id fluid.ID, m wire.Message) error {
	if s := r.jobs[id]; s != nil && s.open {
		return r.fatal(m.Topic, fmt.Sprintf(errAlreadyRunning, id))
	}
	var req struct {
		R json.RawMessage `json:"R"`
	}
	var parts []*part
	ranks := map[*agentLink]*[]uint{}
	memory := map[*agentLink]uint64{}
	var missing []string
	err := json.Unmarshal(m.Payload, &req)
	var rs *rset.R
	if err == nil {
		rs, err = rset.Parse(req.R)
	}
	if err != nil {
		// The agents refuse it in their words: the first host's does.
		if len(r.agents) == 0 {
			return r.refuseStart(id, "exec", "no exec agent reached")
		}
		parts = []*part{{l: r.agents[0]}}
		ranks[r.agents[0]] = &[]uint{}
	} else {
		for _, n := range rs.Nodes() {
			l := r.byHost[n.Hostname]
			if l == nil || l.gone {
				if !slices.Contains(missing, n.Hostname) {
					missing = append(missing, n.Hostname)
				}
				continue
			}
			if ranks[l] == nil {
				ranks[l] = &[]uint{}
				parts = append(parts, &part{l: l})
			}
			*ranks[l] = append(*ranks[l], n.Rank)
			memory[l] += n.Memory
		}
	}
	if len(missing) > 0 {
		return r.refuseStart(id, "node-failure", fmt.Sprintf("no exec agent reached on host %s", strings.Join(missing, ",")))
	}
	s := &split{parts: parts, open: true}
	r.jobs[id] = s
	for _, p := range parts {
		set := idset.Of((*ranks[p.l])...)
		q := make([]byte, 0, len(m.Payload)+64)
		q = append(q, m.Payload[:len(m.Payload)-1]...)
		q = append(q, `,"kill_grace":`...)
		q = strconv.AppendFloat(q, agentproto.Seconds(r.opts.KillGrace), 'g', -1, 64)
		if n := memory[p.l]; n > 0 {
			q = append(q, `,"memory":`...)
			q = strconv.AppendUint(q, n, 10)
		}
		if !set.IsEmpty() {
			q = append(q, `,"ranks":`...)
			q = strconv.AppendQuote(q, set.String())
		}
		q = append(q, '}')
		p.payload = q
		r.forward(p.l, wire.Message{Topic: agentproto.TopicStart, Type: wire.Request, Payload: q})
	}
	return nil
}

// refuseStart answers a start that runs nowhere: an exception, then the
// final release.
func (r *router) refuseStart(id fluid.ID, typ, note string) error {
	exc, _ := json.Marshal(execproto.Exception{Severity: 0, Type: typ, Note: note})
	r.sendResponse(id, execproto.TypeException, exc)
	r.sendResponse(id, execproto.TypeRelease, finalRelease)
	return nil
}

var finalRelease = []byte(`{"ranks":"all","final":true}`)

func (r *router) sendResponse(id fluid.ID, typ string, data []byte) {
	b, _ := json.Marshal(execproto.Response{ID: id, Type: typ, Data: data})
	r.send(wire.Message{Topic: r.topic(execproto.MethodStart), Type: wire.Response, Payload: b})
}

// toParts passes a notification about a job to every agent running a part
// of it.
func (r *router) toParts(id fluid.ID, topic string, m wire.Message) {
	s := r.jobs[id]
	if s == nil {
		return
	}
	for _, p := range s.parts {
		if !p.l.gone {
			r.forward(p.l, wire.Message{Topic: topic, Type: wire.Request, Payload: m.Payload})
		}
	}
}

// ackSplit passes acknowledgements to every agent holding a part.
func (r *router) ackSplit(ids []fluid.ID) {
	byAgent := map[*agentLink][]fluid.ID{}
	var order []*agentLink
	for _, id := range ids {
		s := r.jobs[id]
		if s == nil || s.open {
			continue // unknown, or taken back meanwhile: its end comes again
		}
		delete(r.jobs, id)
		for _, p := range s.parts {
			if byAgent[p.l] == nil {
				order = append(order, p.l)
			}
			byAgent[p.l] = append(byAgent[p.l], id)
		}
	}
	for _, l := range order {
		if !l.gone {
			r.sendAgent(l, agentproto.TopicAck, agentproto.Ack{IDs: byAgent[l]})
		}
	}
}

// fromPart serves a start response of one part of a job.
func (r *router) fromPart(l *agentLink, m wire.Message) error {
	var resp execproto.Response
	if err := json.Unmarshal(m.Payload, &resp); err != nil {
		return fmt.Errorf("exec: the exec agent %s: a start response that does not read: %w", l.Name, err)
	}
	if r.fromOrphan(l, resp) {
		return nil
	}
	s := r.jobs[resp.ID]
	var p *part
	if s != nil {
		p = s.part(l)
	}
	if p == nil || !s.open || p.lost {
		r.opts.Log.Warn("exec agent: a response for a job it does not run here", "agent", l.Name, "job", resp.ID, "type", resp.Type)
		return nil
	}
	switch resp.Type {
	case execproto.TypeStart:
		p.started = true
	case execproto.TypeException:
		if p.skip > 0 {
			p.skip--
			return nil
		}
		p.exceptions++
		r.send(wire.Message{Topic: r.topic(execproto.MethodStart), Type: wire.Response, Payload: m.Payload})
		var e execproto.Exception
		if json.Unmarshal(resp.Data, &e) == nil && e.Severity == 0 {
			r.tellOthers(resp.ID, s, p, e)
		}
	case execproto.TypeFinish:
		if p.finished {
			return nil
		}
		var f agentproto.Finish
		if err := json.Unmarshal(resp.Data, &f); err != nil {
			return fmt.Errorf("exec: the exec agent %s: a finish that does not read: %w", l.Name, err)
		}
		p.finished = true
		if !s.haveFinish || f.Status > s.finish.Status {
			s.finish.Status = f.Status
		}
		if f.Usage != nil {
			if s.finish.Usage == nil {
				s.finish.Usage = &agentproto.Usage{}
			}
			s.finish.Usage.UserCPU += f.Usage.UserCPU
			s.finish.Usage.SysCPU += f.Usage.SysCPU
			s.finish.Usage.MaxRSS = max(s.finish.Usage.MaxRSS, f.Usage.MaxRSS)
		}
		s.finish.Timestamp = max(s.finish.Timestamp, f.Timestamp)
		s.haveFinish = true
	case execproto.TypeRelease:
		var rel execproto.Release
		if p.released {
			return nil
		}
		if json.Unmarshal(resp.Data, &rel) == nil && rel.Final {
			p.released = true
		}
	}
	r.progress(resp.ID, s)
	return nil
}

// progress sends what the job manager may now learn of a split job.
func (r *router) progress(id fluid.ID, s *split) {
	all := func(f func(*part) bool) bool {
		for _, p := range s.parts {
			if !f(p) {
				return false
			}
		}
		return true
	}
	if !s.started && all(func(p *part) bool { return p.started || p.released }) &&
		slices.ContainsFunc(s.parts, func(p *part) bool { return p.started }) {
		s.started = true
		r.sendResponse(id, execproto.TypeStart, []byte(`{}`))
	}
	released := all(func(p *part) bool { return p.released })
	if s.started && !s.finished && s.haveFinish &&
		(released || all(func(p *part) bool { return p.finished || (!p.started && p.released) })) {
		s.finished = true
		b, _ := json.Marshal(s.finish)
		r.sendResponse(id, execproto.TypeFinish, b)
	}
	if released {
		s.open = false
		r.sendResponse(id, execproto.TypeRelease, finalRelease)
	}
}

// tellOthers passes a fatal exception raised on one part of a job to the
// others, whose tasks then end: the job manager sends no notice of an
// exception the exec service raised (it takes the service to know), and
// on one host the agent ends the job's tasks itself.
func (r *router) tellOthers(id fluid.ID, s *split, from *part, e execproto.Exception) {
	for _, p := range s.parts {
		if p != from && !p.l.gone && !p.released {
			r.sendAgent(p.l, agentproto.TopicException, execproto.ExceptionNotice{ID: id, Severity: e.Severity, Type: e.Type, Note: e.Note})
		}
	}
}
