// Package schedproto is RFC 27, the resource allocation protocol between the
// job manager and a scheduler: its topics, and its payloads as Go types
// whose JSON keys are exactly the RFC's.
//
// Two keys go beyond the RFC because a fluxq scheduler owns no storage and
// so cannot look R up in a KVS, as RFC 27 lets a Flux scheduler do: a hello
// response carries the job's R under "R", and a SUCCESS response carries
// the allocated R under "R", as current flux-core does. The job manager
// commits that R before it posts the alloc event, so the guarantee RFC 27
// gives a reader holds.
package schedproto

import (
	"fmt"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/wire"
)

// Topics.
const (
	TopicHello      = "job-manager.sched-hello"
	TopicReady      = "job-manager.sched-ready"
	TopicAlloc      = "sched.alloc"
	TopicCancel     = "sched.cancel"
	TopicPrioritize = "sched.prioritize"
	TopicFree       = "sched.free"
)

// Priority bounds (RFC 27).
const (
	PriorityMin = 0
	PriorityMax = 4294967295
	LimitMax    = 2147483647
)

// HelloJob is one response to job-manager.sched-hello: a job that holds
// resources. The stream ends with an ENODATA error response.
type HelloJob struct {
	ID       fluid.ID        `json:"id"`
	Priority int64           `json:"priority"`
	UserID   uint32          `json:"userid"`
	TSubmit  float64         `json:"t_submit"`
	R        json.RawMessage `json:"R,omitempty"`
}

// Modes of job-manager.sched-ready.
const (
	ModeUnlimited = "unlimited"
	ModeLimited   = "limited"
)

// Ready is the job-manager.sched-ready request.
type Ready struct {
	Mode  string `json:"mode"`
	Limit int    `json:"limit,omitempty"` // REQUIRED in limited mode only
}

// ReadyResponse answers Ready with the queue depth.
type ReadyResponse struct {
	Count int `json:"count"`
}

// Alloc is the sched.alloc request. TSubmit is sent as flux-core does, so a
// scheduler can order by submit time without a lookup.
type Alloc struct {
	ID       fluid.ID        `json:"id"`
	Priority int64           `json:"priority"`
	UserID   uint32          `json:"userid"`
	TSubmit  float64         `json:"t_submit"`
	Jobspec  json.RawMessage `json:"jobspec"`
	// Parsed is Jobspec as a value, in a message that stays in the process
	// (wire.NewTypedRequest), when the sender holds it parsed: the
	// scheduler takes it rather than parsing Jobspec, which is still set
	// and is what is encoded if the message leaves. The two are the same
	// jobspec; neither side changes it.
	Parsed *jobspec.Jobspec `json:"-"`
}

// AllocType is the type of a sched.alloc response.
type AllocType int

// The four sched.alloc response types.
const (
	Success  AllocType = 0
	Annotate AllocType = 1
	Deny     AllocType = 2
	Cancel   AllocType = 3
)

func (t AllocType) String() string {
	switch t {
	case Success:
		return "SUCCESS"
	case Annotate:
		return "ANNOTATE"
	case Deny:
		return "DENY"
	case Cancel:
		return "CANCEL"
	}
	return fmt.Sprintf("AllocType(%d)", int(t))
}

// AllocResponse is one response to sched.alloc.
type AllocResponse struct {
	ID          fluid.ID        `json:"id"`
	Type        AllocType       `json:"type"`
	Annotations json.RawMessage `json:"annotations,omitempty"` // SUCCESS (optional), ANNOTATE (required)
	Note        string          `json:"note,omitempty"`        // DENY (optional)
	R           json.RawMessage `json:"R,omitempty"`           // SUCCESS: the allocation
	// Granted is a SUCCESS's allocation as a value, in a message that
	// stays in the process (wire.NewTypedResponse) in place of R: R is
	// encoded from it only if the message leaves (MarshalJSON), and the
	// job manager takes it as it is rather than parsing R. An R is
	// immutable, so the two sides may share it.
	Granted *rset.R `json:"-"`
	// Annotated is Annotations as the value they decode to, in a message
	// that stays in the process, made by the sender beside the bytes
	// (which are still set, and are what is encoded if the message
	// leaves): the job manager takes it, and owns it, rather than
	// decoding Annotations. Nil when the sender made none.
	Annotated map[string]any `json:"-"`
}

// MarshalJSON encodes r, with R encoded from Granted when R is not set:
// a typed SUCCESS leaves the process as the JSON one would have been sent.
func (r AllocResponse) MarshalJSON() ([]byte, error) {
	type plain AllocResponse // the same keys, without this method
	if r.Granted != nil && len(r.R) == 0 {
		raw, err := r.Granted.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("R: %w", err)
		}
		r.R = raw
	}
	return json.Marshal(plain(r))
}

// HasR reports whether a response carries an allocation, as R or Granted.
func (r AllocResponse) HasR() bool { return len(r.R) > 0 || r.Granted != nil }

// JobID is the payload of sched.cancel, sched.free and the sched.free response.
type JobID struct {
	ID fluid.ID `json:"id"`
}

// Prioritize is the sched.prioritize request: [id, priority] pairs.
type Prioritize struct {
	Jobs [][2]uint64 `json:"jobs"`
}

// DecodeHelloJob reads and checks one hello response.
func DecodeHelloJob(m wire.Message) (HelloJob, error) {
	h, err := wire.DecodeTyped[HelloJob](m, keysHelloJob...)
	if err != nil {
		return h, err
	}
	return h, checkPriority(m.Topic, h.Priority)
}

