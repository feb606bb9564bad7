package sched

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Options configure Run.
type Options struct {
	// Policy orders nodes for placement; the zero value is worst-fit.
	Policy resource.Policy
	// QueuePolicies are match policies of queues that have their own.
	QueuePolicies map[string]resource.Policy
	// Limit is the number of concurrent alloc requests asked for in
	// sched-ready (limited mode); 0 asks for unlimited.
	Limit int
	// Now returns the current time in seconds since the epoch; nil uses
	// the system clock.
	Now func() float64
	// Logf, if not nil, is told what the protocol has no way to report:
	// a hello whose R clashes, a free for a job holding nothing.
	Logf func(format string, args ...any)
}

// inbox is how many received messages may wait to be handled. A batch is
// whatever has arrived when the previous one is done, so the bound only
// limits read-ahead.
const inbox = 4096

// Run is the scheduler's side of RFC 27 on conn: it acquires the inventory
// (resource.acquire), replays allocated jobs (job-manager.sched-hello),
// announces its mode (job-manager.sched-ready), then serves sched.alloc,
// sched.cancel, sched.prioritize and sched.free, and resource updates (up,
// down, nodes joining, sessions and outside nodes). It schedules once per batch of input, after handling every
// message already received, so a burst of requests costs one pass.
//
// Run returns nil when the job manager goes away (io.EOF). A malformed
// request is answered with an error response, which makes the job manager
// suspend scheduling (RFC 27), and Run then returns the error: state can no
// longer be trusted, and a restart replays it through hello. Run closes
// conn when it returns.
func Run(conn wire.Conn, opts Options) error {
	d := &driver{
		conn: conn,
		opts: opts,
		in:   make(chan received, inbox),
		done: make(chan struct{}),
	}
	if d.opts.Now == nil {
		d.opts.Now = func() float64 { return float64(time.Now().UnixNano()) / 1e9 }
	}
	if d.opts.Logf == nil {
		d.opts.Logf = func(string, ...any) {}
	}
	go d.read()
	defer func() {
		close(d.done)
		conn.Close()
	}()
	err := d.run()
	if errors.Is(err, io.EOF) || errors.Is(err, wire.ErrClosed) {
		return nil
	}
	return err
}

type received struct {
	m   wire.Message
	err error
}

type driver struct {
	conn wire.Conn
	opts Options
	in   chan received
	done chan struct{}
	s    *Simple
	// deferred holds requests that arrived before sched-ready was
	// answered; they are served once it is.
	deferred []wire.Message
}

