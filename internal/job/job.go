package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
)

// Exception is an RFC 21 exception event's context.
type Exception struct {
	Occurred  float64 `json:"occurred"`
	Type      string  `json:"type"`
	Severity  int     `json:"severity"`
	Note      string  `json:"note"`
	UserID    *uint32 `json:"userid,omitempty"`
	BeforeRun bool    `json:"-"` // raised before the job was allocated
}

// Fatal reports whether the exception ends the job (RFC 21: severity 0).
func (e *Exception) Fatal() bool { return e != nil && e.Severity == 0 }

// Job is what a job's eventlog says about it. The zero value is a job whose
// submit event has not been applied.
type Job struct {
	ID       fluid.ID
	UserID   uint32
	Parent   fluid.ID // the job it was submitted from inside, 0 for none
	Urgency  int
	Priority int64 // -1 until the priority event
	Flags    int
	State    State

	// Times the job entered each state (RFC 21 names: t_submit ... t_inactive);
	// zero until it does.
	TSubmit, TDepend, TPriority, TSched, TRun, TCleanup, TInactive float64
	// TStart is the start event's time (RUN is entered at alloc): a
	// finish dated when the processes ended is kept after it.
	TStart float64

	Dependencies []string       // outstanding dependency-add descriptions
	Annotations  map[string]any // as of the alloc event (RFC 27: volatile before)
	Memo         map[string]any // merged memo events

	Exception  *Exception // the first fatal exception, else the first one
	Allocated  bool       // holds resources: alloc seen, free not yet
	Started    bool       // start event seen
	Finished   bool       // finish event seen
	WaitStatus int        // the finish event's status
	Released   bool       // a final release event seen
	Result     Result     // set by clean

	// AgainOf is the job this one was made again from (fluxq resubmit,
	// or a retry), 0 for none; Retry is which retry of its chain it is
	// (1 for the first retry), 0 for a job that is no retry.
	AgainOf fluid.ID
	Retry   int
}

// ErrInvalidated is returned by Apply for an RFC 21 invalidate event: the
// job must be removed, not kept.
var ErrInvalidated = errors.New("job was invalidated")

// Replay rebuilds a job from its whole eventlog.
func Replay(id fluid.ID, events []eventlog.Event) (*Job, error) {
	j := &Job{ID: id}
	for i, e := range events {
		if err := j.Apply(e); err != nil {
			return nil, fmt.Errorf("job %s: event %d (%s): %w", id, i+1, e.Name, err)
		}
	}
	return j, nil
}

// Apply moves the job by one event, as RFC 21's state diagram says. It
// rejects an event that cannot happen in the job's present state, so a
// job manager bug or a corrupt eventlog is caught where it happens; on
// error the job is unchanged.
func (j *Job) Apply(e eventlog.Event) error {
	next := *j
	if err := next.apply(e); err != nil {
		return err
	}
	*j = next
	return nil
}

