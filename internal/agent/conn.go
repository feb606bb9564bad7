package agent

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/connlimit"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/wire"
)

// Errnums of the agent's error responses (Linux numbering).
const (
	errPerm  = 1  // EPERM
	errNoEnt = 2  // ENOENT
	errBusy  = 16 // EBUSY
)

// conn is one connection to the agent: fluxsched's (the one that said
// hello last is current), or a cancel from a job's user (a guest). Messages to it are
// queued and written by its own writer goroutine, several per write, so
// that nothing in the agent ever waits on a slow reader.
type conn struct {
	c     *net.UnixConn
	uid   uint32
	pid   int32 // when it connected
	guest bool  // counted as a guest in the agent's caps

	mu      sync.Mutex
	cond    *sync.Cond
	out     []byte // lines waiting to be written
	spare   []byte
	closing bool // write what is queued, then close
	closed  bool
	wrote   chan struct{} // closed when the writer returns
}

// serve serves a connection a.admit let in, and counts it out once it
// closes.
func (a *Agent) serve(c *net.UnixConn, who caller, guest bool) {
	cn := &conn{c: c, uid: who.uid, pid: who.pid, guest: guest, wrote: make(chan struct{})}
	cn.cond = sync.NewCond(&cn.mu)
	a.mu.Lock()
	if a.exiting {
		a.mu.Unlock()
		c.Close()
		a.lim.Forget(who.uid, guest)
		return
	}
	a.conns[cn] = struct{}{}
	a.wg.Add(2)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		cn.writer()
	}()
	go func() {
		defer a.wg.Done()
		a.read(cn)
	}()
}

// queued is the size of what waits to be written.
func (c *conn) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.out)
}

// send queues one encoded line; it never blocks.
func (c *conn) send(line []byte) {
	c.mu.Lock()
	if !c.closed && !c.closing {
		c.out = append(c.out, line...)
		c.cond.Signal()
	}
	c.mu.Unlock()
}

func (c *conn) writer() {
	defer close(c.wrote)
	for {
		c.mu.Lock()
		for len(c.out) == 0 && !c.closed && !c.closing {
			c.cond.Wait()
		}
		if c.closed || len(c.out) == 0 {
			c.mu.Unlock()
			c.c.Close()
			return
		}
		buf := c.out
		c.out, c.spare = c.spare[:0], nil
		c.mu.Unlock()
		_, err := c.c.Write(buf)
		c.mu.Lock()
		if cap(buf) <= 64<<10 {
			c.spare = buf[:0] // reused; a burst's large buffer is not kept
		}
		if err != nil {
			c.closed = true
		}
		c.mu.Unlock()
	}
}

// close drops what is queued and closes the connection.
func (c *conn) close() {
	c.mu.Lock()
	c.closed = true
	c.cond.Signal()
	c.mu.Unlock()
	c.c.Close()
}

// closeAfterFlush writes what is queued, for at most wait, then closes.
func (c *conn) closeAfterFlush(wait time.Duration) {
	c.mu.Lock()
	c.closing = true
	c.cond.Signal()
	c.mu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(wait))
	c.c.CloseRead()
	<-c.wrote
}

