package agent

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/connlimit"
	"github.com/fluxq/fluxq/internal/peercred"
	"github.com/fluxq/fluxq/internal/wire"
)

// What the agent's callers may hold of it (issue 24), with fluxsched's
// socket's code (internal/connlimit): its socket is open to every local
// user when guests are allowed, and a flood of connections or bytes must
// never keep it from launching a job.
//
// Who is let in is decided at accept, on the peer's uid: the instance
// owner (the agent's uid) and root always, as privileged callers; any
// other uid only while it owns a job the agent holds, since all it may
// send is agent.cancel of its own jobs. A guest is such a caller.
const (
	// maxConns bounds the connections, whatever the descriptor limit
	// allows; connlimit.ConnCaps lowers it to half of that limit, so the
	// other half is always there for forking jobs (their pipes, cgroup
	// files, pidfds).
	maxConns = 1024
	// maxGuestConns bounds one guest's: more than enough for fluxq
	// cancels side by side, each a connection of its own.
	maxGuestConns = 64
	// guestLineMax bounds a guest's request line: an agent.cancel takes
	// under a hundred bytes.
	guestLineMax = 4 << 10
	// bufferedMax bounds the bytes of long lines read and not yet
	// handled (a start's jobspec with a large environment); guests never
	// need any, their lines being under connlimit.FreeRead.
	bufferedMax = 256 << 20
	// ownerBuffer is the buffer of a privileged connection, which a
	// start's line fits in unless its environment is large.
	ownerBuffer = 64 << 10
	// guestOutMax bounds the answers queued to a guest that does not
	// read them; past it, its connection is closed.
	guestOutMax = 64 << 10
	// freeAfter is the size of line after whose handling the heap it
	// took is handed back to the system, not kept.
	freeAfter = 4 << 20
)

// guestRequestTimeout bounds the wait for a guest's next line: a cancel
// is sent at once, so an idle guest connection is closed. (A variable
// for tests.)
var guestRequestTimeout = 30 * time.Second

// caps are the agent's caps, taken from the descriptor limit, raised to
// the hard one first.
func caps(log *slog.Logger) connlimit.Caps {
	if _, err := connlimit.RaiseNoFile(); err != nil {
		log.Warn("cannot raise the descriptor limit", "err", err)
	}
	conns, guests, per := connlimit.ConnCaps(maxConns, maxGuestConns)
	return connlimit.Caps{Conns: conns, GuestConns: guests, PerGuest: per,
		Buffered: bufferedMax, GuestBuffered: 0, Line: wire.MaxLine, GuestLine: guestLineMax}
}

// admit decides on a new connection of uid: let in (guest says whether
// it is counted as one), or refused with why. The instance owner and root
// are privileged: never counted against the guests' caps. Any other uid
// is let in only while it owns a job the agent holds.
func (a *Agent) admit(uid uint32) (guest bool, why string) {
	a.mu.Lock()
	guest = uid != a.uid && uid != 0
	owns := !guest
	for _, j := range a.jobs {
		if owns {
			break
		}
		owns = j.userid == uid
	}
	a.mu.Unlock()
	if !owns {
		return guest, fmt.Sprintf("permission denied: uid %d has no job on this exec agent", uid)
	}
	if ok, why := a.lim.Admit(uid, guest); !ok {
		return guest, why
	}
	return guest, ""
}

// refuse answers a connection that is not let in with why, as an error
// of agent.cancel (all a guest may ask), closes it, and logs it (a flood
// as a line a second).
func (a *Agent) refuse(c *net.UnixConn, cred caller, why string) {
	// Not through the connection's writer: a caller that does not read
	// is not waited for here, in the accept loop.
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(errorLine(agentproto.TopicCancel, errPerm, why))
	c.Close()
	a.lim.Refused(cred.uid, cred.pid, why)
}

// caller is who is calling.
type caller struct {
	uid uint32
	pid int32
}

func credentials(c *net.UnixConn) (caller, error) {
	cred, err := peercred.Of(c)
	if err != nil {
		return caller{}, err
	}
	return caller{uid: cred.Uid, pid: cred.Pid}, nil
}
