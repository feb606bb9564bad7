package state

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// listingStore is a store of n jobs as `fluxq submit --cc 1-N true` leaves
// them once the job manager took them up: pending in SCHED, each with a
// shell's environment in its jobspec (what bench/listings.sh stores), on
// an instance whose one node is drained, so that each listed job's INFO
// is worked out from the store (state.ExplainPending).
func listingStore(b *testing.B, n int) *store.Store {
	b.Helper()
	st, err := store.Open(filepath.Join(b.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	env := map[string]string{}
	for i := range 30 {
		env[fmt.Sprintf("VAR_%02d", i)] = fmt.Sprintf("/usr/local/share/value-%02d:/usr/bin:/bin", i)
	}
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/home/alice", Environment: env})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := js.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	inv, _ := rset.New([]rset.Node{{Rank: 0, Hostname: "vm", Cores: idset.MustParse("0-1")}}).MarshalJSON()
	now := time.Unix(1796196626, 0)
	err = st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(inv); err != nil {
			return err
		}
		_, err := Drain(tx, "0", "bench", false, now)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	for left := n; left > 0; left -= 10_000 {
		reqs := make([]SubmitRequest, min(left, 10_000))
		for i := range reqs {
			reqs[i] = SubmitRequest{Jobspec: raw, UserID: 1000, Urgency: 16}
		}
		err := st.Update(func(tx *store.Tx) error {
			_, recs, err := Submit(tx, now, reqs, nil)
			if err != nil {
				return err
			}
			for _, rec := range recs {
				for _, ev := range []eventlog.Event{
					{Timestamp: 1796196627.1, Name: job.EventDepend},
					{Timestamp: 1796196627.2, Name: job.EventPriority, Context: map[string]any{"priority": 16}},
				} {
					if err := Append(tx, rec, ev); err != nil {
						return err
					}
				}
				if err := SaveSummary(tx, rec); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// BenchmarkJobsRead100k is the store's part of `fluxq jobs -a` over
// 100,000 pending jobs, on either path: the jobs read both transports
// run (select, decode, sort, explain, redact), and the answer encoded as
// the server sends it (issue 28: the whole command under 1 s).
func BenchmarkJobsRead100k(b *testing.B) {
	st := listingStore(b, 100_000)
	r, _ := ReaderOf(api.Jobs.Name)
	q, _ := json.Marshal(api.JobsQuery{States: job.Pending | job.Running | job.Inactive})
	c := Caller{UID: 1000}
	b.ResetTimer()
	for b.Loop() {
		var v any
		err := st.View(func(tx *store.Tx) error {
			var err error
			v, err = r.Run(tx, c, func(p any) error { return json.Unmarshal(q, p) })
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if got := len(v.([]api.JobSummary)); got != 100_000 {
			b.Fatalf("listed %d jobs", got)
		}
		// As internal/server's writer.result encodes an answer.
		if _, err := gojson.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}
