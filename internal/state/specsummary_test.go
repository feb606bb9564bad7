package state

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/store"
)

// TestSpecOfSummary: the Spec a take-up builds from a never-allocated
// job's stored summary is the Spec its jobspec parses to, for jobspecs
// that between them set every field of Spec, so that a field added to
// Spec and not carried by the summary fails here rather than reaching a
// restarted instance as a zero; and a summary that cannot stand for the
// jobspec (none, older than the shape, another job's) is not used.
func TestSpecOfSummary(t *testing.T) {
	const id = fluid.ID(4242)
	cases := []jobspec.Options{
		{Command: []string{"true"}},
		{Command: []string{"/bin/sh", "-c", "echo hi"}, Cwd: "/tmp/a b", Name: "naïve", Queue: "batch", Duration: 90},
		{Command: []string{"hostname"}, NTasks: 4, CoresPerTask: 2, GPUsPerTask: 1, Nodes: 2, Exclusive: true},
		{Command: []string{"sleep", "1"}, MemPerSlot: 1 << 30, Constraints: map[string]any{"properties": []string{"ssd"}}},
		{Command: []string{"./a.out"}, Extra: map[string]any{jobspec.RetryKey: 3, jobspec.TargetsKey: []string{"r1", jobspec.DefaultSession}}},
	}
	set := make([]bool, reflect.TypeFor[Spec]().NumField())
	for i, o := range cases {
		built, err := jobspec.FromOptions(o)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		raw, err := built.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		js, err := jobspec.Parse(raw)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want := SpecOf(js)
		v := reflect.ValueOf(want)
		for f := range set {
			set[f] = set[f] || !v.Field(f).IsZero()
		}
		rec := &Record{Job: &job.Job{ID: id, State: job.Sched, TSubmit: 1}, Spec: want, Raw: raw}
		b, err := summary(rec)
		if err != nil {
			t.Fatal(err)
		}
		var s Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		got, ok := specOfSummary(id, &s)
		if !ok {
			t.Errorf("case %d: the summary %s not taken", i, b)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("case %d (-SpecOf +specOfSummary):\n%s", i, diff)
		}
		if _, ok := specOfSummary(id+1, &s); ok {
			t.Errorf("case %d: another job's summary taken", i)
		}
		s.Shape = ""
		if _, ok := specOfSummary(id, &s); ok {
			t.Errorf("case %d: a summary without a shape taken", i)
		}
	}
	for f, ok := range set {
		if !ok {
			t.Errorf("Spec.%s is zero in every case: add a case that sets it", reflect.TypeFor[Spec]().Field(f).Name)
		}
	}
	if _, ok := specOfSummary(id, nil); ok {
		t.Error("no summary taken")
	}
}

// TestTakeUpTornJobspec: a take-up that takes a pending job's Spec from
// its summary still refuses a stored jobspec that is not JSON, as a
// full decode does.
func TestTakeUpTornJobspec(t *testing.T) {
	st := openStore(t)
	var ids []fluid.ID
	err := st.Update(func(tx *store.Tx) error {
		var err error
		ids, _, err = Submit(tx, time.Now(), []SubmitRequest{{Jobspec: spec(t, jobspec.Options{Command: []string{"true"}})}}, nil)
		if err != nil {
			return err
		}
		return tx.PutJobValue(uint64(ids[0]), store.JobJobspec, []byte(`{"version": 1, "resources": [`))
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.View(func(tx *store.Tx) error {
		err := LoadAll(tx, ids, func(*Record) error { return nil })
		if !errors.Is(err, errNotJSON) {
			t.Errorf("LoadAll of a torn jobspec: %v, want %v", err, errNotJSON)
		}
		if _, err := Load(tx, ids[0]); err == nil {
			t.Error("Load of a torn jobspec: no error")
		}
		return nil
	})
}
