package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/api"
)

// What one caller may hold of fluxsched, so that no guest can take the
// socket, the descriptors or the memory from the others, and the
// instance owner is always served (issue 13).
const (
	// maxConns bounds the open connections, whatever the descriptor
	// limit allows; connLimits lowers it to half of that limit, leaving
	// the rest to the store, the job shells and the scheduler.
	maxConns = 4096
	// maxGuestConns bounds one guest uid's connections: enough for a
	// user's scripts waiting on jobs side by side.
	maxGuestConns = 256

	// ownerRequestMax bounds the instance owner's request line. A
	// --cc 10,000 submission takes 17.5 MB with a 1.3 KB environment;
	// this fits one with a 12 KB environment.
	ownerRequestMax = 128 << 20
	// guestRequestMax bounds a guest's: --cc 10,000 with a 3 KB
	// environment.
	guestRequestMax = 32 << 20
	// bufferedMax bounds the request bytes read and not yet handled
	// across all connections; guests together get guestBufferedMax of
	// it, so the owner always has room.
	bufferedMax      = 256 << 20
	guestBufferedMax = 64 << 20
	// freeRead is what any connection reads without asking the budget:
	// every ordinary request fits, so a budget spent by others refuses
	// only large requests.
	freeRead = 16 << 10
	// freeAfter is the size of request after whose answer the heap it
	// took is handed back to the system, not kept for the next one.
	freeAfter = 4 << 20

	// requestTimeout bounds the wait for a whole request line; answers
	// and streams are not bounded by it once the request has arrived.
	requestTimeout = 30 * time.Second
	// writeTimeout bounds one answer line's write to a caller that does
	// not read it.
	writeTimeout = 30 * time.Second
	// shutdownGrace is how long requests already being handled may take
	// to answer once fluxsched stops; then their connections close too.
	shutdownGrace = 2 * time.Second
)

// limits are the connection caps of one Server.
type limits struct {
	total, guests, perGuest int
}

// connLimits derives the caps from the descriptor limit: connections
// take half of it at most, guests three quarters of that, which keeps a
// quarter for the instance owner.
func connLimits() limits {
	total := maxConns
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < uint64(2*maxConns) {
		total = max(int(rl.Cur/2), 16)
	}
	guests := total * 3 / 4
	return limits{total: total, guests: guests, perGuest: max(1, min(maxGuestConns, guests/4))}
}

// conn is an open connection as the server tracks it.
type conn struct {
	c   *net.UnixConn
	who peer
	// dispatched: the request arrived whole and is being answered; a
	// shutdown lets it finish for shutdownGrace.
	dispatched bool
}

// tracker holds what the connections take: their number per uid and the
// request bytes buffered.
type tracker struct {
	mu       sync.Mutex
	lim      limits
	conns    map[*conn]struct{}
	perUID   map[uint32]int
	nGuests  int
	closing  bool
	buffered int64 // request bytes reserved beyond freeRead, all callers
	guestBuf int64 // of which guests'
	freeing  *time.Timer
	refused  map[uint32]*refusals
}

func (s *Server) tracker() *tracker {
	s.once.Do(func() {
		s.t = &tracker{lim: connLimits(), conns: map[*conn]struct{}{}, perUID: map[uint32]int{}, refused: map[uint32]*refusals{}}
	})
	return s.t
}

// admit counts a new connection in, or says why it is refused.
func (s *Server) admit(c *net.UnixConn, who peer) (*conn, string) {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	guest := who.uid != s.Owner
	switch {
	case t.closing:
		return nil, "fluxsched is shutting down"
	case len(t.conns) >= t.lim.total:
		return nil, fmt.Sprintf("too many connections (%d open); try again later", len(t.conns))
	case guest && t.perUID[who.uid] >= t.lim.perGuest:
		return nil, fmt.Sprintf("too many connections from uid %d (%d open); try again later", who.uid, t.perUID[who.uid])
	case guest && t.nGuests >= t.lim.guests:
		return nil, fmt.Sprintf("too many connections from guests (%d open); try again later", t.nGuests)
	}
	cn := &conn{c: c, who: who}
	t.conns[cn] = struct{}{}
	t.perUID[who.uid]++
	if guest {
		t.nGuests++
	}
	return cn, ""
}

// forget counts a closed connection out.
func (s *Server) forget(cn *conn) {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns, cn)
	if t.perUID[cn.who.uid]--; t.perUID[cn.who.uid] <= 0 {
		delete(t.perUID, cn.who.uid)
	}
	if cn.who.uid != s.Owner {
		t.nGuests--
	}
}

// dispatching marks a connection's request as arrived, unless fluxsched
// is shutting down, when it is not answered at all.
func (s *Server) dispatching(cn *conn) bool {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return false
	}
	cn.dispatched = true
	return true
}

// closeConns closes the connections still waiting for their request, or
// all of them: from then on none is admitted.
func (s *Server) closeConns(all bool) {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	for cn := range t.conns {
		if all || !cn.dispatched {
			cn.c.Close()
		}
	}
}

// refusals counts one uid's refused connections between two log lines,
// so a flood logs a line a second, not one per connection.
type refusals struct {
	n      int
	reason string
}

