// Package exec is the exec service: the service side of RFC 32, the job
// execution protocol, toward the job manager, and a router toward the exec
// agents that run the jobs (agentproto). Run reaches the agents through a
// launcher, registers with the job manager (exec-hello, naming the ends the
// agents hold unacknowledged), then passes each <service>.start request to
// an agent and the agent's responses back: start, any exception, finish
// with the job's wait status and usage, and the final release, last.
//
// A start goes to the agent that holds the job, running or ended and not
// acknowledged (from the agents' hello), so a job taken back after a
// restart is never launched a second time; any other start goes to the
// agent of this build. An agent of another build (an upgrade) keeps its
// jobs, reports them as they end, and is retired: it takes no new job and
// exits once every end it holds is acknowledged. Exceptions and kills go
// to the job's agent; the job manager's acks, which follow the commit of a
// job's final release, go to the agent that reported it.
//
// Losing an agent ends the registration, as losing the service would: Run
// returns an error, the job manager suspends the service, and the next Run
// (reaching a restarted agent, which has taken back its jobs from its
// journal) says hello again and every running job is reattached. Only a
// retired agent that holds nothing may go without that.
//
// With one agent per host (a launcher.HostLauncher's, Agent.Hosts set)
// a start goes to the agents of the hosts in the job's R instead, their
// parts one stream toward the job manager (split.go), and a lost host's
// agent is reached again, or its jobs given up after HostTimeout, without
// ending the registration (hosts.go).
package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/cycletrace"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/wire"
)

// Defaults of Options.
const (
	DefaultService = "job-exec"
	// DefaultKillGrace is flux-core job-exec's default kill-timeout.
	DefaultKillGrace = 5 * time.Second
)

// Reasons for conventional error responses; the job manager suspends the
// service until its next hello when it gets one (RFC 32).
const (
	errAlreadyRunning = "job %s is already running here"
	errUnknownMethod  = "unknown method"
)

// Options configure Run.
type Options struct {
	// Service is the name registered with exec-hello (DefaultService if
	// empty).
	Service string
	// Launcher reaches the agents; the first it returns is this build's,
	// which takes new jobs.
	Launcher launcher.Launcher
	// KillGrace is the time from SIGTERM (SIGALRM at the time limit) to
	// SIGKILL (DefaultKillGrace if zero), sent with each start.
	KillGrace time.Duration
	// Log takes what is worth telling the operator (nothing if nil).
	Log *slog.Logger
	// HostTimeout is [exec] host-timeout: with one agent per host, how
	// long a host's agent may stay lost before the jobs with a part on
	// it end with a node-failure exception; 0 (or less): never, as
	// config.Config.HostTimeout says of "0" and "inf".
	HostTimeout time.Duration
	// Outputs, if not nil, is served by each registration while it is
	// up: fluxsched's socket reads jobs' output through it from the
	// agents of other hosts (output.go).
	Outputs *Outputs
}

