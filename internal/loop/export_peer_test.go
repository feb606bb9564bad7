package loop

import (
	"time"

	"github.com/fluxq/fluxq/internal/wire"
)

// Connect is how the loop connects p, for the tests of Peer.
func Connect(p *Peer) (wire.Conn, error) { return p.connect() }

// Breach, Healthy and PauseAfter are the loop's restart backoff, for
// the tests of Peer.
func Breach(p *Peer, c wire.Conn) time.Duration { return p.breach(c) }
func Healthy(p *Peer)                           { p.healthy() }
func PauseAfter(p *Peer, c wire.Conn) (time.Duration, bool) {
	return p.pauseAfter(c)
}