// refuse answers a connection that is not admitted with why, closes it,
// and logs it.
func (s *Server) refuse(c *net.UnixConn, who peer, reason string) {
	// Not through a writer: a caller that does not read is not waited
	// for here, in the accept loop.
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	json.NewEncoder(c).Encode(api.Reply{Error: reason, Final: true})
	c.Close()
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.refused[who.uid]; r != nil {
		r.n++
		r.reason = reason
		return
	}
	s.log().Warn("refused connection", "uid", who.uid, "pid", who.pid, "reason", reason)
	t.refused[who.uid] = &refusals{}
	time.AfterFunc(time.Second, func() { s.refusalSummary(who.uid) })
}

// refusalSummary logs how many more connections of uid were refused in
// the last second, and keeps counting while they still are.
func (s *Server) refusalSummary(uid uint32) {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.refused[uid]
	if r == nil || r.n == 0 {
		delete(t.refused, uid)
		return
	}
	s.log().Warn("refused connections", "uid", uid, "count", r.n, "within", time.Second, "reason", r.reason)
	t.refused[uid] = &refusals{}
	time.AfterFunc(time.Second, func() { s.refusalSummary(uid) })
}

// Why a request line was not read whole.
var (
	errBusy       = errors.New("fluxsched is busy: too many large requests in progress, try again")
	errIncomplete = errors.New("request not received whole in time")
)

// takeBudget takes n bytes of the request budget, or says there are none.
func (s *Server) takeBudget(n int, guest bool) bool {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buffered+int64(n) > bufferedMax || (guest && t.guestBuf+int64(n) > guestBufferedMax) {
		return false
	}
	t.buffered += int64(n)
	if guest {
		t.guestBuf += int64(n)
	}
	return true
}

// giveBudget gives n bytes back to the budget.
func (s *Server) giveBudget(n int, guest bool) {
	if n == 0 {
		return
	}
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buffered -= int64(n)
	if guest {
		t.guestBuf -= int64(n)
	}
}

// freeSoon returns the free heap to the system in a second, after a
// large request was answered: the runtime would keep what decoding it
// took for a long while, and such requests are rare.
func (s *Server) freeSoon() {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.freeing != nil {
		return
	}
	t.freeing = time.AfterFunc(time.Second, func() {
		t.mu.Lock()
		t.freeing = nil
		t.mu.Unlock()
		debug.FreeOSMemory()
	})
}

// readChunk is how much of a request is read, and taken from the
// budget, at a time.
const readChunk = 64 << 10

// readRequest reads one request line of at most limit bytes. A line
// longer than a few KiB goes to memory mapped for it alone, not to the
// heap: done unmaps it, so it goes back to the system at once, whatever
// the runtime keeps (the race detector's shadow included). What is read
// past freeRead is taken from the budget, a chunk at a time, before it
// is read. The caller calls done once it is through with line, even on
// error.
func (s *Server) readRequest(c net.Conn, guest bool) (line []byte, done func(), err error) {
	limit := ownerRequestMax
	if guest {
		limit = guestRequestMax
	}
	buf := make([]byte, 4<<10)
	var mapped []byte
	reserved := 0
	done = func() {
		if mapped != nil {
			unix.Munmap(mapped)
			mapped = nil
		}
		s.giveBudget(reserved, guest)
		reserved = 0
	}
	n := 0
	for {
		if n == len(buf) {
			if mapped != nil {
				return nil, done, tooLong(guest)
			}
			// limit+1: one byte more than allowed tells a line too
			// long from one that just fits. Pages are taken only
			// as they are written.
			m, err := unix.Mmap(-1, 0, limit+1, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
			if err != nil {
				return nil, done, fmt.Errorf("no memory for the request: %w", err)
			}
			copy(m, buf[:n])
			mapped, buf = m, m
		}
		end := min(len(buf), n+readChunk)
		if n < freeRead {
			end = min(end, freeRead) // free, then a chunk at a time
		}
		if need := max(0, end-freeRead) - reserved; need > 0 {
			if !s.takeBudget(need, guest) {
				return nil, done, errBusy
			}
			reserved += need
		}
		k, rerr := c.Read(buf[n:end])
		if i := bytes.IndexByte(buf[n:n+k], '\n'); i >= 0 {
			if n+i+1 > limit {
				return nil, done, tooLong(guest)
			}
			return buf[:n+i+1], done, nil
		}
		n += k
		if n > limit {
			return nil, done, tooLong(guest)
		}
		if rerr != nil {
			var ne net.Error
			if errors.As(rerr, &ne) && ne.Timeout() {
				return nil, done, errIncomplete
			}
			return nil, done, rerr
		}
	}
}

func tooLong(guest bool) error {
	if guest {
		return fmt.Errorf("request longer than %d MiB (the limit for guests)", guestRequestMax>>20)
	}
	return fmt.Errorf("request longer than %d MiB", ownerRequestMax>>20)
}

// hungUp says whether the caller closed its end already: a request it
// gave up on (its --timeout passed while fluxsched was stopped) is not
// carried out.
func hungUp(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		gone = n == 0 && err == nil
	})
	return gone
}

// log is the server's logger, or one that drops everything.
func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
