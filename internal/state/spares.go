package state

import (
	"fmt"
	"strings"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/store"
)

// AddSpareNodes registers spare nodes while no loop runs (the loop's job
// manager does it itself, to tell its scheduler), and names them.
func AddSpareNodes(tx *store.Tx, p api.SpareParams) ([]string, error) {
	st, err := ReservationsOrEmpty(tx)
	if err != nil {
		return nil, err
	}
	r, err := AddSpares(tx, st, p.Hosts, p.Cores, p.GPUs)
	if err != nil {
		return nil, err
	}
	return r.Nodelist().Expand(), nil
}

// RemoveSpareNodes takes spare nodes out of the pool while no loop runs;
// a node in the instance must wait for one, so its jobs can be stopped.
func RemoveSpareNodes(tx *store.Tx, hosts string) error {
	st, err := ReservationsOrEmpty(tx)
	if err != nil {
		return err
	}
	names, err := ExpandHosts(hosts)
	if err != nil {
		return err
	}
	ch, err := st.RemoveNodes(names)
	if err != nil {
		return err
	}
	if len(ch.Departed) > 0 {
		return fmt.Errorf("node %s is in the instance: remove it while fluxsched runs, so its jobs can be stopped", strings.Join(ch.Departed, ","))
	}
	return SaveReservations(tx, st)
}
