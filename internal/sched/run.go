package sched

import (
	"errors"
	"io"
	"runtime"
	"time"

	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Options configure an Engine and Run.
type Options struct {
	// Default is the policy of every queue without one of its own; the
	// zero value is fcfs, worst-fit, looking at every pending job (use
	// DefaultPolicy for Fluxion's queue depth).
	Default QueuePolicy
	// Queues are the policies of queues that have their own.
	Queues map[string]QueuePolicy
	// Limit is the number of concurrent alloc requests asked for in
	// sched-ready (limited mode); 0 asks for unlimited.
	Limit int
	// Now returns the current time in seconds since the epoch; nil uses
	// the system clock.
	Now func() float64
	// Logf, if not nil, is told what the protocol has no way to report:
	// a hello whose R clashes, a free for a job holding nothing.
	Logf func(format string, args ...any)
	// Slice is how many pending jobs Run lets a pass consider before it
	// looks for input again (DefaultSlice if 0).
	Slice int
	// Typed makes the Engine's messages schedproto values rather than
	// JSON (wire.NewTypedResponse), a SUCCESS's R among them: for a job
	// manager in the same process that decodes them as they are
	// (fluxsched sim's; jobmgr.Config.Typed). They carry what the JSON
	// would, and are encoded if they cross a socket.
	Typed bool
}

// DefaultSlice bounds the part of a pass Run makes between two looks at
// its input: a pass over a million pending jobs never keeps a free or a
// cancel waiting for long.
const DefaultSlice = 1024

// inbox is how many received messages may wait to be handled. A batch is
// whatever has arrived when the previous one is done, so the bound only
// limits read-ahead.
const inbox = 4096

// Run is the scheduler's side of RFC 27 on conn (see Engine). It handles
// every message already received before it schedules, so a burst of
// requests costs one pass, and it makes a long pass in slices, handling
// what arrived between them.
//
// Run returns nil when the job manager goes away (io.EOF). A malformed
// request is answered with an error response, which makes the job manager
// suspend scheduling (RFC 27), and Run then returns the error: state can no
// longer be trusted, and a restart replays it through hello. Run closes
// conn when it returns.
func Run(conn wire.Conn, opts Options) error {
	d := &driver{
		conn: conn,
		e:    NewEngine(opts),
		in:   make(chan received, inbox),
		done: make(chan struct{}),
		now:  opts.Now,
		cut:  opts.Slice,
	}
	if d.now == nil {
		d.now = func() float64 { return float64(time.Now().UnixNano()) / 1e9 }
	}
	if d.cut <= 0 {
		d.cut = DefaultSlice
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
	e    *Engine
	in   chan received
	done chan struct{}
	now  func() float64
	cut  int
	// syncs are the sync requests (schedproto.TopicSync) received and
	// not yet answered: they are answered once the pass is done.
	syncs []wire.Message
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

func (d *driver) sendAll(msgs []wire.Message) error {
	for _, m := range msgs {
		if err := d.conn.Send(m); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) handle(m wire.Message) error {
	if m.Type == wire.Request && m.Topic == schedproto.TopicSync {
		d.syncs = append(d.syncs, m)
		return nil
	}
	out, err := d.e.Handle(m)
	if serr := d.sendAll(out); serr != nil {
		return serr
	}
	return err
}

// drain handles every message already received; end reports a peer that
// is gone, whose messages are served first.
func (d *driver) drain() (end error, err error) {
	for {
		m, ok, rerr := d.poll()
		if rerr != nil {
			return rerr, nil
		}
		if !ok {
			return nil, nil
		}
		if err := d.handle(m); err != nil {
			return nil, err
		}
	}
}

func (d *driver) run() error {
	start, err := d.e.Start()
	if err != nil {
		return err
	}
	if err := d.sendAll(start); err != nil {
		return err
	}
	for {
		r := <-d.in
		if r.err != nil {
			return r.err
		}
		if err := d.handle(r.m); err != nil {
			return err
		}
		end, err := d.drain()
		if err != nil {
			return err
		}
		// Passes run in slices, with what arrived in between handled;
		// a peer that is gone still gets the answers to what it sent.
		for d.e.Busy() {
			out, _, err := d.e.Step(d.now(), d.cut)
			if err != nil {
				return err
			}
			if err := d.sendAll(out); err != nil {
				return err
			}
			if end == nil {
				if end, err = d.drain(); err != nil {
					return err
				}
			}
		}
		// Everything received before a sync has been handled, and the
		// pass it may have started is done: answer it.
		for _, m := range d.syncs {
			if err := d.conn.Send(schedproto.SyncAnswer(m)); err != nil {
				return err
			}
		}
		d.syncs = d.syncs[:0]
		if end != nil {
			return end
		}
	}
}