// Run registers as an exec service on conn and serves it until the job
// manager closes it (io.EOF), then returns nil. Running jobs are left to
// their agents: the next Run takes them back. A failed hello is returned
// as an error, as RFC 32 says the service must treat it as fatal; so is a
// start request Run must refuse (one it cannot decode, or a second start
// for a job whose stream is open), which it answers with a conventional
// error response, and so is the loss of an agent that holds jobs. Run it
// again on a new connection to register anew.
func Run(conn wire.Conn, opts Options) error {
	if opts.Service == "" {
		opts.Service = DefaultService
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Launcher == nil {
		return errors.New("exec: no launcher")
	}
	agents, err := opts.Launcher.Connect(context.Background())
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if len(agents) == 0 {
		return errors.New("exec: the launcher found no exec agent")
	}
	r := &router{conn: conn, opts: opts, holder: map[fluid.ID]*agentLink{}, streams: map[fluid.ID]*agentLink{},
		done: make(chan struct{})}
	if slices.ContainsFunc(agents, func(a *launcher.Agent) bool { return a.Hosts != nil }) {
		// One agent per host (a launcher.HostLauncher): starts are routed
		// by R's hosts (split.go), and each host's agent is of the build
		// its launcher asked for, so none is retired here.
		r.byHost, r.jobs, r.orphans = map[string]*agentLink{}, map[fluid.ID]*split{}, map[fluid.ID][]*agentLink{}
	}
	defer r.close()
	var ended []fluid.ID
	for _, a := range agents {
		opts.Log.Info("exec agent", "agent", a.Name, "build", a.Hello.Build, "pid", a.Hello.PID,
			"containment", a.Hello.Containment, "memory", a.Hello.Memory, "running", len(a.Hello.Running), "ended", len(a.Hello.Ended))
		if why := a.Hello.MemoryNotEnforced; why != "" && len(r.agents) == 0 {
			// The agent that takes new jobs: their memory is scheduled,
			// not enforced.
			opts.Log.Info(agentproto.NotEnforcedLine(why), "agent", a.Name)
		}
		l := &agentLink{Agent: a, retiring: a.Hello.Retiring}
		r.agents = append(r.agents, l)
		if r.hostMode() {
			for _, h := range a.Hosts {
				r.byHost[h] = l
			}
			for _, id := range a.Hello.Running {
				r.addHeld(l, id)
			}
			for _, id := range a.Hello.Ended {
				if r.jobs[id] == nil {
					// Once, however many hosts hold its end.
					ended = append(ended, id)
				}
				r.addHeld(l, id)
			}
			continue
		}
		for _, id := range a.Hello.Running {
			r.holder[id] = l
		}
		for _, id := range a.Hello.Ended {
			r.holder[id] = l
			ended = append(ended, id)
		}
	}
	for _, l := range r.agents[1:] {
		if !l.retiring && !r.hostMode() {
			// Another build's: it finishes what it runs, takes nothing new.
			r.sendAgent(l, agentproto.TopicRetire, nil)
			l.retiring = true
			opts.Log.Info("retiring an exec agent of another build", "agent", l.Name, "build", l.Hello.Build, "running", len(l.Hello.Running))
		}
	}
	if err := hello(conn, opts.Service, ended); err != nil {
		return err
	}
	for _, l := range r.agents {
		go r.read(l)
	}
	if hl, ok := opts.Launcher.(launcher.HostLauncher); ok && r.hostMode() {
		// The hosts that did not answer are tried again, as lost ones are;
		// those that did are undrained if an earlier run drained them.
		r.mu.Lock()
		for _, h := range hl.Hosts() {
			if r.byHost[h] == nil {
				r.lose(h, nil)
			} else {
				r.hostDrain(h, false, "")
			}
		}
		r.mu.Unlock()
	}
	if opts.Outputs != nil {
		opts.Outputs.set(r)
		defer opts.Outputs.clear(r)
	}
	go r.readManager()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.result
}

// hello registers the service and waits for the job manager's answer.
func hello(conn wire.Conn, service string, ended []fluid.ID) error {
	req, err := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: service, Ended: ended})
	if err != nil {
		return err
	}
	if err := conn.Send(req); err != nil {
		return fmt.Errorf("exec: %s: %w", execproto.TopicHello, err)
	}
	for {
		m, err := conn.Recv()
		if err == io.EOF {
			return fmt.Errorf("exec: %s: %w before the answer", execproto.TopicHello, wire.ErrClosed)
		}
		if err != nil {
			return fmt.Errorf("exec: %s: %w", execproto.TopicHello, err)
		}
		if m.Type == wire.Response && m.Topic == execproto.TopicHello {
			if err := m.Err(); err != nil {
				return fmt.Errorf("exec: %w", err)
			}
			return nil
		}
		// Nothing else can come before the answer; a stray message is
		// not worth failing the registration for.
	}
}

// agentLink is one connected agent.
type agentLink struct {
	*launcher.Agent
	retiring bool // told to retire, or already retiring: takes no new job
	gone     bool // its connection ended
}

// input is a message from the job manager (agent nil) or an agent.
type input struct {
	agent *agentLink
	msg   wire.Message
	err   error
}

