package state

import (
	"encoding/json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// LoadResources reads the inventory, what jobs hold, and drain records.
func LoadResources(tx *store.Tx) (*api.ResourceInfo, error) {
	inv, err := Inventory(tx)
	if err != nil {
		return nil, err
	}
	held := &rset.R{}
	err = tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
		var s struct {
			State string `json:"state"`
		}
		// A damaged summary is made again from the record: a running
		// job's cores never read as free.
		if err := decodeSummary(fluid.ID(id), get, &s); err != nil {
			return false, err
		}
		if s.State != "RUN" && s.State != "CLEANUP" {
			return true, nil
		}
		rec, err := Load(tx, fluid.ID(id))
		if err != nil || rec.R == nil || !rec.Job.Allocated {
			return true, err
		}
		held, err = held.Union(rec.R)
		return err == nil, err
	})
	if err != nil {
		return nil, err
	}
	res := &api.ResourceInfo{}
	if res.Inventory, err = inv.MarshalJSON(); err != nil {
		return nil, err
	}
	if res.Allocated, err = held.MarshalJSON(); err != nil {
		return nil, err
	}
	err = tx.ForEachDrain(func(rank uint64, raw []byte) error {
		var d DrainRecord
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		res.Drained = append(res.Drained, api.DrainedRank{Rank: uint(rank), Timestamp: d.Timestamp, Reason: d.Reason})
		return nil
	})
	if err != nil {
		return nil, err
	}
	drained, err := Drained(tx)
	if err != nil {
		return nil, err
	}
	res.Draining = drained.Intersection(held.Ranks()).String()
	return res, nil
}
