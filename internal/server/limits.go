package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/connlimit"
)

// What one caller may hold of fluxsched, so that no guest can take the
// socket, the descriptors or the memory from the others, and the
// instance owner is always served (issue 13).
const (
	// maxConns bounds the open connections, whatever the descriptor
	// limit allows; connlimit.ConnCaps lowers it to half of that limit,
	// leaving the rest to the store, the job shells and the scheduler.
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

// tracker holds the connections the server has open, and counts what
// they take (internal/connlimit: their number per uid, the request bytes
// buffered).
type tracker struct {
	*connlimit.Tracker
	mu      sync.Mutex
	conns   map[*conn]struct{}
	closing bool
}

func (s *Server) tracker() *tracker {
	s.once.Do(func() {
		conns, guests, per := connlimit.ConnCaps(maxConns, maxGuestConns)
		s.t = &tracker{Tracker: connlimit.New("fluxsched", connlimit.Caps{
			Conns: conns, GuestConns: guests, PerGuest: per,
			Buffered: bufferedMax, GuestBuffered: guestBufferedMax,
			Line: ownerRequestMax, GuestLine: guestRequestMax,
		}, s.Log), conns: map[*conn]struct{}{}}
	})
	return s.t
}

// conn is an open connection as the server tracks it.
type conn struct {
	c   *net.UnixConn
	who peer
	// dispatched: the request arrived whole and is being answered; a
	// shutdown lets it finish for shutdownGrace.
	dispatched bool
}

// admit counts a new connection in, or says why it is refused.
func (s *Server) admit(c *net.UnixConn, who peer) (*conn, string) {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return nil, "fluxsched is shutting down"
	}
	if ok, why := t.Admit(who.uid, who.uid != s.Owner); !ok {
		return nil, why
	}
	cn := &conn{c: c, who: who}
	t.conns[cn] = struct{}{}
	return cn, ""
}

// forget counts a closed connection out.
func (s *Server) forget(cn *conn) {
	t := s.tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns, cn)
	t.Forget(cn.who.uid, cn.who.uid != s.Owner)
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

// refuse answers a connection that is not admitted with why, closes it,
// and logs it (a flood as a line a second).
func (s *Server) refuse(c *net.UnixConn, who peer, reason string) {
	// Not through a writer: a caller that does not read is not waited
	// for here, in the accept loop.
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	json.NewEncoder(c).Encode(api.Reply{Error: reason, Final: true})
	c.Close()
	s.tracker().Refused(who.uid, who.pid, reason)
}

// Why a request line was not read whole.
var (
	errBusy       = connlimit.ErrBusy
	errIncomplete = errors.New("request not received whole in time")
)

// takeBudget takes n bytes of the request budget, or says there are none.
func (s *Server) takeBudget(n int, guest bool) bool { return s.tracker().Take(n, guest) }

// giveBudget gives n bytes back to the budget.
func (s *Server) giveBudget(n int, guest bool) { s.tracker().Give(n, guest) }

// freeSoon returns the free heap to the system in a second, after a
// large request was answered.
func (s *Server) freeSoon() { s.tracker().FreeSoon() }

// readRequest reads one request line, a guest's at most guestRequestMax
// bytes, the owner's ownerRequestMax (connlimit.Reader: a long line is
// read into memory mapped for it alone, and what it takes past
// connlimit.FreeRead is taken from the budget). The caller calls done
// once it is through with line, even on error.
func (s *Server) readRequest(c net.Conn, guest bool) (line []byte, done func(), err error) {
	r := s.tracker().NewReader(c, guest, 4<<10)
	line, err = r.ReadLine()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			err = errIncomplete
		}
	}
	return line, r.Close, err
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
