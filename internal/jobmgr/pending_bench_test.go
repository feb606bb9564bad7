package jobmgr_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// BenchmarkPendingMemory is the live heap the job manager holds per
// pending job (issue 24: 100,000 pending jobs held 1.36 GB in fluxsched):
// 10,000 jobs submitted in batches of 1,000, as `fluxq submit --cc` sends
// them, each with an environment of 40 variables (about 2 KB, as a login
// shell's), none scheduled. It reports live-B/job, measured after two
// collections; bench/rss_pending.sh measures the whole process.
func BenchmarkPendingMemory(b *testing.B) {
	const jobs, batch = 10000, 1000
	env := map[string]string{}
	for i := range 40 {
		env[fmt.Sprintf("VARIABLE_%02d", i)] = fmt.Sprintf("/usr/local/share/value/of/variable/number/%02d", i)
	}
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"sleep", "300"}, Cwd: "/home/user/work", Environment: env})
	if err != nil {
		b.Fatal(err)
	}
	spec, _ := json.Marshal(js)
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node0", Cores: "0-1"}})
	if err != nil {
		b.Fatal(err)
	}
	rawInv, _ := inv.MarshalJSON()
	for range b.N {
		st, err := store.Open(filepath.Join(b.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		jm := jobmgr.New(jobmgr.Config{Inventory: inv, Owner: 100})
		if err := st.Update(func(tx *store.Tx) error {
			if err := tx.PutInventory(rawInv); err != nil {
				return err
			}
			return jm.Load(tx)
		}); err != nil {
			b.Fatal(err)
		}
		before := liveHeap()
		for done := 0; done < jobs; done += batch {
			reqs := make([]ops.SubmitRequest, batch)
			for i := range reqs {
				reqs[i] = ops.SubmitRequest{Jobspec: spec, UserID: 100, Owner: true, Urgency: 16}
			}
			if err := st.Update(func(tx *store.Tx) error {
				_, recs, err := ops.Submit(tx, time.Now(), reqs, nil)
				if err != nil {
					return err
				}
				return jm.Submitted(tx, recs)
			}); err != nil {
				b.Fatal(err)
			}
		}
		after := liveHeap()
		if n := jm.Active(); n != jobs {
			b.Fatalf("%d jobs active, want %d", n, jobs)
		}
		b.ReportMetric(float64(int64(after)-int64(before))/jobs, "live-B/job")
		runtime.KeepAlive(jm)
		st.Close()
	}
}

// liveHeap is the heap a full collection leaves live.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
