package api

import (
	"encoding/json"
	"slices"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/queue"
)

// The parameters and results of the methods (methods.go), as they travel.

// SubmitJob is one job to submit.
type SubmitJob struct {
	Jobspec json.RawMessage `json:"jobspec"` // V1, JSON
	Urgency int             `json:"urgency"`
}

// SubmitParams are the jobs of one submission (all or none are stored).
type SubmitParams struct {
	Jobs []SubmitJob `json:"jobs"`
}

// IDParams name one job.
type IDParams struct {
	ID fluid.ID `json:"id"`
}

// IDsParams name jobs.
type IDsParams struct {
	IDs []fluid.ID `json:"ids"`
}

// ReapParams name the waitable jobs to take: All of the caller's that
// have ended, or those of IDs that have.
type ReapParams struct {
	IDs []fluid.ID `json:"ids,omitempty"`
	All bool       `json:"all,omitempty"`
}

// CancelParams cancel jobs with a note.
type CancelParams struct {
	IDs  []fluid.ID `json:"ids"`
	Note string     `json:"note"`
}

// CancelResult has one entry per id of a cancel: nil when it worked.
type CancelResult []*Error

// CancelAllParams cancel every active job a query selects (flux cancel
// --all, whose job manager selects them itself: raiseall), chosen and
// cancelled in one turn: no job submitted between a listing and the
// cancel is missed or taken, and 100,000 jobs' summaries are neither
// listed to the caller nor their ids sent back. Query's States are of
// the active states; its IDs, Results and Count are not used.
type CancelAllParams struct {
	Query  JobsQuery `json:"query"`
	Note   string    `json:"note"`
	DryRun bool      `json:"dry_run,omitempty"` // count them, cancel nothing
}

// CancelAllResult is what a CancelAll did: how many jobs it selected, and
// each of them it could not cancel, with its owner and why, in id order.
type CancelAllResult struct {
	Matched int             `json:"matched"`
	Failed  []CancelFailure `json:"failed,omitempty"`
}

// CancelFailure is a job a CancelAll selected and could not cancel.
type CancelFailure struct {
	ID     fluid.ID `json:"id"`
	UserID uint32   `json:"userid"`
	Error  *Error   `json:"error"`
}

// PurgeParams select inactive jobs to purge (flux job purge). Without IDs,
// the oldest inactive jobs (by the time each became inactive) beyond
// AgeLimit or NumLimit, at most Batch of them in one request; with IDs,
// those jobs. A guest's request selects among its own jobs only. Without
// Force nothing is removed: the result counts what would be.
type PurgeParams struct {
	AgeLimit float64    `json:"age_limit"` // seconds; < 0: no age limit
	NumLimit int        `json:"num_limit"` // inactive jobs to keep; < 0: no count limit
	Batch    int        `json:"batch"`     // 1..PurgeBatchMax; 0: PurgeBatchDefault
	Force    bool       `json:"force"`
	IDs      []fluid.ID `json:"ids,omitempty"`
}

// UnmarshalJSON reads a limit a request leaves out as no limit: a purge
// request that names neither purges nothing, rather than everything (a
// zero age).
func (p *PurgeParams) UnmarshalJSON(b []byte) error {
	type plain PurgeParams
	q := plain{AgeLimit: -1, NumLimit: -1}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*p = PurgeParams(q)
	return nil
}

// Bounds of a purge request's batch, as flux job purge's: one request
// removes at most PurgeBatchMax jobs, so a large purge is many short
// turns of the loop, never one long one.
const (
	PurgeBatchDefault = 50
	PurgeBatchMax     = 100
)

// PurgeResult is what one purge request did (or, without Force, would
// do): Count jobs; Inactive is how many inactive jobs the caller may
// purge remain after it; Errors has, for a request by IDs, one entry per
// id, nil where that job was (or would be) purged.
type PurgeResult struct {
	Count    int      `json:"count"`
	Inactive int      `json:"inactive"`
	Errors   []*Error `json:"errors,omitempty"`
}

// UrgencyParams set a pending job's urgency.
type UrgencyParams struct {
	ID      fluid.ID `json:"id"`
	Urgency int      `json:"urgency"`
}

// UpdateParams ask for a change of an active job's jobspec (fluxq
// update). Each key is as the user wrote it (a jobspec path, or an alias:
// duration, queue, name, urgency), each value JSON; the instance decides
// what they mean, so every client is held to the same rules.
type UpdateParams struct {
	ID      fluid.ID    `json:"id"`
	Updates []JobUpdate `json:"updates"`
	DryRun  bool        `json:"dry_run,omitempty"`
}