// router is one registration of the exec service. Each connection's
// reader handles its messages itself, one at a time under mu, which
// guards the maps: a message goes from the socket (or the job manager's
// pipe) to its destination on the goroutine that read it, with no hand-off
// to another goroutine on the way (one wake-up less on every job's end and
// every start: issue 28's cycle).
type router struct {
	conn   wire.Conn
	opts   Options
	agents []*agentLink // this build's first

	// byHost is the agent of each host when there is one per host (a
	// launcher.HostLauncher's), and jobs the jobs they run or hold the
	// ends of (split.go); nil with the local launcher's one agent, which
	// uses holder and streams.
	byHost map[string]*agentLink
	jobs   map[fluid.ID]*split
	// orphans are jobs a host's agent took back that the job manager no
	// longer has a part of there (ended by host-timeout, or acknowledged
	// while the host was lost): killed, and acknowledged at their end.
	orphans map[fluid.ID][]*agentLink
	// timers are the host-timeouts of lost hosts.
	timers map[string]*time.Timer
	// drained: hosts this registration drained as unreachable (hosts.go).
	drained map[string]bool
	// lostWhy is why each host was last not reached: the launcher's
	// words, for a reader of its output (output.go).
	lostWhy map[string]string
	// waiters are the agent.output requests in flight, by matchtag.
	waiters map[uint32]*outputWaiter
	lastTag uint32

	// holder is the agent of each job it runs, or whose end it holds
	// until the job manager acknowledges it.
	holder map[fluid.ID]*agentLink
	// streams are the jobs whose start stream is open (RFC 32: one at a
	// time per job).
	streams map[fluid.ID]*agentLink

	mu     sync.Mutex
	over   bool          // the registration has ended: inputs are dropped
	result error         // why, for Run
	done   chan struct{} // closed when it ends
}

func (r *router) topic(method string) string { return execproto.Topic(r.opts.Service, method) }

func (r *router) readManager() { r.pump(nil, r.conn) }

func (r *router) read(l *agentLink) { r.pump(l, l.Conn) }

// pump handles a connection's messages until it ends, or the
// registration does.
func (r *router) pump(l *agentLink, c wire.Conn) {
	for {
		m, err := c.Recv()
		if !r.handle(input{agent: l, msg: m, err: err}) || err != nil {
			return
		}
	}
}

// handle serves one input under mu, and reports whether the registration
// goes on. The first input that ends it says why, for Run.
func (r *router) handle(in input) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return false
	}
	var err error
	end := false
	switch {
	case in.agent != nil:
		err = r.fromAgent(in.agent, in.msg, in.err)
	case in.err == io.EOF:
		end = true
	case in.err != nil:
		err = fmt.Errorf("exec: %w", in.err)
	default:
		err = r.fromManager(in.msg)
	}
	if err != nil || end {
		r.over, r.result = true, err
		close(r.done)
		r.failOutputs(nil, ErrNoService)
		for _, t := range r.timers {
			t.Stop()
		}
		return false
	}
	return true
}

// close ends every agent connection; the agents keep their jobs.
func (r *router) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.agents {
		l.Conn.Close()
	}
}

func (r *router) send(m wire.Message) {
	// A send fails only once the job manager is gone; the registration
	// then ends at the next input from it.
	_ = r.conn.Send(m)
}

func (r *router) sendAgent(l *agentLink, topic string, v any) {
	m, err := wire.NewRequest(topic, v)
	if err != nil {
		return // our own types always encode
	}
	r.forward(l, m)
}

// forward sends to an agent; a failed send shows as the end of its
// connection, which its reader reports.
func (r *router) forward(l *agentLink, m wire.Message) {
	if err := l.Conn.Send(m); err != nil {
		r.opts.Log.Warn("sending to the exec agent", "agent", l.Name, "topic", m.Topic, "err", err)
	}
}

// fromManager serves one message of the job manager. An error is fatal:
// the service answered a start with a conventional error response, after
// which (RFC 32) the job manager sends it nothing until a new hello.
func (r *router) fromManager(m wire.Message) error {
	if m.Type != wire.Request {
		return nil // nothing is asked of the job manager but the hello
	}
	switch m.Topic {
	case r.topic(execproto.MethodStart):
		return r.start(m)
	case r.topic(execproto.MethodException):
		// Notifications: no response, even to a bad one.
		if e, err := execproto.DecodeException(m); err == nil {
			r.notify(e.ID, agentproto.TopicException, m)
		}
	case r.topic(execproto.MethodKill):
		if k, err := execproto.DecodeKill(m); err == nil && k.Signal > 0 && k.Signal < 65 {
			r.notify(k.ID, agentproto.TopicKill, m)
		}
	case r.topic(execproto.MethodExpiration):
		if e, err := execproto.DecodeExpiration(m); err == nil {
			r.notify(e.ID, agentproto.TopicExpiration, m)
		}
	case r.topic(execproto.MethodAck):
		if a, err := execproto.DecodeAck(m); err == nil {
			if r.hostMode() {
				r.ackSplit(a.IDs)
			} else {
				r.ack(a.IDs)
			}
		}
	default:
		// Not a start: the job manager does not take this as fatal.
		r.send(wire.NewError(m.Topic, wire.ENOSYS, errUnknownMethod))
	}
	return nil
}

