package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// User is who submits, as the caller's credentials say.
type User struct {
	UID    uint32
	Name   string   // "" when the uid has no name
	Groups []string // names of every group the user is in
	// Owner is the instance owner, whom access policy does not bind
	// (Flux's owner role holds every other role).
	Owner bool
}

// ErrRejected marks a submission the queue policy refuses; its text is
// the user's message.
var ErrRejected = errors.New("rejected")

// rejection is a refusal: msg for the user, and rule, the same words
// without what this one job asked ("" when msg names nothing of the job's
// own), so that refusals by one rule can be counted together.
type rejection struct{ msg, rule string }

func (r *rejection) Error() string        { return r.msg }
func (r *rejection) Is(target error) bool { return target == ErrRejected }

func reject(format string, a ...any) error { return &rejection{msg: fmt.Sprintf(format, a...)} }

// rejectLimit is a limit's refusal: "requested WHAT (ASKED) RELATION
// policy limit of LIMIT" and the queue, whose rule leaves out "(ASKED)".
func rejectLimit(what, asked, relation, limit, suffix string) *rejection {
	return &rejection{
		msg:  fmt.Sprintf("requested %s (%s) %s policy limit of %s%s", what, asked, relation, limit, suffix),
		rule: fmt.Sprintf("requested %s %s policy limit of %s%s", what, relation, limit, suffix),
	}
}

// Rule is the rule an admission refusal applies, in its own words but
// without what the one job asked: "requested duration exceeds policy
// limit of 12h for queue batch" for a job refused with "requested
// duration (40h) exceeds ...". Jobs refused by the same rule share it
// (fluxsched sim counts its denials by it). A refusal that names nothing
// of the job's own is its message; an error that is no refusal, "".
func Rule(err error) string {
	var r *rejection
	if !errors.As(err, &r) {
		return ""
	}
	if r.rule != "" {
		return r.rule
	}
	return r.msg
}

// Admit assigns a job to its queue and applies the queue's policy, as
// Flux's ingest and job manager do, in this order: the default queue when
// none is named; the queue must exist and be enabled; the access policy;
// the jobspec defaults (duration, and memory per slot); the limits,
// against the job's derived counts and total memory; and last the
// queue's required properties, and-ed into the job's constraints.
// The jobspec is changed in place; on error it must be discarded.
func (s *Set) Admit(js *jobspec.Jobspec, states map[string]State, u User) error {
	_, err := s.AdmitCanonical(js, states, u)
	return err
}

// AdmitCanonical is Admit returning the admitted jobspec in canonical
// form, marshalled once for both the check and the caller to store.
func (s *Set) AdmitCanonical(js *jobspec.Jobspec, states map[string]State, u User) (json.RawMessage, error) {
	name, changed, err := s.admit(js, states, u)
	if err != nil {
		return nil, err
	}
	b, err := js.MarshalJSON()
	if err != nil {
		if changed {
			// What the queue added must still make a jobspec that reads back.
			return nil, reject("jobspec with queue %s policy applied: %v", queueLabel(name), err)
		}
		return nil, err
	}
	if changed && len(b) > jobspec.MaxSize {
		return nil, reject("jobspec with queue %s policy applied is too large (%d bytes, at most %d)", queueLabel(name), len(b), jobspec.MaxSize)
	}
	return b, nil
}

// admit applies the policy; changed reports that the jobspec was changed.
func (s *Set) admit(js *jobspec.Jobspec, states map[string]State, u User) (string, bool, error) {
	sys := &js.Attributes.System
	changed := false
	if sys.Queue == "" && s.dflt != "" {
		sys.Queue, changed = s.dflt, true
	}
	name := sys.Queue
	q, ok := s.queues[name]
	switch {
	case name == "" && s.named:
		return name, false, reject("no queue specified")
	case !ok:
		return name, false, reject("Invalid queue '%s' specified", printable(name))
	}
	if st := stateOf(states, s, name); !st.Enabled {
		if name == "" {
			return name, false, reject("job submission is disabled: %s", st.DisableReason)
		}
		return name, false, reject("job submission to %s is disabled: %s", name, st.DisableReason)
	}
	if !u.Owner && !q.allows(u) {
		if u.Name == "" {
			return name, false, reject("user %d is not allowed to submit to queue %s", u.UID, queueLabel(name))
		}
		return name, false, reject("user %s is not allowed to submit to queue %s", u.Name, queueLabel(name))
	}
	if sys.Duration == 0 && q.DefaultDuration > 0 {
		sys.Duration, changed = q.DefaultDuration, true
	}
	if q.DefaultMemory > 0 {
		added, err := js.DefaultMemPerSlot(q.DefaultMemory)
		if err != nil {
			return name, false, reject("default memory of queue %s: %v", queueLabel(name), err)
		}
		changed = changed || added
	}
	if err := q.checkLimits(js); err != nil {
		return name, false, err
	}
	if len(q.Requires) > 0 {
		c, err := andProperties(sys.Constraints, q.Requires)
		if err != nil {
			return name, false, err
		}
		sys.Constraints, changed = c, true
	}
	return name, changed, nil
}

