package schedproto

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
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
//
// fluxq extends RFC 28 for node reservations, because the scheduler is the
// one that must keep a job off nodes it may not use (the node-reservation
// specification's conformance item 1) and the job manager is the one that
// knows who holds what:
//   - "resources" in an update is R v1 of ranks joining the inventory
//     (spare nodes registered after start); its ranks must be new.
//   - "sessions" maps allocation ids to the idset of ranks each non-shared
//     reservation holds. It is the complete map and replaces the previous
//     one; ranks in none are in the default session, and {} clears all.
//     The reservations are disjoint and none is named "default".
//   - "outside" is the complete idset of ranks the scheduler knows that are
//     not in the instance now (spare nodes in the scheduler's pool): no job
//     is placed there, but they count when deciding whether a job could
//     ever fit, so a job that needs them waits instead of being denied.
//     They are in no reservation.
//
// The first response may carry sessions and outside too. An update carries
// at least one of up, down, resources, sessions and outside; a key that is
// absent (or null) leaves that part as it was.
type Acquire struct {
	Resources json.RawMessage      `json:"resources,omitempty"` // R v1
	Up        *string              `json:"up,omitempty"`        // idset
	Down      *string              `json:"down,omitempty"`      // idset
	Sessions  map[string]idset.Set `json:"sessions,omitzero"`   // alloc id -> ranks; non-nil and empty clears
	Outside   *idset.Set           `json:"outside,omitempty"`
}

// DecodeAcquire reads one resource.acquire response; first says whether it
// is the stream's first.
func DecodeAcquire(m wire.Message, first bool) (Acquire, error) {
	var required []string
	if first {
		required = []string{"resources", "up"}
	}
	a, err := wire.DecodeTyped[Acquire](m, required...)
	if err != nil {
		return a, err
	}
	if !first && len(a.Resources) == 0 && a.Up == nil && a.Down == nil && a.Sessions == nil && a.Outside == nil {
		return a, fmt.Errorf("%s: an update carries up, down, resources, sessions or outside", m.Topic)
	}
	if err := a.checkSessions(); err != nil {
		return a, fmt.Errorf("%s: %w", m.Topic, err)
	}
	return a, nil
}

// checkSessions refuses what would leave a rank's session ambiguous: a
// reservation without a name or named like the default session, a rank in
// two reservations, or a reserved rank outside the instance.
func (a *Acquire) checkSessions() error {
	ids := make([]string, 0, len(a.Sessions))
	for id := range a.Sessions {
		if id == "" || id == jobspec.DefaultSession {
			return fmt.Errorf("sessions: %q is not an allocation id", id)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids) // so the error names the same pair every time
	var seen idset.Set
	for _, id := range ids {
		ranks := a.Sessions[id]
		if both := seen.Intersection(ranks); !both.IsEmpty() {
			for _, other := range ids {
				if other < id && !a.Sessions[other].Intersection(both).IsEmpty() {
					return fmt.Errorf("sessions: ranks %s are in both %s and %s", a.Sessions[other].Intersection(both), other, id)
				}
			}
		}
		seen = seen.Union(ranks)
	}
	if a.Outside != nil {
		if both := seen.Intersection(*a.Outside); !both.IsEmpty() {
			return fmt.Errorf("outside: ranks %s are also reserved", both)
		}
	}
	return nil
}
