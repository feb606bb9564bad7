package writes

import (
	"encoding/json"
	"strings"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/state"
)

// HostDrainPrefix begins the reason of a drain the exec service made: a
// host it cannot reach. It is how an undrain tells the exec service's
// drain from an admin's, which it never lifts.
const HostDrainPrefix = "unreachable: "

// HostDrain applies the exec service's execproto.HostDrain in the loop's
// turn, through the same store write as `fluxres drain`: a host already
// drained (by an admin, or by an earlier notice) keeps its reason; an
// undrain lifts only a drain whose reason the exec service wrote.
func HostDrain(t *Turn, d execproto.HostDrain) error {
	inv, err := state.Inventory(t.Tx)
	if err != nil {
		return err
	}
	ranks, err := state.ResolveTargets(inv, d.Host)
	if err != nil {
		return err
	}
	var mine, free []uint
	for r := range ranks.All() {
		raw := t.Tx.Drain(uint64(r))
		if raw == nil {
			free = append(free, r)
			continue
		}
		var rec state.DrainRecord
		if json.Unmarshal(raw, &rec) == nil && strings.HasPrefix(rec.Reason, HostDrainPrefix) {
			mine = append(mine, r)
		}
	}
	switch {
	case d.Drain && len(free) > 0:
		reason := HostDrainPrefix + d.Reason
		if _, err := state.Drain(t.Tx, idset.Of(free...).String(), reason, false, t.JM.Now()); err != nil {
			return err
		}
	case !d.Drain && len(mine) > 0:
		if _, err := state.Undrain(t.Tx, idset.Of(mine...).String()); err != nil {
			return err
		}
	default:
		return nil
	}
	return down(t)
}