// printable escapes what a one-line message cannot show of a name the user
// typed (a control character, invalid UTF-8).
func printable(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func queueLabel(name string) string {
	if name == "" {
		return "(default)"
	}
	return name
}

// allows reports whether the access policy lets u submit.
func (q *Queue) allows(u User) bool {
	if q.AllowUser == nil && q.AllowGroup == nil {
		return true
	}
	if u.Name != "" && slices.Contains(q.AllowUser, u.Name) {
		return true
	}
	for _, g := range u.Groups {
		if slices.Contains(q.AllowGroup, g) {
			return true
		}
	}
	return false
}

// checkLimits applies policy.limits to the job (flux-core's limit-duration
// and limit-job-size plugins, with docs/cli.md's wording).
func (q *Queue) checkLimits(js *jobspec.Jobspec) error {
	suffix := ""
	if q.Name != "" {
		suffix = " for queue " + q.Name
	}
	d := js.Attributes.System.Duration
	if q.MaxDuration > 0 && (d == 0 || d > q.MaxDuration) {
		asked := "unlimited"
		if d > 0 {
			asked = fsd.FormatExact(d)
		}
		return rejectLimit("duration", asked, "exceeds", fsd.FormatExact(q.MaxDuration), suffix)
	}
	// The jobspec's derived counts, as flux-core's jj counts them: a job
	// without a node level asks for 0 nodes.
	if q.Max == unlimitedSizes && q.Min == unlimitedSizes && q.MaxMemory == 0 && q.MinMemory == 0 {
		return nil
	}
	c := js.Counts()
	checks := []struct {
		what     string
		max, min int64
		value    int64
	}{
		{"nnodes", q.Max.NNodes, q.Min.NNodes, int64(c.NNodes)},
		{"ncores", q.Max.NCores, q.Min.NCores, int64(c.NCores)},
		{"ngpus", q.Max.NGPUs, q.Min.NGPUs, int64(c.NGPUs)},
	}
	for _, k := range checks {
		if k.max != Unlimited && k.value > k.max {
			return rejectLimit(k.what, strconv.FormatInt(k.value, 10), "exceeds", strconv.FormatInt(k.max, 10), suffix)
		}
	}
	for _, k := range checks {
		if k.min != Unlimited && k.value < k.min {
			return rejectLimit(k.what, strconv.FormatInt(k.value, 10), "is under", strconv.FormatInt(k.min, 10), suffix)
		}
	}
	return q.checkMemory(c, suffix)
}

// andProperties adds required properties to a job's RFC 31 constraints
// (RFC 33: "added with an and operator").
func andProperties(existing json.RawMessage, props []string) (json.RawMessage, error) {
	req := json.RawMessage(propertiesJSON(props))
	combined := req
	if len(existing) > 0 && string(existing) != "null" {
		b, err := json.Marshal(map[string][]json.RawMessage{"and": {existing, req}})
		if err != nil {
			return nil, err
		}
		combined = b
	}
	if _, err := constraint.ParseJSON(combined); err != nil {
		return nil, reject("unsatisfiable constraints: %v", err)
	}
	// The jobspec's own canonical form, not encoding/json's: the stored
	// jobspec must read back byte for byte.
	c, err := jobspec.CanonicalValue(combined)
	if err != nil {
		return nil, reject("constraints: %v", err)
	}
	return c, nil
}

// ReadmitCanonical admits an updated job again, to the queue it names now
// (fluxq update): what its admission to the queue it was in (was) added
// to its constraints, that queue's requires, is taken off first, so a
// job moved from one queue to another is held to the new queue's
// properties alone, and one updated in place is not held to its queue's
// twice. The defaults the old queue filled in (duration, memory) stay:
// they are the job's values now, as if the user had given them.
func (s *Set) ReadmitCanonical(js *jobspec.Jobspec, was string, states map[string]State, u User) (json.RawMessage, error) {
	if q, ok := s.queues[was]; ok && len(q.Requires) > 0 {
		js.Attributes.System.Constraints = withoutProperties(js.Attributes.System.Constraints, q.Requires)
	}
	return s.AdmitCanonical(js, states, u)
}

// withoutProperties undoes andProperties(c, props): c is returned as it
// was before, or unchanged when it is not of the shape andProperties
// makes.
func withoutProperties(c json.RawMessage, props []string) json.RawMessage {
	if len(c) == 0 {
		return c
	}
	req, err := jobspec.CanonicalValue(propertiesJSON(props))
	if err != nil {
		return c
	}
	if bytes.Equal(c, req) {
		return nil
	}
	var and struct {
		And []json.RawMessage `json:"and"`
	}
	if err := json.Unmarshal(c, &and); err != nil || len(and.And) != 2 {
		return c
	}
	last, err := jobspec.CanonicalValue(and.And[1])
	if err != nil || !bytes.Equal(last, req) {
		return c
	}
	first, err := jobspec.CanonicalValue(and.And[0])
	if err != nil {
		return c
	}
	return first
}
