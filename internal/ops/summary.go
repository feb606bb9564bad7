package ops

import (
	"encoding/json"
	"fmt"
	"path"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// Summary is a job as listings show it: the fields of `fluxq jobs --json`
// (CLI.md) that the store can know. Kept beside the eventlog and refreshed
// with every event, so listing 100,000 jobs reads one small record each
// instead of replaying 100,000 eventlogs.
type Summary struct {
	ID           fluid.ID       `json:"id"`
	UserID       uint32         `json:"userid"`
	Queue        string         `json:"queue"`
	Name         string         `json:"name"`
	State        string         `json:"state"`
	Result       string         `json:"result,omitempty"`
	Urgency      int            `json:"urgency"`
	Priority     int64          `json:"priority"`
	NTasks       int            `json:"ntasks"`
	NNodes       int            `json:"nnodes"`
	NCores       int            `json:"ncores"`
	NGPUs        int            `json:"ngpus"`
	Duration     float64        `json:"duration"`
	TSubmit      float64        `json:"t_submit"`
	TDepend      float64        `json:"t_depend,omitempty"`
	TRun         float64        `json:"t_run,omitempty"`
	TCleanup     float64        `json:"t_cleanup,omitempty"`
	TInactive    float64        `json:"t_inactive,omitempty"`
	Nodelist     string         `json:"nodelist,omitempty"`
	Annotations  map[string]any `json:"annotations,omitempty"`
	Exception    *Exception     `json:"exception,omitempty"`
	ReturnCode   *int           `json:"returncode,omitempty"`
	WaitStatus   *int           `json:"waitstatus,omitempty"`
	Dependencies []string       `json:"dependencies,omitempty"`
	// Targets are the sessions the job may map onto (absent: the default
	// session); Parent the job it was submitted from inside.
	Targets []string  `json:"targets,omitempty"`
	Parent  *fluid.ID `json:"parent,omitempty"`
	// Usage is what the job's processes consumed, once it finished.
	Usage *execproto.Usage `json:"usage,omitempty"`
	// Command and Cwd are the first task's command line and the working
	// directory, so `fluxq jobs -o long` shows what each job runs.
	// Summaries stored before they were added have neither.
	Command []string `json:"command,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
}

// Exception is the summary of a job's exception (CLI.md's shape).
type Exception struct {
	Occurred bool    `json:"occurred"`
	Type     string  `json:"type"`
	Severity int     `json:"severity"`
	Note     string  `json:"note"`
	Time     float64 `json:"timestamp"`
}

// Summarize derives the summary of a record.
func Summarize(rec *Record) *Summary {
	j := rec.Job
	s := &Summary{
		ID:           j.ID,
		UserID:       j.UserID,
		Name:         JobName(rec),
		State:        j.State.String(),
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
	if rec.Jobspec != nil {
		c := rec.Jobspec.Counts()
		s.Queue = rec.Jobspec.Attributes.System.Queue
		s.Targets, _ = rec.Jobspec.Targets()
		s.NTasks, s.NNodes, s.NCores, s.NGPUs, s.Duration = c.NTasks, c.NNodes, c.NCores, c.NGPUs, c.Duration
		if len(rec.Jobspec.Tasks) > 0 {
			s.Command = rec.Jobspec.Tasks[0].Command
		}
		s.Cwd = rec.Jobspec.Attributes.System.Cwd
	}
	if rec.R != nil {
		// Once allocated, what the job holds is what counts.
		nnodes, ncores, ngpus := rec.R.Counts()
		s.NNodes, s.NCores, s.NGPUs = nnodes, ncores, ngpus
		s.Nodelist = rec.R.Nodelist().String()
	}
	if j.Parent != 0 {
		p := j.Parent
		s.Parent = &p
	}
	if j.State == job.Inactive {
		s.Result = j.Result.String()
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
	if rc, ok := j.ReturnCode(); ok {
		ws := j.WaitStatus
		s.ReturnCode, s.WaitStatus = &rc, &ws
	}
	return s
}

// JobName is the job's name as Flux shows it: attributes.system.job.name,
// else the base name of the command.
func JobName(rec *Record) string {
	if rec.Jobspec == nil {
		return ""
	}
	if n := rec.Jobspec.Attributes.System.Job.Name; n != "" {
		return n
	}
	if len(rec.Jobspec.Tasks) > 0 && len(rec.Jobspec.Tasks[0].Command) > 0 {
		return path.Base(rec.Jobspec.Tasks[0].Command[0])
	}
	return ""
}

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
