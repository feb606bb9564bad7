package jobmgr_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/resource"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// BenchmarkCancelAll is the loop's turn of a `fluxq cancel --all` of
// 20,000 pending jobs (issue 28): the checkpoint, each job's exception and
// clean, the turn's summaries, the commit with its syncs; per job, and the
// commit apart.
func BenchmarkCancelAll(b *testing.B) {
	const n = 20000
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node0", Cores: "0-1"}})
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := inv.MarshalJSON()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Environment: map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/user", "PAD": strings.Repeat("x", 1500)}})
	if err != nil {
		b.Fatal(err)
	}
	spec, _ := json.Marshal(js)
	var turn, commit time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		st, err := store.Open(filepath.Join(b.TempDir(), strconv.Itoa(i)+".db"), store.Options{Timeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		var jm *jobmgr.Manager
		var ids []fluid.ID
		err = st.Update(func(tx *store.Tx) error {
			if err := tx.PutInventory(raw); err != nil {
				return err
			}
			reqs := make([]ops.SubmitRequest, n)
			for i := range reqs {
				reqs[i] = ops.SubmitRequest{Jobspec: spec, UserID: 100, Urgency: 16}
			}
			ids, _, err = ops.Submit(tx, time.Now(), reqs, nil)
			return err
		})
		if err == nil {
			err = st.Update(func(tx *store.Tx) error {
				res, err := ops.LoadReservations(tx, reservation.Support{})
				if err != nil {
					return err
				}
				jm = jobmgr.New(jobmgr.Config{Inventory: inv, Reservations: res, Owner: 100})
				jm.DeferSummaries()
				if err := jm.Load(tx); err != nil {
					return err
				}
				return jm.SaveSummaries(tx)
			})
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		var c jobmgr.Checkpoint
		jm.Save(&c)
		var t1 time.Time
		err = st.Update(func(tx *store.Tx) error {
			for _, id := range ids {
				if err := jm.Cancel(tx, id, 100, ""); err != nil {
					return err
				}
			}
			err := jm.SaveSummaries(tx)
			t1 = time.Now()
			return err
		})
		t2 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		turn += t1.Sub(t0)
		commit += t2.Sub(t1)
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(turn.Nanoseconds())/float64(b.N)/n, "ns-turn/job")
	b.ReportMetric(float64(commit.Nanoseconds())/float64(b.N)/n, "ns-commit/job")
}