// read moves messages from conn to the inbox until conn fails or Run ends.
func (d *driver) read() {
	for {
		m, err := d.conn.Recv()
		select {
		case d.in <- received{m, err}:
		case <-d.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// next waits for the next message.
func (d *driver) next() (wire.Message, error) {
	r := <-d.in
	return r.m, r.err
}

// poll returns a message already received, if any. When the inbox is
// empty it lets the reader run once before saying so, so a burst that is
// still being read joins the current batch.
func (d *driver) poll() (wire.Message, bool, error) {
	for try := 0; try < 2; try++ {
		select {
		case r := <-d.in:
			return r.m, true, r.err
		default:
		}
		if try == 0 {
			runtime.Gosched()
		}
	}
	return wire.Message{}, false, nil
}

func (d *driver) send(topic string, v any) error {
	m, err := wire.NewResponse(topic, v)
	if err != nil {
		return err
	}
	return d.conn.Send(m)
}

func (d *driver) request(topic string, v any) error {
	m, err := wire.NewRequest(topic, v)
	if err != nil {
		return err
	}
	return d.conn.Send(m)
}

func (d *driver) run() error {
	if err := d.acquire(); err != nil {
		return err
	}
	if err := d.hello(); err != nil {
		return err
	}
	if err := d.ready(); err != nil {
		return err
	}
	for _, m := range d.deferred {
		if err := d.handle(m); err != nil {
			return err
		}
	}
	d.deferred = nil
	if err := d.schedule(); err != nil {
		return err
	}
	for {
		m, err := d.next()
		if err != nil {
			return err
		}
		if err := d.handle(m); err != nil {
			return err
		}
		var end error // the peer is gone, but what it sent is served first
		for {
			m, ok, err := d.poll()
			if err != nil {
				end = err
				break
			}
			if !ok {
				break
			}
			if err := d.handle(m); err != nil {
				return err
			}
		}
		if err := d.schedule(); err != nil {
			return err
		}
		if end != nil {
			return end
		}
	}
}

// acquire sends resource.acquire and builds the scheduler from its first
// response: the inventory, with only the ranks it names up, as
// sched-simple marks everything down before applying the first response.
func (d *driver) acquire() error {
	if err := d.request(schedproto.TopicAcquire, nil); err != nil {
		return err
	}
	for {
		m, err := d.next()
		if err != nil {
			return err
		}
		if m.Type != wire.Response || m.Topic != schedproto.TopicAcquire {
			d.deferred = append(d.deferred, m)
			continue
		}
		a, err := schedproto.DecodeAcquire(m, true)
		if err != nil {
			return err
		}
		inv, err := rset.Parse(a.Resources)
		if err != nil {
			return fmt.Errorf("%s: resources: %w", schedproto.TopicAcquire, err)
		}
		d.s = NewSimple(inv, d.opts.Policy, d.opts.Limit)
		for q, p := range d.opts.QueuePolicies {
			d.s.SetQueuePolicy(q, p)
		}
		d.s.SetDown(inv.Ranks())
		a.Resources = nil // the inventory itself, not nodes joining it
		return d.update(a)
	}
}

// update applies a resource.acquire response: nodes joining the inventory
// first, so that the rest may name them, then sessions, then up and down
// ranks. Sessions and outside are each complete when present, and left as
// they were when absent.
func (d *driver) update(a schedproto.Acquire) error {
	if len(a.Resources) > 0 {
		r, err := rset.Parse(a.Resources)
		if err == nil {
			err = d.s.Grow(r)
		}
		if err != nil {
			return fmt.Errorf("%s: resources: %w", schedproto.TopicAcquire, err)
		}
	}
	if a.Sessions != nil || a.Outside != nil {
		reserved, outside := d.s.reserved, d.s.outside
		if a.Sessions != nil {
			reserved = a.Sessions
		}
		if a.Outside != nil {
			outside = *a.Outside
		}
		d.s.SetSessions(reserved, outside)
	}
	for _, c := range []struct {
		ids *string
		set func(idset.Set)
	}{{a.Up, d.s.SetUp}, {a.Down, d.s.SetDown}} {
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

// hello replays the jobs that hold resources.
func (d *driver) hello() error {
	if err := d.request(schedproto.TopicHello, nil); err != nil {
		return err
	}
	for {
		m, err := d.next()
		if err != nil {
			return err
		}
		if m.Type != wire.Response || m.Topic != schedproto.TopicHello {
			if err := d.early(m); err != nil {
				return err
			}
			continue
		}
		if m.IsError() {
			if m.Errnum == wire.ENODATA {
				return nil // RFC 27: the end of the stream
			}
			return m.Err()
		}
		h, err := schedproto.DecodeHelloJob(m)
		if err != nil {
			return err
		}
		if err := d.s.Hello(h); err != nil {
			d.opts.Logf("%v", err)
		}
	}
}

// ready announces the concurrency mode and waits for the answer.
func (d *driver) ready() error {
	if err := d.request(schedproto.TopicReady, d.s.Ready()); err != nil {
		return err
	}
	for {
		m, err := d.next()
		if err != nil {
			return err
		}
		if m.Type != wire.Response || m.Topic != schedproto.TopicReady {
			if err := d.early(m); err != nil {
				return err
			}
			continue
		}
		_, err = schedproto.DecodeReadyResponse(m)
		return err
	}
}

// early handles a message that arrives during the handshake: resource
// updates apply at once, requests wait until the handshake is done.
func (d *driver) early(m wire.Message) error {
	if m.Type == wire.Response && m.Topic == schedproto.TopicAcquire {
		return d.handle(m)
	}
	if m.Type == wire.Request {
		d.deferred = append(d.deferred, m)
	}
	return nil
}

// handle serves one message.
func (d *driver) handle(m wire.Message) error {
	if m.Type == wire.Response {
		if m.Topic != schedproto.TopicAcquire {
			d.opts.Logf("ignoring unexpected %s response", m.Topic)
			return nil
		}
		if m.IsError() {
			// sched-simple exits when its resource stream fails.
			return fmt.Errorf("resource update failure: %w", m.Err())
		}
		a, err := schedproto.DecodeAcquire(m, false)
		if err != nil {
			return err
		}
		return d.update(a)
	}
	switch m.Topic {
	case schedproto.TopicAlloc:
		a, err := schedproto.DecodeAlloc(m)
		if err != nil {
			return d.fail(m, err)
		}
		resps, err := d.s.Alloc(a)
		if err != nil {
			return d.fail(m, err)
		}
		return d.sendAll(resps)
	case schedproto.TopicCancel:
		j, err := schedproto.DecodeJobID(m)
		if err != nil {
			// RFC 27: no response to sched.cancel, not even an error.
			d.opts.Logf("%v", err)
			return nil
		}
		return d.sendAll(d.s.Cancel(j.ID))
	case schedproto.TopicPrioritize:
		p, err := schedproto.DecodePrioritize(m)
		if err != nil {
			d.opts.Logf("%v", err) // RFC 27: no response to sched.prioritize
			return nil
		}
		d.s.Prioritize(p)
		return nil
	case schedproto.TopicFree:
		j, err := schedproto.DecodeJobID(m)
		if err != nil {
			return d.fail(m, err)
		}
		resp, err := d.s.Free(j.ID)
		if err != nil {
			d.opts.Logf("%v", err)
		}
		return d.send(schedproto.TopicFree, resp)
	}
	return d.conn.Send(wire.NewError(m.Topic, wire.ENOSYS, "unknown service method"))
}

// fail answers a malformed request with an error response and ends Run.
func (d *driver) fail(m wire.Message, err error) error {
	if serr := d.conn.Send(wire.NewError(m.Topic, wire.EPROTO, err.Error())); serr != nil {
		return serr
	}
	return err
}

func (d *driver) sendAll(resps []schedproto.AllocResponse) error {
	for _, r := range resps {
		if err := d.send(schedproto.TopicAlloc, r); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) schedule() error {
	return d.sendAll(d.s.Schedule(d.opts.Now()))
}
