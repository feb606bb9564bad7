package state

import (
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// Summary is a job as listings show it (api.JobSummary), kept beside
// the eventlog and refreshed with every event.
type Summary = api.JobSummary

// Exception is the summary of a job's exception.
type Exception = api.Exception

// Summarize derives the summary of a record.
func Summarize(rec *Record) *Summary {
	j := rec.Job
	s := &Summary{
		ID:           j.ID,
		UserID:       j.UserID,
		Name:         JobName(rec),
		State:        j.State,
		Urgency:      j.Urgency,
		Priority:     j.Priority,
		TSubmit:      j.TSubmit,
		TDepend:      j.TDepend,
		TRun:         j.TRun,
		TCleanup:     j.TCleanup,
		TInactive:    j.TInactive,
		Dependencies: j.Dependencies,
		Usage:        rec.Usage,
	}
	sp := &rec.Spec
	s.Queue, s.Targets, s.Command, s.Cwd = sp.Queue, sp.Targets, sp.Command, sp.Cwd
	s.NTasks, s.NNodes, s.NCores, s.NGPUs, s.Duration = sp.NTasks, sp.NNodes, sp.NCores, sp.NGPUs, sp.Duration
	s.Shape = sp.Shape
	if rec.R != nil {
		// Once allocated, what the job holds is what counts.
		h := &rec.held
		if h.r != rec.R {
			h.nnodes, h.ncores, h.ngpus = rec.R.Counts()
			h.nodelist = rec.R.Nodelist().String()
			h.r = rec.R
		}
		s.NNodes, s.NCores, s.NGPUs = h.nnodes, h.ncores, h.ngpus
		s.Nodelist = h.nodelist
	}
	if j.Parent != 0 {
		p := j.Parent
		s.Parent = &p
	}
	if j.AgainOf != 0 {
		a := j.AgainOf
		s.AgainOf = &a
	}
	s.Retry, s.Retries = j.Retry, sp.Retries
	if r := j.RetriedAs(); r != 0 {
		s.RetriedAs = &r
	}
	if j.State == job.Inactive {
		s.Result = j.Result
	}
	switch {
	case j.State&(job.Pending|job.New) != 0 && len(rec.Annotations) > 0:
		s.Annotations = rec.Annotations
	case len(j.Annotations) > 0:
		s.Annotations = j.Annotations
	}
	if ex := j.Exception; ex != nil {
		s.Exception = &Exception{Occurred: true, Type: ex.Type, Severity: ex.Severity, Note: ex.Note, Time: ex.Occurred}
	}
	if j.Finished {
		ws := j.WaitStatus
		s.WaitStatus = &ws
	}
	if rc, ok := j.ReturnCode(); ok {
		s.ReturnCode = &rc
	}
	return s
}

// JobName is the job's name as Flux shows it: attributes.system.job.name,
// else the base name of the command (SpecOf).
func JobName(rec *Record) string { return rec.Spec.Name }

// Owner is the uid of a job's submitter, read from its summary alone: who
// may read a job is asked before every stream, and the whole record is
// not needed for it.
func Owner(tx *store.Tx, id fluid.ID) (uint32, error) {
	raw, err := tx.JobValue(uint64(id), store.JobSummary)
	if err != nil {
		return 0, ErrUnknownJob
	}
	var sum struct {
		UserID uint32 `json:"userid"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		return 0, fmt.Errorf("job %s: stored summary: %w", id, err)
	}
	return sum.UserID, nil
}
