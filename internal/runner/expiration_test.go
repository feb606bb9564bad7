package runner

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// TestExpirationEncodes: whatever time limit a stored jobspec or R names,
// the record the agent journals before the fork encodes (issue 24: -t
// 1e9d made an R whose expiration lay past year 9999, and the agent
// panicked on it); a limit beyond any clock is none, and 1e308s no longer
// wraps around into a limit already past.
func TestExpirationEncodes(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := rset.New([]rset.Node{{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0")}})
	start := float64(now.Unix())
	for _, tc := range []struct {
		name       string
		duration   float64
		start, exp float64 // R's times
		want       time.Time
	}{
		{"none", 0, 0, 0, time.Time{}},
		{"an hour from the launch", 3600, 0, 0, now.Add(time.Hour)},
		{"an hour from R's start", 3600, start - 60, 0, now.Add(59 * time.Minute)},
		{"R's expiration", 3600, start, start + 60, now.Add(time.Minute)},
		{"100 years", fsd.MaxDuration, 0, 0, now.Add(fsd.Duration(fsd.MaxDuration))},
		{"1e9d in R", 8.64e13, start, start + 8.64e13, time.Time{}},
		{"1e308s in R", 1e308, start, 1e308, time.Time{}},
		{"1e9d in the jobspec alone", 8.64e13, 0, 0, time.Time{}},
		{"a start past the bound", 3600, 1e300, 0, now.Add(time.Hour)},
		{"290 years from a late start", 290 * 365 * 86400, fsd.LatestTime, 0, time.Time{}},
	} {
		js := &jobspec.Jobspec{}
		js.Attributes.System.Duration = tc.duration
		got := expiration(js, r.WithTimes(tc.start, tc.exp), now)
		if !got.Equal(tc.want) {
			t.Errorf("%s: expiration %v, want %v", tc.name, got, tc.want)
		}
		if _, err := json.Marshal(Record{Expiration: got}); err != nil {
			t.Errorf("%s: the record does not encode: %v", tc.name, err)
		}
	}
}

// TestDiscard: a job prepared and never launched (its record could not be
// journaled) leaves nothing: not held, its cgroup gone, and the same id
// prepares again; a launched job is not Discard's to touch.
func TestDiscard(t *testing.T) {
	for _, containment := range []string{"auto", ContainSubreaper} {
		t.Run(containment, func(t *testing.T) {
			h := newHarness(t, containment)
			s := spec(t, 7, jobspec.Options{Command: []string{"true"}}, 1, "0")
			rec, err := h.r.Prepare(s)
			if err != nil {
				t.Fatal(err)
			}
			h.r.Discard(7)
			if got := h.r.Running(); len(got) != 0 {
				t.Fatalf("running %v after Discard", got)
			}
			for _, d := range rec.Cgroup {
				if _, err := os.Stat(d); err == nil && h.r.cg != nil && !h.r.cg.pool {
					t.Errorf("cgroup %s left behind", d)
				}
			}
			h.launch(s)
			h.r.Discard(7) // launched: not undone
			evs := h.wait(7)
			if got := summarize(evs); len(got) != 1 || got[0].Status != 0 || !got[0].Known {
				t.Errorf("the job prepared again ended %+v", got)
			}
		})
	}
}

// TestDiscardRacesEnd: a Discard that comes as a launched job ends (the
// exec service discards after a failed journal write while an earlier
// start of the same id may be ending) neither blocks nor undoes the job:
// finish locks the runner with the job locked, and Discard must not lock
// them the other way round (it did, and TestDiscard hung in CI).
func TestDiscardRacesEnd(t *testing.T) {
	h := newHarness(t, ContainSubreaper)
	const n = 100
	specs := make([]Spec, n)
	for i := range specs {
		specs[i] = spec(t, fluid.ID(1001+i), jobspec.Options{Command: []string{"true"}}, 1, "0")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= n; i++ {
			s := specs[i-1]
			rec, err := h.r.Prepare(s)
			if err == nil {
				err = h.r.Launch(rec, s)
			}
			if err != nil {
				t.Errorf("job %s: %v", s.ID, err)
				return
			}
			// Until it has ended: one of the tries meets its finish.
			for h.r.job(s.ID) != nil {
				h.r.Discard(s.ID)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(failAfter):
		// Not Fatal: the cleanup's Close would block on the same lock.
		// A panic ends the test binary with every goroutine's stack.
		panic("Discard blocked as a job ended (a lock order inverted)")
	}
	for i := 1; i <= n; i++ {
		evs := h.wait(fluid.ID(1000 + i))
		if got := summarize(evs); len(got) != 1 || got[0].Status != 0 || !got[0].Known {
			t.Fatalf("job %d ended %+v", 1000+i, got)
		}
	}
}
