package ops

import (
	"fmt"
	"time"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/store"
)

// SubmitRequest is one job to submit.
type SubmitRequest struct {
	Jobspec []byte // V1 jobspec, JSON or YAML
	UserID  uint32 // the submitter, from the caller's credentials
	Urgency int
	Flags   int
}

// Submit validates and stores new jobs, each with its submit and validate
// events (RFC 21), and returns their ids in order. It is all or nothing:
// one invalid request rejects the batch and nothing is stored, because the
// caller's transaction is rolled back on error.
func Submit(tx *store.Tx, now time.Time, reqs []SubmitRequest) ([]fluid.ID, []*Record, error) {
	gen, err := fluid.NewGenerator(tx.Epoch(), 0, fluid.ID(tx.LastJobID()))
	if err != nil {
		return nil, nil, fmt.Errorf("job id generator: %w", err)
	}
	// Check every request before writing anything, so a refused batch
	// leaves nothing behind even inside a larger transaction.
	specs := make([]*jobspec.Jobspec, len(reqs))
	canons := make([][]byte, len(reqs))
	for i, req := range reqs {
		if req.Urgency < job.UrgencyMin || req.Urgency > job.UrgencyMax {
			return nil, nil, fmt.Errorf("urgency value is out of range")
		}
		js, err := jobspec.Parse(req.Jobspec)
		if err != nil {
			return nil, nil, err
		}
		specs[i] = js
		if canons[i], err = js.MarshalJSON(); err != nil {
			return nil, nil, err
		}
	}
	ids := make([]fluid.ID, 0, len(reqs))
	recs := make([]*Record, 0, len(reqs))
	ts := Timestamp(now)
	for i, req := range reqs {
		id, err := gen.Next(now)
		if id == 0 && err == nil {
			// A FLUID of 0 (the first millisecond of a new store) is
			// valid, but reads as "no job" everywhere: skip it.
			id, err = gen.Next(now)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("job id generator: %w", err)
		}
		if err := tx.CreateJob(uint64(id), map[string][]byte{store.JobJobspec: canons[i]}); err != nil {
			return nil, nil, err
		}
		rec := &Record{Job: &job.Job{ID: id}, Jobspec: specs[i], Raw: canons[i]}
		submit := eventlog.Event{Timestamp: ts, Name: "submit", Context: map[string]any{
			"urgency": req.Urgency, "userid": req.UserID, "flags": req.Flags, "version": EventlogVersion,
		}}
		for _, ev := range []eventlog.Event{submit, {Timestamp: ts, Name: "validate"}} {
			if err := Post(tx, rec, ev); err != nil {
				return nil, nil, err
			}
		}
		ids = append(ids, id)
		recs = append(recs, rec)
	}
	if len(ids) > 0 {
		if err := tx.SetLastJobID(uint64(ids[len(ids)-1])); err != nil {
			return nil, nil, err
		}
	}
	return ids, recs, nil
}
