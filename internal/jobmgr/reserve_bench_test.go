package jobmgr_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/resource"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// benchInstance is the scale: 10,000 configured hosts and 10,000
// live jobs, half of them spawned into a reservation, a tenth of the hosts
// held by reservations already.
func benchInstance(b *testing.B) (*store.Store, *jobmgr.Manager) {
	b.Helper()
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node[0-9999]", Cores: "0-63"}})
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(filepath.Join(b.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	raw, _ := inv.MarshalJSON()
	var jm *jobmgr.Manager
	err = st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		res, err := ops.LoadReservations(tx, reservation.Support{})
		if err != nil {
			return err
		}
		jm = jobmgr.New(jobmgr.Config{Inventory: inv, Reservations: res, Owner: 100})
		if err := jm.Load(tx); err != nil {
			return err
		}
		tool := reservation.Requester{Class: reservation.Tool, NS: reservation.ToolNS("bench")}
		for i := 0; i < 100; i++ {
			if _, err := jm.Reserve(tx, reservation.Request{Op: reservation.OpNew, Count: 10}, tool, 100); err != nil {
				return err
			}
		}
		var reqs []ops.SubmitRequest
		for i := 0; i < 10000; i++ {
			js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}})
			if err != nil {
				return err
			}
			if i%2 == 0 {
				js.Attributes.System.Extra = map[string]any{jobspec.TargetsKey: []any{fmt.Sprintf("r%d", 1+i%100)}}
			}
			b, _ := json.Marshal(js)
			reqs = append(reqs, ops.SubmitRequest{Jobspec: b, UserID: 100, Urgency: 0, Who: &tool})
		}
		_, recs, err := ops.Submit(tx, time.Now(), reqs, jm.Reservations())
		if err != nil {
			return err
		}
		return jm.Submitted(tx, recs)
	})
	if err != nil {
		b.Fatal(err)
	}
	return st, jm
}

// reserve runs one request in its own transaction, committed, as a loop
// turn serving it would.
func reserve(b *testing.B, st *store.Store, jm *jobmgr.Manager, req reservation.Request) *reservation.Reservation {
	var r *reservation.Reservation
	err := st.Update(func(tx *store.Tx) error {
		var err error
		r, err = jm.Reserve(tx, req, reservation.Requester{Class: reservation.Tool, NS: reservation.ToolNS("bench")}, 100)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkReservation(b *testing.B) {
	st, jm := benchInstance(b)
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			r := reserve(b, st, jm, reservation.Request{Op: reservation.OpNew, Count: 2})
			b.StopTimer()
			reserve(b, st, jm, reservation.Request{Op: reservation.OpRelease, ID: r.ID})
			b.StartTimer()
		}
	})
	b.Run("extend", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			r := reserve(b, st, jm, reservation.Request{Op: reservation.OpNew, Count: 1})
			b.StartTimer()
			reserve(b, st, jm, reservation.Request{Op: reservation.OpExtend, ID: r.ID, Count: 1})
			b.StopTimer()
			reserve(b, st, jm, reservation.Request{Op: reservation.OpRelease, ID: r.ID})
			b.StartTimer()
		}
	})
	b.Run("release", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			r := reserve(b, st, jm, reservation.Request{Op: reservation.OpNew, Count: 2})
			b.StartTimer()
			reserve(b, st, jm, reservation.Request{Op: reservation.OpRelease, ID: r.ID})
		}
	})
}
