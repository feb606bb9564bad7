package loop

import (
	"errors"
	"sync"
	"time"

	"github.com/fluxq/fluxq/internal/wire"
)

// ErrNoReconnect tells the loop that a peer is gone for good.
var ErrNoReconnect = errors.New("peer does not reconnect")

// Peer is the loop's connection to the scheduler or the exec service. When
// the connection ends (the peer crashed, or broke the protocol and was
// suspended), the loop calls Connect again: RFC 27 and RFC 32 let a new
// scheduler or exec service take over with a fresh hello, and jobs
// continue — allocations are replayed, shells are reattached.
type Peer struct {
	// Connect starts (or reaches) the peer and returns the connection.
	Connect func() (wire.Conn, error)
	// Local says the peer is the scheduler of this process, which
	// answers schedproto.TopicSync: the loop may then exchange messages
	// with it inside a turn, before the commit (see Loop.exchange). It
	// must reconnect (its Connect starts a new scheduler) so that a
	// turn whose commit fails can put it back in step.
	Local bool

	mu     sync.Mutex
	conn   wire.Conn
	closed bool
	// breached is a connection the loop closed because the peer broke
	// the protocol, and backoff the pause before its successor: doubled
	// at each breach in a row, from reconnectMin up to reconnectMax, so
	// that a scheduler that keeps failing is not restarted in a tight
	// loop. A peer that comes up well (healthy) starts again from zero.
	breached wire.Conn
	backoff  time.Duration
}

// breach marks c as closed for breaking the protocol, and returns the
// pause before the next connection.
func (p *Peer) breach(c wire.Conn) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.breached = c
	p.backoff = min(max(2*p.backoff, reconnectMin), reconnectMax)
	return p.backoff
}

// healthy says the peer came up well: its next breach pauses briefly.
func (p *Peer) healthy() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backoff = 0
}

// pauseAfter returns the pause after c ended if the loop closed it for a
// breach.
func (p *Peer) pauseAfter(c wire.Conn) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c == nil || c != p.breached {
		return 0, false
	}
	return p.backoff, true
}

// Once is a peer that connects exactly once, through c.
func Once(c wire.Conn) *Peer {
	used := false
	return &Peer{Connect: func() (wire.Conn, error) {
		if used || c == nil {
			return nil, ErrNoReconnect
		}
		used = true
		return c, nil
	}}
}

func (p *Peer) connect() (wire.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrNoReconnect
	}
	c, err := p.Connect()
	if err != nil {
		return nil, err
	}
	p.conn = c
	return c, nil
}

func (p *Peer) current() wire.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn
}

// Close ends the connection and any reconnecting.
func (p *Peer) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.conn != nil {
		return p.conn.Close()
	}
	return nil
}

// currentConn is the live connection of a peer that may be nil.
func (p *Peer) currentConn() wire.Conn {
	if p == nil {
		return nil
	}
	return p.current()
}