// JobUpdate is one KEY=VALUE of an update.
type JobUpdate struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// UpdateResult is what an update made: the jobspec as stored after it
// (or, for a dry run, as it would be), and the jobspec-update event's
// context (the full jobspec paths and their new values).
type UpdateResult struct {
	Jobspec json.RawMessage `json:"jobspec"`
	Updated map[string]any  `json:"updated,omitempty"`
}

// EventsParams ask for a job's eventlog, and with Follow for the events
// still to come until the job is inactive.
type EventsParams struct {
	ID     fluid.ID `json:"id"`
	Follow bool     `json:"follow"`
}

func (p EventsParams) Following() bool { return p.Follow }

// DrainParams take ranks out of scheduling (or return them: Undrain reads
// Ranks only).
type DrainParams struct {
	Ranks  string `json:"ranks"`
	Reason string `json:"reason"`
	Force  bool   `json:"force"`
}

// JobsQuery selects jobs to list.
type JobsQuery struct {
	States   job.State    `json:"states"`            // 0: pending and running
	Results  []job.Result `json:"results,omitempty"` // inactive jobs with these results only
	AllUsers bool         `json:"all_users"`
	UserID   *uint32      `json:"userid,omitempty"` // -u USER; nil: the caller
	Queues   []string     `json:"queues,omitempty"`
	IDs      []fluid.ID   `json:"ids,omitempty"`
	Name     string       `json:"name,omitempty"`  // jobs of this name only; "": any
	Count    int          `json:"count,omitempty"` // at most this many, after every filter above; 0: no limit
}