func (j *Job) apply(e eventlog.Event) error {
	if j.State == 0 && e.Name != EventSubmit {
		return fmt.Errorf("the first event must be submit")
	}
	if j.State == Inactive {
		return fmt.Errorf("job is inactive")
	}
	ts := e.Timestamp
	switch e.Name {
	case EventSubmit:
		if j.State != 0 {
			return fmt.Errorf("job was already submitted")
		}
		var err error
		if j.UserID, err = ctxUint32(e, "userid"); err != nil {
			return err
		}
		if j.Urgency, err = ctxInt(e, "urgency", UrgencyMin, UrgencyMax); err != nil {
			return err
		}
		if j.Flags, err = ctxInt(e, "flags", 0, math.MaxInt32); err != nil {
			return err
		}
		// A job submitted from inside another (fluxq's submit context
		// extension) names it: the node-reservation rules' parent.
		if v, ok := e.Context["parent"]; ok {
			ps, isStr := v.(string)
			p, err := fluid.Parse(ps)
			if !isStr || err != nil || p == 0 {
				return fmt.Errorf("submit: parent %v is not a job id", v)
			}
			j.Parent = p
		}
		// A job made again from another (fluxq's extension): resubmit
		// names the job, a retry also its place in the chain.
		if v, ok := e.Context[CtxAgainOf]; ok {
			as, isStr := v.(string)
			a, err := fluid.Parse(as)
			if !isStr || err != nil || a == 0 {
				return fmt.Errorf("submit: %s %v is not a job id", CtxAgainOf, v)
			}
			j.AgainOf = a
		}
		if _, ok := e.Context[CtxRetry]; ok {
			if j.Retry, err = ctxInt(e, CtxRetry, 1, math.MaxInt32); err != nil {
				return err
			}
			if j.AgainOf == 0 {
				return fmt.Errorf("submit: a retry names no job it retries")
			}
		}
		j.Priority = -1
		j.State, j.TSubmit = New, ts
	case EventValidate:
		return j.move(New, Depend, ts)
	case EventInvalidate:
		return ErrInvalidated
	case EventDependencyAdd:
		desc, err := ctxString(e, "description")
		if err != nil {
			return err
		}
		if j.State != New && j.State != Depend {
			return fmt.Errorf("dependency-add in state %s", j.State)
		}
		j.Dependencies = append(slices.Clone(j.Dependencies), desc)
	case EventDependencyRemove:
		desc, err := ctxString(e, "description")
		if err != nil {
			return err
		}
		i := slices.Index(j.Dependencies, desc)
		if i < 0 {
			return fmt.Errorf("dependency %q was never added", desc)
		}
		j.Dependencies = slices.Delete(slices.Clone(j.Dependencies), i, i+1)
	case EventDepend:
		if len(j.Dependencies) > 0 {
			return fmt.Errorf("depend with %d dependencies outstanding", len(j.Dependencies))
		}
		return j.move(Depend, Priority, ts)
	case EventPriority:
		p, err := ctxInt64(e, "priority", PriorityMin, PriorityMax)
		if err != nil {
			return err
		}
		switch j.State {
		case Priority:
			j.State, j.TSched = Sched, ts
		case Sched, Run, Cleanup:
			// A reprioritization: the state stays.
		default:
			return fmt.Errorf("priority in state %s", j.State)
		}
		j.Priority = p
	case EventUrgency:
		u, err := ctxInt(e, "urgency", UrgencyMin, UrgencyMax)
		if err != nil {
			return err
		}
		j.Urgency = u
	case EventAlloc:
		if err := j.move(Sched, Run, ts); err != nil {
			return err
		}
		j.Allocated = true
		if a, ok := e.Context["annotations"].(map[string]any); ok {
			j.Annotations = a
		}
	case EventStart:
		if j.State != Run || j.Started {
			return fmt.Errorf("start in state %s", j.State)
		}
		j.Started, j.TStart = true, ts
	case EventFinish:
		status, err := ctxInt(e, "status", 0, math.MaxInt32)
		if err != nil {
			return err
		}
		if !j.Started || j.Finished {
			return fmt.Errorf("finish without a start")
		}
		j.Finished, j.WaitStatus = true, status
		if j.State == Run {
			j.State, j.TCleanup = Cleanup, ts
		}
	case EventRelease:
		final, _ := e.Context["final"].(bool)
		if !j.Allocated {
			return fmt.Errorf("release of a job that holds no resources")
		}
		j.Released = j.Released || final
	case EventFree:
		if !j.Allocated {
			return fmt.Errorf("free of a job that holds no resources")
		}
		j.Allocated = false
	case EventException:
		return j.exception(e)
	case EventClean:
		if err := j.move(Cleanup, Inactive, ts); err != nil {
			return err
		}
		if j.Allocated {
			return fmt.Errorf("clean while resources are still allocated")
		}
		j.Result = j.result()
	case EventMemo:
		memo := make(map[string]any, len(j.Memo)+len(e.Context))
		for k, v := range j.Memo {
			memo[k] = v
		}
		for k, v := range e.Context {
			if v == nil {
				delete(memo, k) // RFC 21: null removes the key
			} else {
				memo[k] = v
			}
		}
		j.Memo = memo
	default:
		// RFC 21: "Events beyond those listed below MAY appear", e.g.
		// flux-restart, jobspec-update, prolog/epilog, debug.*.
	}
	return nil
}