// DecodeReady reads and checks a sched-ready request.
func DecodeReady(m wire.Message) (Ready, error) {
	r, err := wire.DecodeTyped[Ready](m, keysReady...)
	if err != nil {
		return r, err
	}
	switch r.Mode {
	case ModeUnlimited:
		if r.Limit != 0 {
			return r, fmt.Errorf("%s: limit is only for limited mode", m.Topic)
		}
	case ModeLimited:
		if r.Limit < 1 || r.Limit > LimitMax {
			return r, fmt.Errorf("%s: limit must be 1-%d", m.Topic, LimitMax)
		}
	default:
		return r, fmt.Errorf("%s: unknown mode %q", m.Topic, r.Mode)
	}
	return r, nil
}

// DecodeReadyResponse reads the sched-ready response.
func DecodeReadyResponse(m wire.Message) (ReadyResponse, error) {
	return wire.DecodeTyped[ReadyResponse](m, keysReadyResponse...)
}

// DecodeAlloc reads and checks a sched.alloc request.
func DecodeAlloc(m wire.Message) (Alloc, error) {
	a, err := wire.DecodeTyped[Alloc](m, keysAlloc...)
	if err != nil {
		return a, err
	}
	return a, checkPriority(m.Topic, a.Priority)
}

// DecodeAllocResponse reads and checks a sched.alloc response by RFC 27's
// per-type rules.
func DecodeAllocResponse(m wire.Message) (AllocResponse, error) {
	r, err := wire.DecodeTyped[AllocResponse](m, keysAllocResponse...)
	if err != nil {
		return r, err
	}
	bad := func(why string) (AllocResponse, error) {
		return r, fmt.Errorf("%s: %s response for job %d: %s", m.Topic, r.Type, uint64(r.ID), why)
	}
	if len(r.Annotations) > 0 && !wire.IsObject(r.Annotations) {
		return bad("annotations must be an object")
	}
	switch r.Type {
	case Success:
		if r.Note != "" {
			return bad("note is only for DENY")
		}
	case Annotate:
		if len(r.Annotations) == 0 {
			return bad("annotations are required")
		}
		if r.Note != "" || r.HasR() {
			return bad("only annotations may accompany ANNOTATE")
		}
	case Deny:
		if len(r.Annotations) > 0 || r.HasR() {
			return bad("only a note may accompany DENY")
		}
	case Cancel:
		if len(r.Annotations) > 0 || r.Note != "" || r.HasR() {
			return bad("only the required keys are allowed in a CANCEL response")
		}
	default:
		return r, fmt.Errorf("%s: response type %d is not 0-3", m.Topic, int(r.Type))
	}
	return r, nil
}

// DecodeJobID reads sched.cancel, sched.free and the sched.free response.
func DecodeJobID(m wire.Message) (JobID, error) {
	return wire.DecodeTyped[JobID](m, keysJobID...)
}

// DecodePrioritize reads a sched.prioritize request.
func DecodePrioritize(m wire.Message) (Prioritize, error) {
	p, err := wire.DecodeTyped[Prioritize](m, keysPrioritize...)
	if err != nil {
		return p, err
	}
	for _, j := range p.Jobs {
		if j[1] > PriorityMax {
			return p, fmt.Errorf("%s: priority %d of job %d is out of range", m.Topic, j[1], j[0])
		}
	}
	return p, nil
}

func checkPriority(topic string, p int64) error {
	if p < PriorityMin || p > PriorityMax {
		return fmt.Errorf("%s: priority %d is out of range (%d-%d)", topic, p, PriorityMin, PriorityMax)
	}
	return nil
}

// refusedPrefix starts the errstr of a refused SUCCESS; the job's id in
// decimal and the reason follow.
const refusedPrefix = "SUCCESS for job "

// Refused is the error response the job manager sends on sched.alloc
// when it refuses a SUCCESS whose R does not fit (fluxq goes beyond RFC 27
// here, which trusts the scheduler): errnum EINVAL, errstr "SUCCESS for
// job ID refused: WHY", the id in decimal as the scheduler's payloads
// carry it, so a scheduler can set free what it set aside for the job.
func Refused(id fluid.ID, why string) wire.Message {
	return wire.NewError(TopicAlloc, wire.EINVAL, fmt.Sprintf("%s%d refused: %s", refusedPrefix, uint64(id), why))
}

// RefusedJob returns the job a Refused response names; false for any
// other message.
func RefusedJob(m wire.Message) (fluid.ID, bool) {
	if m.Topic != TopicAlloc || m.Type != wire.Response || m.Errnum != wire.EINVAL || !strings.HasPrefix(m.Errstr, refusedPrefix) {
		return 0, false
	}
	num, rest, ok := strings.Cut(m.Errstr[len(refusedPrefix):], " ")
	if !ok || !strings.HasPrefix(rest, "refused: ") {
		return 0, false
	}
	id, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, false
	}
	return fluid.ID(id), true
}

// The keys each message must have, made once: a variadic list at each
// call is an allocation for every message decoded.
var (
	keysHelloJob      = []string{"id", "priority", "userid", "t_submit"}
	keysReady         = []string{"mode"}
	keysReadyResponse = []string{"count"}
	keysAlloc         = []string{"id", "priority", "userid", "jobspec"}
	keysAllocResponse = []string{"id", "type"}
	keysJobID         = []string{"id"}
	keysPrioritize    = []string{"jobs"}
)
