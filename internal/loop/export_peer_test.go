package loop

import "github.com/fluxq/fluxq/internal/wire"

// Connect is how the loop connects p, for the tests of Peer.
func Connect(p *Peer) (wire.Conn, error) { return p.connect() }
