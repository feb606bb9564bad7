package schedproto

import (
	"encoding/json"
	"fmt"

	"github.com/fluxq/fluxq/internal/wire"
)

// TopicAcquire is how a scheduler learns its resources: RFC 27 leaves the
// inventory out ("It does not cover the mechanism by which a scheduler
// discovers the initial inventory"), and Flux's answer is RFC 28's
// resource.acquire streaming RPC, which fluxq follows: the scheduler sends
// it first, before hello.
const TopicAcquire = "resource.acquire"

// Acquire is one resource.acquire response. The first carries the whole
// inventory as R ("resources") and the ranks that are up; later ones say
// which ranks went up or down (drained nodes count as down, as in Flux).
type Acquire struct {
	Resources json.RawMessage `json:"resources,omitempty"` // R v1 (first response only)
	Up        *string         `json:"up,omitempty"`        // idset
	Down      *string         `json:"down,omitempty"`      // idset
}

// DecodeAcquire reads one resource.acquire response; first says whether it
// is the stream's first.
func DecodeAcquire(m wire.Message, first bool) (Acquire, error) {
	var a Acquire
	var required []string
	if first {
		required = []string{"resources", "up"}
	}
	if err := wire.Decode(m, &a, required...); err != nil {
		return a, err
	}
	if !first && (len(a.Resources) > 0 || (a.Up == nil && a.Down == nil)) {
		return a, fmt.Errorf("%s: an update carries up or down, not resources", m.Topic)
	}
	return a, nil
}
