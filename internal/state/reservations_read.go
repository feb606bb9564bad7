package state

import (
	"encoding/json"
	"fmt"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/store"
)

// ListReservations describes st; alive says which jobs are alive.
func ListReservations(st *reservation.State, all bool, alive func(fluid.ID) bool) *api.ReservationList {
	out := &api.ReservationList{Reservations: []api.ReservationView{}, Nodes: []api.NodeView{}}
	for _, r := range st.All(all) {
		out.Reservations = append(out.Reservations, View(st, r, alive))
	}
	for _, n := range st.Nodes() {
		if n.Origin == reservation.Spare && n.Removed {
			continue
		}
		out.Nodes = append(out.Nodes, api.NodeView{Node: n, Session: st.Session(n.Name)})
	}
	return out
}

// View describes one reservation.
func View(st *reservation.State, r *reservation.Reservation, alive func(fluid.ID) bool) api.ReservationView {
	v := api.ReservationView{Reservation: *r, State: "active", Origins: map[string]string{}, LiveChildren: []fluid.ID{}}
	if !r.Live() {
		v.State = "ended"
	}
	for _, name := range r.Nodes {
		if n, ok := st.Node(name); ok {
			v.Origins[name] = string(n.Origin)
		}
	}
	for _, c := range r.Children {
		if alive(c) {
			v.LiveChildren = append(v.LiveChildren, c)
		}
	}
	return v
}

// aliveInStore says which jobs the store holds as not inactive, from
// their summaries (an eventlog replay per child would be much dearer).
func aliveInStore(tx *store.Tx) func(fluid.ID) bool {
	return func(id fluid.ID) bool {
		raw, err := tx.JobValue(uint64(id), store.JobSummary)
		if err != nil {
			return false
		}
		var s struct {
			State string `json:"state"`
		}
		return json.Unmarshal(raw, &s) == nil && s.State != job.Inactive.String()
	}
}

// StoredReservations lists reservations as the store holds them. The loop
// saves the reservation state in every turn that changes it, so a read
// transaction sees what the last committed turn did, without taking a
// turn of the loop.
func StoredReservations(tx *store.Tx, all bool) (*api.ReservationList, error) {
	st, err := ReservationsOrEmpty(tx)
	if err != nil {
		return nil, err
	}
	return ListReservations(st, all, aliveInStore(tx)), nil
}

// ExpandHosts expands the hostlist of nodes to add or remove.
func ExpandHosts(hosts string) ([]string, error) {
	hl, err := hostlist.Parse(hosts)
	if err != nil || hl.IsEmpty() {
		return nil, fmt.Errorf("invalid hostlist %q", hosts)
	}
	if hl.Count() > 1<<20 {
		return nil, fmt.Errorf("hostlist %q is too long", hosts)
	}
	return hl.Expand(), nil
}
