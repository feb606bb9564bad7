// Package connlimit bounds what the callers of a unix socket may hold, so
// that no guest can take the socket, the descriptors or the memory of a
// process from the others, and its privileged callers (the instance owner,
// root) always have room. fluxsched's socket (internal/server) and the exec
// agent's (internal/agent) share it: the same caps, counted the same way.
//
// What it bounds: the connections open at once, in all, of guests
// together and of one guest uid (Tracker.Admit); and the request bytes
// buffered past what every connection reads for free, in all and of
// guests together (Reader, which reads request lines into memory mapped
// for a long one alone, so that it goes back to the system once handled).
package connlimit

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Caps are the bounds of one socket's callers.
type Caps struct {
	// Conns bounds the connections open at once; GuestConns those of
	// guests together, the rest kept for the privileged; PerGuest those
	// of one guest uid.
	Conns, GuestConns, PerGuest int
	// Buffered bounds the request bytes read past FreeRead and not yet
	// handled, across all connections; GuestBuffered guests' part of it,
	// so the privileged always have room.
	Buffered, GuestBuffered int64
	// Line and GuestLine bound one request line, the privileged's and a
	// guest's.
	Line, GuestLine int
}

// ConnCaps derives the connection caps from the descriptor limit:
// connections take half of it at most (and most at most), so the other
// half is left to what the process does besides (a store, job shells,
// pipes and cgroup files of the jobs it forks); guests three quarters of
// that, which keeps a quarter for the privileged; one guest at most
// perGuest and a quarter of the guests' share.
func ConnCaps(most, perGuest int) (conns, guests, per int) {
	conns = most
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < uint64(2*most) {
		conns = max(int(rl.Cur/2), 16)
	}
	guests = conns * 3 / 4
	return conns, guests, max(1, min(perGuest, guests/4))
}

// RaiseNoFile raises the soft descriptor limit to the hard one, where it
// is not already (the Go runtime does so at start; a process whose limit
// was lowered after, or an older runtime, does not), and returns the soft
// limit then in force.
func RaiseNoFile() (uint64, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < rl.Max {
		// prlimit, not Setrlimit: since Go 1.21 Setrlimit also makes
		// every process the runtime execs (a job's tasks) inherit the
		// raised limit, rather than the one this process started with.
		want := unix.Rlimit{Cur: rl.Max, Max: rl.Max}
		if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, &want, nil); err != nil {
			return rl.Cur, err
		}
		rl.Cur = rl.Max
	}
	return rl.Cur, nil
}

// ErrBusy is wrapped by the error of a request refused because the
// buffered bytes' budget is spent.
var ErrBusy = errors.New("too many large requests in progress, try again")

// Tracker counts what a socket's callers hold. Its zero value is not
// usable: make one with New.
type Tracker struct {
	// Name is the process, as messages call it ("fluxsched").
	Name string
	// Log receives the refusals (nothing if nil).
	Log *slog.Logger

	mu       sync.Mutex
	caps     Caps
	open     int
	perUID   map[uint32]int
	guests   int
	buffered int64 // request bytes reserved past FreeRead, all callers
	guestBuf int64 // of which guests'
	freeing  *time.Timer
	refused  map[uint32]*refusals
}

// New makes a Tracker of the given caps.
func New(name string, caps Caps, log *slog.Logger) *Tracker {
	return &Tracker{Name: name, Log: log, caps: caps, perUID: map[uint32]int{}, refused: map[uint32]*refusals{}}
}

// SetCaps replaces the caps (for tests; what is held stays counted).
func (t *Tracker) SetCaps(c Caps) {
	t.mu.Lock()
	t.caps = c
	t.mu.Unlock()
}

// Caps returns the caps in force.
func (t *Tracker) Caps() Caps {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.caps
}

// Admit counts a new connection of uid in, or says why it is refused
// (the words its caller is answered with). A guest is a caller that is
// not privileged.
func (t *Tracker) Admit(uid uint32, guest bool) (bool, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.open >= t.caps.Conns:
		return false, fmt.Sprintf("too many connections (%d open); try again later", t.open)
	case guest && t.perUID[uid] >= t.caps.PerGuest:
		return false, fmt.Sprintf("too many connections from uid %d (%d open); try again later", uid, t.perUID[uid])
	case guest && t.guests >= t.caps.GuestConns:
		return false, fmt.Sprintf("too many connections from guests (%d open); try again later", t.guests)
	}
	t.open++
	t.perUID[uid]++
	if guest {
		t.guests++
	}
	return true, ""
}

// Forget counts a connection Admit let in out.
func (t *Tracker) Forget(uid uint32, guest bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open--
	if t.perUID[uid]--; t.perUID[uid] <= 0 {
		delete(t.perUID, uid)
	}
	if guest {
		t.guests--
	}
}

// Open returns the connections counted in: all, and of uid.
func (t *Tracker) Open(uid uint32) (all, of int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open, t.perUID[uid]
}

// refusals counts one uid's refused connections between two log lines,
// so a flood logs a line a second, not one per connection.
type refusals struct {
	n      int
	reason string
}

// Refused logs a refused connection: the first of uid at once, and the
// ones that follow within a second as one line a second, for as long as
// they go on.
func (t *Tracker) Refused(uid uint32, pid int32, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.refused[uid]; r != nil {
		r.n++
		r.reason = reason
		return
	}
	t.log().Warn("refused connection", "uid", uid, "pid", pid, "reason", reason)
	t.refused[uid] = &refusals{}
	time.AfterFunc(time.Second, func() { t.refusalSummary(uid) })
}

// refusalSummary logs how many more connections of uid were refused in
// the last second, and keeps counting while they still are.
func (t *Tracker) refusalSummary(uid uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.refused[uid]
	if r == nil || r.n == 0 {
		delete(t.refused, uid)
		return
	}
	t.log().Warn("refused connections", "uid", uid, "count", r.n, "within", time.Second, "reason", r.reason)
	t.refused[uid] = &refusals{}
	time.AfterFunc(time.Second, func() { t.refusalSummary(uid) })
}

func (t *Tracker) log() *slog.Logger {
	if t.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return t.Log
}

// Take takes n bytes of the request budget, or says there are none.
func (t *Tracker) Take(n int, guest bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buffered+int64(n) > t.caps.Buffered || (guest && t.guestBuf+int64(n) > t.caps.GuestBuffered) {
		return false
	}
	t.buffered += int64(n)
	if guest {
		t.guestBuf += int64(n)
	}
	return true
}

// Give gives n bytes back to the budget.
func (t *Tracker) Give(n int, guest bool) {
	if n == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buffered -= int64(n)
	if guest {
		t.guestBuf -= int64(n)
	}
}

// Buffered returns the budget in use: by all, and by guests.
func (t *Tracker) Buffered() (all, guests int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buffered, t.guestBuf
}

// FreeSoon returns the free heap to the system in a second, after a
// large request was handled: the runtime would keep what decoding it
// took for a long while, and such requests are rare.
func (t *Tracker) FreeSoon() {
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