func (r *router) start(m wire.Message) error {
	id, ok := startID(m.Payload)
	if !ok {
		// Not as the job manager writes it: decoded in full, so that a
		// bad request is refused here, by name.
		req, err := execproto.DecodeStart(m)
		if err != nil {
			return r.fatal(m.Topic, err.Error())
		}
		b, err := json.Marshal(req)
		if err != nil {
			return r.fatal(m.Topic, err.Error())
		}
		id, m.Payload = req.ID, b
	}
	if r.hostMode() {
		return r.startSplit(id, m)
	}
	if _, open := r.streams[id]; open {
		// RFC 32: one start in flight per job, or responses could not
		// be matched to it.
		return r.fatal(m.Topic, fmt.Sprintf(errAlreadyRunning, id))
	}
	l := r.holder[id]
	if l == nil {
		l = r.agents[0]
	}
	if l.gone {
		return fmt.Errorf("exec: the exec agent %s holding job %s is gone", l.Name, id)
	}
	r.holder[id] = l
	r.streams[id] = l
	// agentproto.Start is the request with the kill grace added: spliced
	// in (last, so it wins over any key of that name), so the jobspec and
	// R pass through undecoded.
	p := make([]byte, 0, len(m.Payload)+32)
	p = append(p, m.Payload[:len(m.Payload)-1]...)
	p = append(p, `,"kill_grace":`...)
	p = strconv.AppendFloat(p, agentproto.Seconds(r.opts.KillGrace), 'g', -1, 64)
	if n := memoryOf(m.Payload); n > 0 {
		p = append(p, `,"memory":`...)
		p = strconv.AppendUint(p, n, 10)
	}
	p = append(p, '}')
	cycletrace.At(cycletrace.ExecStartOut, uint64(id))
	r.forward(l, wire.Message{Topic: agentproto.TopicStart, Type: wire.Request, Payload: p})
	return nil
}

// memoryOf is the memory limit of a start request's job on its agent's
// host (agentproto.Start.Memory): the memory its R grants, summed over its
// ranks, which the local launcher's one agent runs all of. A request
// that names no memory anywhere (R's entries carry the key only when not
// 0) is not decoded: a job without memory costs a scan. An R that does not
// parse gives none; the agent refuses it anyway.
func memoryOf(p json.RawMessage) uint64 {
	if !bytes.Contains(p, []byte(`"memory"`)) {
		return 0
	}
	var req struct {
		R json.RawMessage `json:"R"`
	}
	if json.Unmarshal(p, &req) != nil || len(req.R) == 0 {
		return 0
	}
	rs, err := rset.Parse(req.R)
	if err != nil {
		return 0
	}
	return rs.Memory()
}

