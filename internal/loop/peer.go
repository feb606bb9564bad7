package loop

import (
	"errors"
	"sync"

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