// read serves the messages of one connection, in order. Lines are read
// as wire.NewLineConn reads them, within the caller's bounds
// (connlimit.Reader: a guest's line is short, a long start's is read into
// memory of its own and handed back once handled), but each is decoded
// once, its payload kept as sent: a start's jobspec is not scanned again
// before the runner parses it.
func (a *Agent) read(cn *conn) {
	size := ownerBuffer
	if cn.guest {
		size = guestLineMax + 1 // a guest's line never outgrows it
	}
	r := a.lim.NewReader(cn.c, cn.guest, size)
	defer func() {
		r.Close()
		a.mu.Lock()
		delete(a.conns, cn)
		if a.cur == cn {
			a.cur = nil
		}
		a.mu.Unlock()
		cn.closeAfterFlush(time.Second)
		a.lim.Forget(cn.uid, cn.guest)
	}()
	for {
		if cn.guest {
			if cn.queued() > guestOutMax {
				a.lim.Refused(cn.uid, cn.pid, "its answers are not read")
				return
			}
			cn.c.SetReadDeadline(time.Now().Add(guestRequestTimeout))
		}
		line, err := r.ReadLine()
		if err != nil {
			a.readFailed(cn, err)
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m wire.Message
		err = json.Unmarshal(line, &m) // copies what it keeps
		size := len(line)
		line = nil
		r.Release()
		if size >= freeAfter {
			a.lim.FreeSoon()
		}
		if err != nil || m.Validate() != nil {
			return // not agentproto: nothing more from this peer is trusted
		}
		if m.Type != wire.Request {
			continue // the agent asks nothing of its peers
		}
		if cn.uid != a.uid && m.Topic != agentproto.TopicCancel && m.Topic != agentproto.TopicOutput {
			// A guest may cancel its own jobs and read their output,
			// and do nothing else.
			cn.send(errorLine(m.Topic, errPerm, fmt.Sprintf("permission denied: only uid %d may send %s", a.uid, m.Topic)))
			continue
		}
		a.dispatch(cn, m)
	}
}

// readFailed says why a connection's reading ended, when it was not an
// ordinary hang-up: to a guest in an answer (of agent.cancel, all it may
// send), and in the log, as a refusal.
func (a *Agent) readFailed(cn *conn, err error) {
	var tl *connlimit.TooLong
	var ne net.Error
	switch {
	case errors.As(err, &tl), errors.Is(err, connlimit.ErrBusy):
	case errors.As(err, &ne) && ne.Timeout():
		err = errors.New("no request within " + guestRequestTimeout.String())
	default:
		return // EOF, or closed
	}
	if cn.guest {
		cn.send(errorLine(agentproto.TopicCancel, wire.EPROTO, err.Error()))
	}
	a.lim.Refused(cn.uid, cn.pid, err.Error())
}

func (a *Agent) dispatch(cn *conn, m wire.Message) {
	switch m.Topic {
	case agentproto.TopicHello:
		a.hello(cn, m)
	case agentproto.TopicStart:
		a.start(cn, m)
	case agentproto.TopicKill:
		var k execproto.Kill
		if wire.Decode(m, &k, "id", "signal") == nil && k.Signal > 0 && k.Signal < 65 {
			a.signal(k.ID, k.Signal)
		}
	case agentproto.TopicExpiration:
		if e, err := execproto.DecodeExpiration(m); err == nil {
			a.expire(e.ID, fsd.Time(e.Expiration))
		}
	case agentproto.TopicException:
		if e, err := execproto.DecodeException(m); err == nil && e.Severity == 0 {
			a.fatal(e.ID)
		}
	case agentproto.TopicAck:
		var ack agentproto.Ack
		if wire.Decode(m, &ack, "ids") == nil {
			a.ack(ack.IDs)
		}
	case agentproto.TopicRetire:
		a.retire()
	case agentproto.TopicStop:
		var s agentproto.Stop
		if err := wire.Decode(m, &s); err != nil {
			cn.send(errorLine(m.Topic, wire.EPROTO, err.Error()))
			return
		}
		if n := a.stop(s.Force, func() { cn.send(responseLine(m.Topic, nil)) }); n > 0 {
			cn.send(errorLine(m.Topic, errBusy, runningJobs(n)))
		}
	case agentproto.TopicCancel:
		var c agentproto.Cancel
		if err := wire.Decode(m, &c, "id"); err != nil {
			cn.send(errorLine(m.Topic, wire.EPROTO, err.Error()))
			return
		}
		if errnum, msg := a.cancel(cn.uid, c.ID); errnum != 0 {
			cn.send(errorLine(m.Topic, errnum, msg))
			return
		}
		cn.send(responseLine(m.Topic, nil))
	case agentproto.TopicOutput:
		a.serveOutput(cn, m)
	default:
		cn.send(errorLine(m.Topic, wire.ENOSYS, "unknown method"))
	}
}

func runningJobs(n int) string {
	if n == 1 {
		return "1 job is running"
	}
	return strconv.Itoa(n) + " jobs are running"
}

// hello makes cn the current connection; the previous one is closed.
func (a *Agent) hello(cn *conn, m wire.Message) {
	var req agentproto.HelloRequest
	if err := wire.Decode(m, &req); err != nil {
		cn.send(errorLine(m.Topic, wire.EPROTO, err.Error()))
		return
	}
	shared, err := idset.Parse(req.SharedCPUs)
	if err != nil {
		cn.send(errorLine(m.Topic, wire.EPROTO, "shared_cpus: "+err.Error()))
		return
	}
	a.run.SetSharedCPUs(shared)
	// What dead agents held is listed too, so that fluxsched takes it
	// back here rather than launching it again.
	a.adoptDead()
	a.mu.Lock()
	old := a.cur
	a.cur = cn
	a.setIdle(req.IdleTimeout)
	h := agentproto.Hello{Build: a.opts.Build, PID: pid, Host: hostname(), Containment: a.run.Containment(),
		Running: []fluid.ID{}, Ended: []fluid.ID{}, Retiring: a.retiring || a.stopping}
	h.Memory, h.MemoryNotEnforced = a.run.Memory()
	for id, j := range a.jobs {
		if j.end != nil {
			h.Ended = append(h.Ended, id)
		} else {
			h.Running = append(h.Running, id)
		}
	}
	slices.Sort(h.Running)
	slices.Sort(h.Ended)
	// The answer is queued before any response to this connection's
	// starts can be.
	cn.send(responseLine(m.Topic, h))
	a.mu.Unlock()
	if old != nil && old != cn {
		old.close()
	}
}

var pid = os.Getpid()

// hostname is the machine's name, read at each hello: cheap, and a
// machine renamed says so.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

// Encoding: each message is encoded once, straight into its line.

func encodeLine(m wire.Message) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil
	}
	return buf.Bytes()
}

func responseLine(topic string, v any) []byte {
	m, err := wire.NewResponse(topic, v)
	if err != nil {
		return nil
	}
	return encodeLine(m)
}

func errorLine(topic string, errnum int, errstr string) []byte {
	return encodeLine(wire.NewError(topic, errnum, errstr))
}

// startPrefix opens every agent.start response line.
const startPrefix = `{"topic":"` + agentproto.TopicStart + `","type":"response","payload":{"id":`

// startLine is one agent.start response, whose payload is an
// execproto.Response with the given data (already JSON).
func startLine(id fluid.ID, typ string, data []byte) []byte {
	b := make([]byte, 0, len(startPrefix)+len(typ)+len(data)+48)
	b = append(b, startPrefix...)
	b = strconv.AppendUint(b, uint64(id), 10)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, `","data":`...)
	b = append(b, data...)
	return append(b, "}}\n"...)
}

var (
	dataStart   = []byte(`{}`)
	dataRelease = []byte(`{"ranks":"all","final":true}`)
)

func exceptionData(e execproto.Exception) []byte {
	b, _ := json.Marshal(e)
	return b
}