// startID reads the id of a start request as the job manager encodes it
// (execproto.Start, id first), without decoding the rest.
func startID(p json.RawMessage) (fluid.ID, bool) {
	const prefix = `{"id":`
	if !bytes.HasPrefix(p, []byte(prefix)) || !bytes.HasSuffix(p, []byte("}")) {
		return 0, false
	}
	rest := p[len(prefix):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n >= len(rest) || rest[n] != ',' {
		return 0, false
	}
	id, err := strconv.ParseUint(string(rest[:n]), 10, 64)
	return fluid.ID(id), err == nil
}

// notify passes a notification about a job to the agents running it.
func (r *router) notify(id fluid.ID, topic string, m wire.Message) {
	if r.hostMode() {
		r.toParts(id, topic, m)
	} else {
		r.toHolder(id, topic, m)
	}
}

// toHolder passes a notification about a job to the agent holding it,
// under the agent's topic; one for a job no agent holds is dropped, as
// the exec service always dropped events for jobs it did not run.
func (r *router) toHolder(id fluid.ID, topic string, m wire.Message) {
	if l := r.holder[id]; l != nil && !l.gone {
		r.forward(l, wire.Message{Topic: topic, Type: wire.Request, Payload: m.Payload})
	}
}

// ack passes the job manager's acknowledgements to the agents that hold
// the ends, one notification each.
func (r *router) ack(ids []fluid.ID) {
	byAgent := map[*agentLink][]fluid.ID{}
	var order []*agentLink
	for _, id := range ids {
		l := r.holder[id]
		if l == nil {
			continue
		}
		if _, open := r.streams[id]; open {
			continue // taken back meanwhile: its end comes again
		}
		delete(r.holder, id)
		if byAgent[l] == nil {
			order = append(order, l)
		}
		byAgent[l] = append(byAgent[l], id)
	}
	for _, l := range order {
		if !l.gone {
			r.sendAgent(l, agentproto.TopicAck, agentproto.Ack{IDs: byAgent[l]})
		}
	}
}

// fatal answers a start with a protocol error and ends this registration.
func (r *router) fatal(topic, reason string) error {
	r.send(wire.NewError(topic, wire.EPROTO, reason))
	return fmt.Errorf("exec: %s: %s", topic, reason)
}

// fromAgent serves one message of an agent, or the end of its connection.
func (r *router) fromAgent(l *agentLink, m wire.Message, rerr error) error {
	if rerr != nil {
		l.gone = true
		r.failOutputs(l, errors.New("the connection to its exec agent was lost"))
		if l.retiring && !r.holds(l) {
			// A retired agent that ended everything it held exits.
			r.opts.Log.Info("an exec agent of another build retired", "agent", l.Name)
			return nil
		}
		if r.hostMode() {
			// The other hosts go on; this one's jobs run on there, and
			// are taken back when it answers again (hosts.go).
			r.opts.Log.Warn("lost the exec agent of a host", "agent", l.Name, "err", rerr)
			for _, h := range l.Hosts {
				if r.byHost[h] == l {
					r.lose(h, l)
				}
			}
			return nil
		}
		if rerr == io.EOF {
			return fmt.Errorf("exec: the exec agent %s hung up", l.Name)
		}
		return fmt.Errorf("exec: the exec agent %s: %w", l.Name, rerr)
	}
	if m.Type == wire.Response && m.Topic == agentproto.TopicOutput {
		r.outputAnswered(l, m)
		return nil
	}
	if m.Type != wire.Response || m.Topic != agentproto.TopicStart {
		// Answers to notifications do not exist; anything else an agent
		// says is not for the job manager.
		if m.IsError() {
			r.opts.Log.Warn("exec agent", "agent", l.Name, "err", m.Err())
		}
		return nil
	}
	if r.hostMode() && !m.IsError() {
		return r.fromPart(l, m)
	}
	out := wire.Message{Topic: r.topic(execproto.MethodStart), Type: wire.Response, Errnum: m.Errnum, Errstr: m.Errstr, Payload: m.Payload}
	if m.IsError() {
		// The agent broke off a start: RFC 32 makes that a fatality.
		r.send(out)
		return fmt.Errorf("exec: the exec agent %s: %w", l.Name, m.Err())
	}
	var resp struct {
		ID   fluid.ID `json:"id"`
		Type string   `json:"type"`
		Data struct {
			Final bool `json:"final"`
		} `json:"data"`
	}
	// Only a release can end a stream: the rest pass undecoded.
	if bytes.Contains(m.Payload, releaseType) && json.Unmarshal(m.Payload, &resp) == nil && resp.Type == execproto.TypeRelease && resp.Data.Final {
		// RFC 32: the final release ends the stream; the end is held
		// until the job manager acknowledges it.
		delete(r.streams, resp.ID)
		cycletrace.At(cycletrace.ExecEndIn, uint64(resp.ID))
	}
	r.send(out)
	return nil
}

var releaseType = []byte(`"type":"release"`)

// holds reports whether an agent runs, or holds the end of, any job.
func (r *router) holds(l *agentLink) bool {
	for _, s := range r.jobs {
		if s.part(l) != nil {
			return true
		}
	}
	for _, h := range r.holder {
		if h == l {
			return true
		}
	}
	return false
}
