package state

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// DrainRecord is why and since when a rank is drained.
type DrainRecord struct {
	Timestamp float64 `json:"timestamp"`
	Reason    string  `json:"reason"`
}

// Inventory reads the instance's resources as fluxsched last saved them.
func Inventory(tx *store.Tx) (*rset.R, error) {
	raw := tx.Inventory()
	if raw == nil {
		return nil, fmt.Errorf("no resources are known yet: start fluxsched once")
	}
	return rset.Parse(raw)
}

// ResolveTargets turns drain targets — a rank idset or a hostlist, as
// `flux resource drain` takes them — into ranks of the inventory.
func ResolveTargets(inv *rset.R, targets string) (idset.Set, error) {
	all := inv.Ranks()
	if strings.TrimSpace(targets) == "" {
		return idset.Set{}, fmt.Errorf("no targets given")
	}
	if ranks, err := idset.Parse(targets); err == nil {
		if extra := ranks.Difference(all); !extra.IsEmpty() {
			return idset.Set{}, fmt.Errorf("invalid rank(s) %s", extra)
		}
		return ranks, nil
	}
	hosts, err := hostlist.Parse(targets)
	if err != nil || hosts.IsEmpty() {
		return idset.Set{}, fmt.Errorf("invalid targets %q: not a rank idset or a hostlist", targets)
	}
	var ranks []uint
	nodes := inv.Nodelist()
	for _, h := range hosts.Expand() {
		i := nodes.Find(h)
		if i < 0 {
			return idset.Set{}, fmt.Errorf("unknown host %q", h)
		}
		r, _ := inv.Ranks().Nth(i) // the nodelist has one host per rank
		ranks = append(ranks, r)
	}
	return idset.Of(ranks...), nil
}

// Drain marks ranks drained with a reason and returns every drained rank.
// Without force, a rank already drained is an error (flux resource drain).
func Drain(tx *store.Tx, targets, reason string, force bool, now time.Time) (idset.Set, error) {
	inv, err := Inventory(tx)
	if err != nil {
		return idset.Set{}, err
	}
	ranks, err := ResolveTargets(inv, targets)
	if err != nil {
		return idset.Set{}, err
	}
	if !force {
		var already []uint
		for r := range ranks.All() {
			if tx.Drain(uint64(r)) != nil {
				already = append(already, r)
			}
		}
		if len(already) > 0 {
			return idset.Set{}, fmt.Errorf("rank %s already drained (use -f to update the reason)", idset.Of(already...))
		}
	}
	rec, _ := json.Marshal(DrainRecord{Timestamp: Timestamp(now), Reason: reason})
	for r := range ranks.All() {
		if err := tx.PutDrain(uint64(r), rec); err != nil {
			return idset.Set{}, err
		}
	}
	return Drained(tx)
}

// Undrain returns ranks to service and returns every rank still drained.
func Undrain(tx *store.Tx, targets string) (idset.Set, error) {
	inv, err := Inventory(tx)
	if err != nil {
		return idset.Set{}, err
	}
	ranks, err := ResolveTargets(inv, targets)
	if err != nil {
		return idset.Set{}, err
	}
	for r := range ranks.All() {
		if tx.Drain(uint64(r)) == nil {
			return idset.Set{}, fmt.Errorf("rank %d is not drained", r)
		}
	}
	for r := range ranks.All() {
		if err := tx.PutDrain(uint64(r), nil); err != nil {
			return idset.Set{}, err
		}
	}
	return Drained(tx)
}

// Drained is the set of drained ranks.
func Drained(tx *store.Tx) (idset.Set, error) {
	var ranks []uint
	err := tx.ForEachDrain(func(rank uint64, _ []byte) error {
		ranks = append(ranks, uint(rank))
		return nil
	})
	return idset.Of(ranks...), err
}
