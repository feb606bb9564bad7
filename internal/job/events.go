package job

import "github.com/fluxq/fluxq/internal/fluid"

// The names of the events of a job's eventlog (RFC 21), in the order a
// job that runs posts them; the one place code names them. Events with
// other names are kept and replayed but move nothing (Apply).
const (
	EventSubmit           = "submit"
	EventValidate         = "validate"
	EventInvalidate       = "invalidate"
	EventDependencyAdd    = "dependency-add"
	EventDependencyRemove = "dependency-remove"
	EventDepend           = "depend"
	EventPriority         = "priority"
	EventUrgency          = "urgency"
	EventAlloc            = "alloc"
	EventStart            = "start"
	EventFinish           = "finish"
	EventRelease          = "release"
	EventFree             = "free"
	EventException        = "exception"
	EventClean            = "clean"
	EventMemo             = "memo"
	// EventJobspecUpdate records an update of the jobspec (RFC 21): its
	// context is the updated keys, as period-delimited jobspec paths, and
	// their new values. The stored jobspec is the updated one.
	EventJobspecUpdate = "jobspec-update"
	// EventResourceUpdate records a change of a running job's R (RFC
	// 21): its context is the new expiration, in seconds since the epoch.
	EventResourceUpdate = "resource-update"
)

// fluxq's keys in RFC 21 contexts for a job made again from another,
// which RFC 21 leaves open ("other keys MAY be present").
const (
	// CtxAgainOf, in the submit context: the job it was made from
	// (fluxq resubmit, or the run a retry follows), as an F58 id.
	CtxAgainOf = "again_of"
	// CtxRetry, in the submit context: which retry of its chain the job
	// is, from 1.
	CtxRetry = "retry"
	// MemoRetriedAs, in a memo posted just before a failed job's clean:
	// the retry that follows it, in the same store transaction.
	MemoRetriedAs = "retried_as"
	// MemoRetryRefused, in that memo's place when the retry could not
	// be admitted (its queue disabled since, say): why.
	MemoRetryRefused = "retry_refused"
)

// Ending is the result the job will have at its clean, as Apply sets
// it then: the job manager decides on a retry before posting clean.
func (j *Job) Ending() Result { return j.result() }

// RetriedAs is the retry that followed the job, from its memo; 0 for
// none.
func (j *Job) RetriedAs() fluid.ID {
	s, _ := j.Memo[MemoRetriedAs].(string)
	if s == "" {
		// Most jobs: no retry, and no error built to say "" is no id
		// (2% of a replay, where every summary asks).
		return 0
	}
	id, err := fluid.Parse(s)
	if err != nil {
		return 0
	}
	return id
}
