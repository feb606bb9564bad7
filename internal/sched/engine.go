package sched

import (
	"fmt"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Engine is the scheduler's side of RFC 27 as a state machine over
// messages: it acquires the inventory (resource.acquire), replays
// allocated jobs (job-manager.sched-hello), announces its mode
// (job-manager.sched-ready), then serves sched.alloc, sched.cancel,
// sched.prioritize and sched.free, and resource updates (up, down, nodes
// joining, sessions and outside nodes). It does no I/O and reads no
// clock: Run carries its messages over a connection in real time, and the
// simulator carries them in virtual time, both through the same code.
type Engine struct {
	opts  Options
	phase phase
	s     *Scheduler
	// deferred holds requests that arrived before sched-ready was
	// answered; they are served once it is.
	deferred []wire.Message
	// stepped is the last Step's responses, emptied, for the next
	// (appendStep).
	stepped []schedproto.AllocResponse
}

type phase int

const (
	acquiring phase = iota // resource.acquire sent, no response yet
	helloing               // job-manager.sched-hello sent, replaying jobs
	readying               // job-manager.sched-ready sent
	serving
)

// NewEngine returns an engine; Start gives its first message.
func NewEngine(opts Options) *Engine {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Engine{opts: opts}
}

// Start returns the engine's opening request, resource.acquire.
func (e *Engine) Start() ([]wire.Message, error) {
	m, err := wire.NewRequest(schedproto.TopicAcquire, nil)
	return []wire.Message{m}, err
}

// Scheduler returns the core, nil until the inventory is acquired.
func (e *Engine) Scheduler() *Scheduler { return e.s }

// Serving reports whether the handshake is done.
func (e *Engine) Serving() bool { return e.phase == serving }

// Busy reports whether a pass is due or in progress.
func (e *Engine) Busy() bool { return e.phase == serving && e.s.Busy() }

// Step runs the pass in progress, or a new one, for at most budget jobs
// (0: no bound), and returns the responses to send and whether the pass
// is finished. now is the time written into R.
func (e *Engine) Step(now float64, budget int) ([]wire.Message, bool, error) {
	if e.phase != serving {
		return nil, true, nil
	}
	resps, done := e.s.appendStep(e.stepped[:0], now, budget)
	out, err := e.responses(resps)
	// The messages hold copies; what the responses point to (R,
	// annotations) is let go of here, not when the next Step overwrites.
	clear(resps)
	e.stepped = resps
	return out, done, err
}

// Handle takes one message and returns the messages to send. An error
// ends the conversation: the peer broke the protocol (the messages
// returned then include the error response owed, if any), or the
// resource stream failed.
func (e *Engine) Handle(m wire.Message) ([]wire.Message, error) {
	switch e.phase {
	case acquiring:
		if m.Type != wire.Response || m.Topic != schedproto.TopicAcquire {
			e.deferred = append(e.deferred, m)
			return nil, nil
		}
		if err := e.acquired(m); err != nil {
			return nil, err
		}
		e.phase = helloing
		return e.request(schedproto.TopicHello, nil)
	case helloing:
		if m.Type != wire.Response || m.Topic != schedproto.TopicHello {
			return e.early(m)
		}
		if m.IsError() {
			if m.Errnum != wire.ENODATA {
				return nil, m.Err()
			}
			e.phase = readying // RFC 27: the end of the stream
			return e.request(schedproto.TopicReady, e.s.Ready())
		}
		h, err := schedproto.DecodeHelloJob(m)
		if err != nil {
			return nil, err
		}
		if err := e.s.Hello(h); err != nil {
			e.opts.Logf("%v", err)
		}
		return nil, nil
	case readying:
		if m.Type != wire.Response || m.Topic != schedproto.TopicReady {
			return e.early(m)
		}
		if _, err := schedproto.DecodeReadyResponse(m); err != nil {
			return nil, err
		}
		e.phase = serving
		var out []wire.Message
		for _, d := range e.deferred {
			more, err := e.serve(d)
			out = append(out, more...)
			if err != nil {
				return out, err
			}
		}
		e.deferred = nil
		return out, nil
	}
	return e.serve(m)
}

// acquired builds the scheduler from the first resource.acquire response:
// the inventory, with only the ranks it names up, as sched-simple marks
// everything down before applying the first response.
func (e *Engine) acquired(m wire.Message) error {
	a, err := schedproto.DecodeAcquire(m, true)
	if err != nil {
		return err
	}
	inv, err := rset.Parse(a.Resources)
	if err != nil {
		return fmt.Errorf("%s: resources: %w", schedproto.TopicAcquire, err)
	}
	e.s = New(inv, e.opts.Default, e.opts.Limit)
	e.s.typed = e.opts.Typed
	for q, p := range e.opts.Queues {
		e.s.SetQueuePolicy(q, p)
	}
	e.s.SetDown(inv.Ranks())
	a.Resources = nil // the inventory itself, not nodes joining it
	return e.update(a)
}

// early handles a message that arrives during the handshake: resource
// updates apply at once, requests wait until the handshake is done.
func (e *Engine) early(m wire.Message) ([]wire.Message, error) {
	if m.Type == wire.Response && m.Topic == schedproto.TopicAcquire {
		return e.serve(m)
	}
	if m.Type == wire.Request {
		e.deferred = append(e.deferred, m)
	}
	return nil, nil
}

// update applies a resource.acquire response: nodes joining the inventory
// first, so that the rest may name them, then sessions, then up and down
// ranks. Sessions and outside are each complete when present, and left as
// they were when absent.
func (e *Engine) update(a schedproto.Acquire) error {
	if len(a.Resources) > 0 {
		r, err := rset.Parse(a.Resources)
		if err == nil {
			err = e.s.Grow(r)
		}
		if err != nil {
			return fmt.Errorf("%s: resources: %w", schedproto.TopicAcquire, err)
		}
	}
	if a.Sessions != nil || a.Outside != nil {
		nodeResv, outside := e.s.nodeResv, e.s.outside
		if a.Sessions != nil {
			nodeResv = a.Sessions
		}
		if a.Outside != nil {
			outside = *a.Outside
		}
		e.s.SetSessions(nodeResv, outside)
	}
	for _, c := range []struct {
		ids *string
		set func(idset.Set)
	}{{a.Up, e.s.SetUp}, {a.Down, e.s.SetDown}} {
		if c.ids == nil {
			continue
		}
		ids, err := idset.Parse(*c.ids)
		if err != nil {
			return fmt.Errorf("%s: %w", schedproto.TopicAcquire, err)
		}
		c.set(ids)
	}
	return nil
}

// serve handles one message once the handshake is done.
func (e *Engine) serve(m wire.Message) ([]wire.Message, error) {
	if m.Type == wire.Response {
		if id, ok := schedproto.RefusedJob(m); ok {
			// The job manager did not take the allocation made for id
			// (its R did not fit what it knows): what was set aside for
			// the job is free again, and the job is gone.
			e.opts.Logf("%v", m.Err())
			if _, err := e.s.Free(id); err != nil {
				e.opts.Logf("%v", err)
			}
			return nil, nil
		}
		if m.Topic != schedproto.TopicAcquire {
			e.opts.Logf("ignoring unexpected %s response", m.Topic)
			return nil, nil
		}
		if m.IsError() {
			// sched-simple exits when its resource stream fails.
			return nil, fmt.Errorf("resource update failure: %w", m.Err())
		}
		a, err := schedproto.DecodeAcquire(m, false)
		if err != nil {
			return nil, err
		}
		return nil, e.update(a)
	}
	switch m.Topic {
	case schedproto.TopicAlloc:
		a, err := schedproto.DecodeAlloc(m)
		if err != nil {
			return fail(m, err)
		}
		resps, err := e.s.Alloc(a)
		if err != nil {
			return fail(m, err)
		}
		return e.responses(resps)
	case schedproto.TopicCancel:
		j, err := schedproto.DecodeJobID(m)
		if err != nil {
			// RFC 27: no response to sched.cancel, not even an error.
			e.opts.Logf("%v", err)
			return nil, nil
		}
		return e.responses(e.s.Cancel(j.ID))
	case schedproto.TopicPrioritize:
		p, err := schedproto.DecodePrioritize(m)
		if err != nil {
			e.opts.Logf("%v", err) // RFC 27: no response to sched.prioritize
			return nil, nil
		}
		e.s.Prioritize(p)
		return nil, nil
	case schedproto.TopicFree:
		j, err := schedproto.DecodeJobID(m)
		if err != nil {
			return fail(m, err)
		}
		resp, err := e.s.Free(j.ID)
		if err != nil {
			e.opts.Logf("%v", err)
		}
		if e.opts.Typed {
			return []wire.Message{wire.NewTypedResponse(schedproto.TopicFree, resp)}, nil
		}
		r, err := wire.NewResponse(schedproto.TopicFree, resp)
		return []wire.Message{r}, err
	}
	return []wire.Message{wire.NewError(m.Topic, wire.ENOSYS, "unknown service method")}, nil
}

// fail answers a malformed request with an error response and ends the
// conversation.
func fail(m wire.Message, err error) ([]wire.Message, error) {
	return []wire.Message{wire.NewError(m.Topic, wire.EPROTO, err.Error())}, err
}

func (e *Engine) request(topic string, v any) ([]wire.Message, error) {
	if e.opts.Typed {
		return []wire.Message{wire.NewTypedRequest(topic, v)}, nil
	}
	m, err := wire.NewRequest(topic, v)
	return []wire.Message{m}, err
}

// responses are the sched.alloc responses to send: typed (Options.Typed)
// or JSON. A typed SUCCESS carries its R as a value (Granted), which
// its JSON encoding writes as R.
func (e *Engine) responses(resps []schedproto.AllocResponse) ([]wire.Message, error) {
	out := make([]wire.Message, 0, len(resps))
	for _, r := range resps {
		if e.opts.Typed {
			out = append(out, wire.NewTypedResponse(schedproto.TopicAlloc, r))
			continue
		}
		m, err := wire.NewResponse(schedproto.TopicAlloc, r)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}