func (j *Job) exception(e eventlog.Event) error {
	typ, err := ctxString(e, "type")
	if err != nil {
		return err
	}
	sev, err := ctxInt(e, "severity", 0, 7)
	if err != nil {
		return err
	}
	note, _ := e.Context["note"].(string)
	ex := &Exception{Occurred: e.Timestamp, Type: typ, Severity: sev, Note: note, BeforeRun: j.State&(New|Pending) != 0}
	if _, ok := e.Context["userid"]; ok {
		uid, err := ctxUint32(e, "userid")
		if err != nil {
			return err
		}
		ex.UserID = &uid
	}
	if j.Exception == nil || (ex.Fatal() && !j.Exception.Fatal()) {
		j.Exception = ex
	}
	if ex.Fatal() && j.State != Cleanup {
		j.State, j.TCleanup = Cleanup, e.Timestamp
	}
	return nil
}

// result is flux-core's rule: a clean exit is COMPLETED; a fatal cancel or
// timeout exception says so; anything else FAILED.
func (j *Job) result() Result {
	if ex := j.Exception; ex.Fatal() {
		switch ex.Type {
		case "cancel":
			return Canceled
		case "timeout":
			return Timeout
		}
		return Failed
	}
	if j.Finished && j.WaitStatus == 0 {
		return Completed
	}
	return Failed
}

// ReturnCode is the job's returncode as flux jobs reports it (see
// ReturnCode), and whether it has one yet.
func (j *Job) ReturnCode() (int, bool) {
	if !j.Finished {
		return ReturnCode(nil, j.Result)
	}
	ws := j.WaitStatus
	return ReturnCode(&ws, j.Result)
}

func (j *Job) move(from, to State, ts float64) error {
	if j.State != from {
		return fmt.Errorf("expected state %s, job is %s", from, j.State)
	}
	j.State = to
	switch to {
	case Depend:
		j.TDepend = ts
	case Priority:
		j.TPriority = ts
	case Run:
		j.TRun = ts
	case Inactive:
		j.TInactive = ts
	}
	return nil
}

func ctxString(e eventlog.Event, key string) (string, error) {
	s, ok := e.Context[key].(string)
	if !ok {
		return "", fmt.Errorf("context key %q must be a string", key)
	}
	return s, nil
}

func ctxUint32(e eventlog.Event, key string) (uint32, error) {
	n, err := ctxInt64(e, key, 0, math.MaxUint32)
	return uint32(n), err
}

func ctxInt(e eventlog.Event, key string, lo, hi int) (int, error) {
	n, err := ctxInt64(e, key, int64(lo), int64(hi))
	return int(n), err
}

// ctxInt64 reads an integer context value whether it came from a parsed
// eventlog (json.Number) or from a Go caller (any integer kind).
func ctxInt64(e eventlog.Event, key string, lo, hi int64) (int64, error) {
	var n int64
	switch v := e.Context[key].(type) {
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			return 0, fmt.Errorf("context key %q must be an integer", key)
		}
		n = i
	case int:
		n = int64(v)
	case int64:
		n = v
	case uint32:
		n = int64(v)
	case nil:
		return 0, fmt.Errorf("context key %q is required", key)
	default:
		return 0, fmt.Errorf("context key %q must be an integer", key)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("context key %q is out of range (%d-%d)", key, lo, hi)
	}
	return n, nil
}
