package jobmgr_test

import (
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// A begin time past year 2262, within the bound, is a wake in its own
// year: time.Unix(0, t*1e9) made it one in 1677, due at once, and the loop
// woke for it without pause.
func TestNextWakeFarAhead(t *testing.T) {
	h := newHarness(t)
	h.start()
	at := time.Date(8999, 12, 31, 0, 0, 0, 0, time.UTC)
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, BeginTime: float64(at.Unix())})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := js.MarshalJSON()
	wake := h.do(func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		_, recs, err := ops.Submit(tx, time.Now(), []ops.SubmitRequest{{Jobspec: b, UserID: 100, Owner: true, Urgency: 16}}, nil)
		if err != nil {
			return nil, err
		}
		if err := jm.Submitted(tx, recs); err != nil {
			return nil, err
		}
		return jm.NextWake(), nil
	}).(time.Time)
	if !wake.Equal(at) {
		t.Errorf("NextWake = %v, want %v", wake, at)
	}
}