// JobSummary is a job as listings show it: the fields of `fluxq jobs
// --json` (docs) that the store can know. Kept beside the eventlog and
// refreshed with every event, so listing 100,000 jobs reads one small
// record each instead of replaying 100,000 eventlogs.
type JobSummary struct {
	ID           fluid.ID       `json:"id"`
	UserID       uint32         `json:"userid"`
	Queue        string         `json:"queue"`
	Name         string         `json:"name"`
	State        job.State      `json:"state"`
	Result       job.Result     `json:"result,omitempty"`
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
	// AgainOf is the job this one was made again from (fluxq resubmit,
	// or the run a retry follows); Retry which retry of its chain it is
	// (from 1), Retries how many its jobspec allows (--retry N), and
	// RetriedAs the retry that followed it once it failed.
	AgainOf   *fluid.ID `json:"again_of,omitempty"`
	Retry     int       `json:"retry,omitempty"`
	Retries   int       `json:"retries,omitempty"`
	RetriedAs *fluid.ID `json:"retried_as,omitempty"`
	// Usage is what the job's processes consumed, once it finished.
	Usage *execproto.Usage `json:"usage,omitempty"`
	// Command and Cwd are the first task's command line and the working
	// directory, so `fluxq jobs -o long` shows what each job runs.
	// Summaries stored before they were added have neither.
	Command []string `json:"command,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	// Waits is what a job in SCHED waits for beyond the scheduler's
	// reason (a stopped queue, drained nodes), worked out by a listing
	// from the store as it reads the job; never stored.
	Waits string `json:"waits,omitempty"`
	// Shape is what of its jobspec decides where the job may run,
	// written out (state.Spec.Shape), stored so that a listing judges the
	// jobs of one shape once; a listing does not send it, and nothing
	// prints it. Summaries stored before it have none.
	Shape string `json:"shape,omitempty"`
}

// Exception is the summary of a job's exception.
type Exception struct {
	Occurred bool    `json:"occurred"`
	Type     string  `json:"type"`
	Severity int     `json:"severity"`
	Note     string  `json:"note"`
	Time     float64 `json:"timestamp"`
}

// JobInfo is one job with everything stored about it.
type JobInfo struct {
	Summary  JobSummary       `json:"summary"`
	Jobspec  json.RawMessage  `json:"jobspec"`
	R        json.RawMessage  `json:"R,omitempty"`
	Eventlog []eventlog.Event `json:"eventlog"`
	JobDir   string           `json:"jobdir,omitempty"` // where its output is kept
	// OutputRemote: its output is kept by the exec agents of the hosts it
	// ran on, other machines than the instance's (a launcher for other
	// machines), and read with job-output; JobDir is then empty.
	OutputRemote bool `json:"output_remote,omitempty"`
	// Resubmitted are the jobs fluxq resubmit made from this one, in
	// order (the store's record beside the job: an inactive job's
	// eventlog takes no more events).
	Resubmitted []fluid.ID `json:"resubmitted,omitempty"`
}

// JobCounts are job counts (fluxq stats).
type JobCounts struct {
	States  map[string]int `json:"states"`  // RFC 21 state name -> count
	Results map[string]int `json:"results"` // result name -> count of inactive jobs
	Total   int            `json:"total"`
}

// ResourceInfo is the inventory and what holds or blocks each part of it.
type ResourceInfo struct {
	Inventory json.RawMessage `json:"inventory"` // R v1 of the whole instance
	Allocated json.RawMessage `json:"allocated"` // R v1 held by jobs (union)
	Drained   []DrainedRank   `json:"drained"`   // in rank order
	// Draining are drained ranks that still run jobs (Flux's "draining").
	Draining string `json:"draining"` // idset
}

// DrainedRank is one drained rank.
type DrainedRank struct {
	Rank      uint    `json:"rank"`
	Timestamp float64 `json:"timestamp"`
	Reason    string  `json:"reason"`
}

// QueueCounts are one queue's jobs (flux queue status -v). The same
// fields as the job manager's count, which the server converts.
type QueueCounts struct {
	Queued  int `json:"queued"`  // in SCHED, no alloc request outstanding
	Pending int `json:"pending"` // alloc requests pending to the scheduler
	Running int `json:"running"` // in RUN or CLEANUP
	Active  int `json:"active"`  // not yet INACTIVE
	Waiting int `json:"waiting"` // pending states: DEPEND, PRIORITY, SCHED
}

// QueueInfo is the instance's queues: configuration, state and jobs.
type QueueInfo struct {
	Set    *queue.Set             `json:"config"`
	States map[string]queue.State `json:"states"`
	// Counts has an entry for every queue ("" is the anonymous one).
	Counts map[string]QueueCounts `json:"counts"`
	// Changed names the queues a change applied to.
	Changed []string `json:"changed,omitempty"`
}

// NewQueueInfo is the queues with every count zero.
func NewQueueInfo(set *queue.Set, states map[string]queue.State) *QueueInfo {
	counts := make(map[string]QueueCounts, len(set.Names()))
	for _, n := range set.Names() {
		counts[n] = QueueCounts{}
	}
	return &QueueInfo{Set: set, States: states, Counts: counts}
}

// Total adds the counts of the named queues (all when names is nil).
func (qi *QueueInfo) Total(names []string) QueueCounts {
	var t QueueCounts
	for n, c := range qi.Counts {
		if names != nil && !slices.Contains(names, n) {
			continue
		}
		t.Queued += c.Queued
		t.Pending += c.Pending
		t.Running += c.Running
		t.Active += c.Active
		t.Waiting += c.Waiting
	}
	return t
}

// QueueChange is one administrative command on queues (flux queue
// enable/disable/start/stop).
type QueueChange struct {
	Queue        string `json:"queue,omitempty"` // "" with All, or the anonymous queue
	All          bool   `json:"all,omitempty"`
	Enable       *bool  `json:"enable,omitempty"` // set for enable/disable
	Start        *bool  `json:"start,omitempty"`  // set for start/stop
	Reason       string `json:"reason,omitempty"`
	NoCheckpoint bool   `json:"nocheckpoint,omitempty"`
}

// QueueWait is flux queue drain (until no job is active) or idle (until
// none runs and no alloc is pending), for one queue or, with Queue empty,
// the whole instance.
type QueueWait struct {
	Queue string `json:"queue,omitempty"`
	Idle  bool   `json:"idle,omitempty"`
}

// Names resolves the queues waited on; nil means every job of the
// instance.
func (w QueueWait) Names(set *queue.Set) ([]string, error) {
	if w.Queue == "" {
		return nil, nil
	}
	return set.Lookup(w.Queue, false)
}

// Done reports whether counts satisfy the wait.
func (w QueueWait) Done(c QueueCounts) bool {
	if w.Idle {
		return c.Running == 0 && c.Pending == 0
	}
	return c.Active == 0
}

// OutputParams ask for what a job's tasks wrote on its hosts, from where
// an earlier answer left off (job-output).
type OutputParams struct {
	ID fluid.ID `json:"id"`
	// From are how far each host's streams were read; a host's stream
	// not named is read from its start.
	From []OutputCursor `json:"from,omitempty"`
}

// OutputCursor is how far one host's stdout or stderr was read.
type OutputCursor struct {
	Host   string `json:"host"`
	Stream string `json:"stream"` // "stdout" or "stderr"
	Offset int64  `json:"offset"`
}

// Outputs answers job-output: a part of each of the job's hosts' streams.
type Outputs struct {
	// Hosts are the job's hosts, in the order of R's ranks; none before
	// it has resources.
	Hosts  []string      `json:"hosts"`
	Chunks []OutputChunk `json:"chunks"`
}

// OutputChunk is what one host's stream holds from Offset on, at most a
// bound per answer (More: there is more past Data).
type OutputChunk struct {
	Host   string `json:"host"`
	Stream string `json:"stream"`
	Offset int64  `json:"offset"`
	Data   []byte `json:"data,omitempty"`
	More   bool   `json:"more,omitempty"`
	// Error says why the host's stream could not be read (its host is
	// unreachable, say), naming the host; Data is then empty.
	Error string `json:"error,omitempty"`
}
