package state

import (
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// A summary stored at each step of a job's life reads back, as a restart's
// Load reads it, as the summary it was made from.
func TestStoredSummaryLoads(t *testing.T) {
	st := openStore(t)
	raw := spec(t, jobspec.Options{Command: []string{"sh", "-c", "echo <&>"}, Cwd: "/tmp/a b", Name: "naïve"})
	err := st.Update(func(tx *store.Tx) error {
		ids, recs, err := Submit(tx, time.Now(), []SubmitRequest{{Jobspec: raw, UserID: 5, Urgency: 16}}, nil)
		if err != nil {
			return err
		}
		rec := recs[0]
		check := func(step string) {
			t.Helper()
			if err := SaveSummary(tx, rec); err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			back, err := Load(tx, ids[0])
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if diff := cmp.Diff(Summarize(rec), back.Summary); diff != "" {
				t.Errorf("%s: loaded summary (-made +loaded):\n%s", step, diff)
			}
		}
		check("submitted")
		ev := func(name string, ctx map[string]any) {
			t.Helper()
			if err := Append(tx, rec, eventlog.Event{Timestamp: 1764196464.25, Name: name, Context: ctx}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		ev(job.EventDepend, nil)
		ev(job.EventPriority, map[string]any{"priority": 16})
		check("pending")
		if err := SetR(tx, rec, json.RawMessage(`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"3"}}],"nodelist":["node0"],"starttime":0,"expiration":0}}`)); err != nil {
			return err
		}
		ev(job.EventAlloc, map[string]any{"annotations": map[string]any{"sched": map[string]any{"resource_summary": "rank0/core3"}}})
		ev(job.EventStart, nil)
		check("running")
		if err := SetUsage(tx, rec, execproto.Usage{UserCPU: 0.0005, SysCPU: 0.25, MaxRSS: 1 << 20}); err != nil {
			return err
		}
		ev(job.EventFinish, map[string]any{"status": 256})
		ev(job.EventRelease, map[string]any{"ranks": "all", "final": true})
		ev(job.EventFree, nil)
		ev(job.EventClean, nil)
		check("inactive")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// benchRecord is a `true` job as it runs: jobspec, R, an annotation.
func benchRecord(b *testing.B) *Record {
	b.Helper()
	raw, err := (func() ([]byte, error) {
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/root"})
		if err != nil {
			return nil, err
		}
		return js.MarshalJSON()
	})()
	if err != nil {
		b.Fatal(err)
	}
	js, err := jobspec.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	r, err := rset.Parse([]byte(`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"3"}}],"nodelist":["node0"],"starttime":0,"expiration":0}}`))
	if err != nil {
		b.Fatal(err)
	}
	j := &job.Job{ID: 123456789, UserID: 0, State: job.Run, Urgency: 16, Priority: 16, TSubmit: 1764196464.123456, TRun: 1764196464.223456,
		Annotations: map[string]any{"sched": map[string]any{"resource_summary": "rank0/core3"}}}
	return &Record{Job: j, Spec: SpecOf(js), Raw: raw, R: r}
}

func BenchmarkSummary(b *testing.B) {
	rec := benchRecord(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := summary(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// SaveSummaries stores what SaveSummary stores, job by job, whether it
// encodes them on one core (a few) or on every core (many), and stops at
// a job that is not in the store.
func TestSaveSummariesAsSaveSummary(t *testing.T) {
	for _, n := range []int{3, 2*summaryPiece + 17} {
		st := openStore(t)
		raw := spec(t, jobspec.Options{Command: []string{"true"}})
		err := st.Update(func(tx *store.Tx) error {
			reqs := make([]SubmitRequest, n)
			for i := range reqs {
				reqs[i] = SubmitRequest{Jobspec: raw, UserID: uint32(i), Urgency: 16}
			}
			ids, recs, err := Submit(tx, time.Now(), reqs, nil)
			if err != nil {
				return err
			}
			want := make([][]byte, n)
			for i, rec := range recs {
				// Each job made different, so a summary stored under
				// another's id shows.
				if err := Append(tx, rec, eventlog.Event{Timestamp: 1764196464.25 + float64(i), Name: job.EventDepend}); err != nil {
					return err
				}
				if want[i], err = summary(rec); err != nil {
					return err
				}
			}
			if err := SaveSummaries(tx, recs); err != nil {
				return err
			}
			for i, id := range ids {
				got, err := tx.JobValue(uint64(id), store.JobSummary)
				if err != nil {
					return err
				}
				if string(got) != string(want[i]) {
					t.Fatalf("%d jobs: job %d's stored summary %s, want %s", n, i, got, want[i])
				}
			}
			gone := *recs[n-1]
			gone.Job = &job.Job{ID: ids[n-1] + 1}
			if err := SaveSummaries(tx, append(recs, &gone)); err == nil {
				t.Errorf("%d jobs: saving the summary of a job not in the store: no error", n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
