package state

import (
	"testing"

	gojson "github.com/goccy/go-json"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// TestExplainDrainedByShape: in one listing, jobs of different shapes
// interleaved (--cc copies of each, their environments differing) each
// get their own shape's answer, judged once per shape; a job whose
// summary has no shape (stored before summaries had one) is judged from
// its jobspec; the answer carries no shape.
func TestExplainDrainedByShape(t *testing.T) {
	st := openStore(t)
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1")},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-3")},
	})
	raw, _ := inv.MarshalJSON()
	now := time.Unix(100, 0)
	if err := st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		_, err := Drain(tx, "n1", "fan", false, now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const onN1 = "waiting for drained nodes: n1 (fan)"
	shapes := []struct {
		opts jobspec.Options
		want string
	}{
		{jobspec.Options{Constraints: map[string]any{"hostlist": []string{"n1"}}}, onN1}, // only n1
		{jobspec.Options{}, ""},                        // fits n0
		{jobspec.Options{CoresPerTask: 4}, onN1},       // only n1 is big enough
		{jobspec.Options{CoresPerTask: 2}, ""},         // n0 is
		{jobspec.Options{Nodes: 2}, onN1},              // needs both
		{jobspec.Options{NTasks: 2, Duration: 60}, ""}, // two cores of n0
	}
	var ids []fluid.ID
	want := map[fluid.ID]string{}
	err := st.Update(func(tx *store.Tx) error {
		for copyN := range 3 {
			for i, sh := range shapes {
				o := sh.opts
				o.Command = []string{"true"}
				o.Environment = map[string]string{"FLUXQ_JOB_CC": string(rune('1' + copyN))}
				js := spec(t, o)
				got, recs, err := Submit(tx, now, []SubmitRequest{{Jobspec: js, UserID: 5, Urgency: 16}}, nil)
				if err != nil {
					t.Fatalf("shape %d: %v", i, err)
				}
				rec := recs[0]
				for _, ev := range []eventlog.Event{{Timestamp: 101, Name: job.EventDepend}, {Timestamp: 102, Name: job.EventPriority, Context: map[string]any{"priority": 16}}} {
					if err := Append(tx, rec, ev); err != nil {
						return err
					}
				}
				if err := SaveSummary(tx, rec); err != nil {
					return err
				}
				if copyN == 2 && i == 0 {
					// A summary of before shapes: no shape stored.
					sum := Summarize(rec)
					sum.Shape = ""
					b, err := gojson.Marshal(sum)
					if err != nil {
						return err
					}
					if err := tx.PutJobValue(uint64(got[0]), store.JobSummary, b); err != nil {
						return err
					}
				}
				ids = append(ids, got[0])
				want[got[0]] = sh.want
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.View(func(tx *store.Tx) error {
		list, err := ListJobs(tx, 5, api.JobsQuery{States: job.Pending})
		if err != nil {
			return err
		}
		if len(list) != len(ids) {
			t.Fatalf("listed %d jobs, want %d", len(list), len(ids))
		}
		shaped := 0
		for _, s := range list {
			if s.Shape != "" {
				shaped++
			}
		}
		if shaped != len(ids)-1 {
			t.Errorf("%d of %d summaries have a shape, want all but one", shaped, len(ids))
		}
		ExplainPending(tx, list)
		for _, s := range list {
			if s.State != job.Sched {
				t.Fatalf("job %s is %s, want SCHED", s.ID, s.State)
			}
			if s.Waits != want[s.ID] {
				t.Errorf("job %s waits %q, want %q", s.ID, s.Waits, want[s.ID])
			}
			if s.Shape != "" {
				t.Errorf("job %s: the answer carries its shape %q", s.ID, s.Shape)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestShapeOf: a shape is the same for the same request whatever else
// differs (environment, command, name), and differs with any input of
// the request.
func TestShapeOf(t *testing.T) {
	shape := func(o jobspec.Options) string {
		t.Helper()
		if o.Command == nil {
			o.Command = []string{"true"}
		}
		js, err := jobspec.FromOptions(o)
		if err != nil {
			t.Fatal(err)
		}
		return SpecOf(js).Shape
	}
	base := shape(jobspec.Options{})
	if base == "" {
		t.Fatal("no shape")
	}
	if got := shape(jobspec.Options{Command: []string{"sleep", "1"}, Name: "x", Cwd: "/tmp", Environment: map[string]string{"A": "b"}}); got != base {
		t.Errorf("the command, name, cwd and environment changed the shape")
	}
	for name, o := range map[string]jobspec.Options{
		"tasks":       {NTasks: 2},
		"cores":       {CoresPerTask: 2},
		"gpus":        {GPUsPerTask: 1},
		"nodes":       {Nodes: 1, NTasks: 2},
		"exclusive":   {Nodes: 1, NTasks: 2, Exclusive: true},
		"duration":    {Duration: 60},
		"constraints": {Constraints: map[string]any{"hostlist": []string{"n1"}}},
		"targets":     {Extra: map[string]any{"targets": []string{"r1"}}},
	} {
		if shape(o) == base {
			t.Errorf("%s: same shape as the default request", name)
		}
	}
}
