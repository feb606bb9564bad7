package sim

import (
	"cmp"
	"slices"

	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/swf"
)

// Reasons a trace job is skipped (SIMULATION.md, "Input"), in the words of
// the trace's fields so a user can find the lines. A job that breaks
// several rules is counted once, under the first of these.
const (
	SkipNoCores        = "no processor count in field 5 or 8"
	SkipNegativeSubmit = "negative submit time in field 2"
	SkipNoRunTime      = "no run time in field 4"
)

// MaxExamples is how many job numbers a Reason lists: enough to find the
// lines in the trace, few enough for one line of output.
const MaxExamples = 5

// Reason is one reason jobs were skipped or denied: how many, and the
// job numbers of the first MaxExamples, in trace order.
type Reason struct {
	Reason   string  `json:"reason"`
	Count    int     `json:"count"`
	Examples []int64 `json:"examples"`
}

// skipReason is why SIMULATION.md skips j, or "" when it takes part.
func skipReason(j swf.Job) string {
	switch {
	case j.Cores() <= 0:
		return SkipNoCores
	case j.Submit < 0:
		return SkipNegativeSubmit
	case j.Run < 0:
		return SkipNoRunTime
	}
	return ""
}

// DenyTooMuchMemory is why a job asking more memory than any jobspec can
// (1E, per processor or in all) is denied without being submitted.
const DenyTooMuchMemory = "more memory than a job can ask for (over 1E)"

// denyReason words why trace job j was denied: the scheduler's DENY note,
// with its cause. The trace's jobs ask for cores (and with Config.Memory,
// memory) alone and carry no constraint of their own, so each of
// flux-core's notes has one cause here, which is said after it: memory
// when the machine has the cores the job asks for, so that only how much
// memory its processors need on a node can have refused it.
func (s *simulation) denyReason(j *simJob) string {
	if j.refused != "" {
		return j.refused
	}
	// Memory, when the machine has the cores: the job's field 10, or a
	// queue's default memory (policy.jobspec.defaults.system.memory),
	// which the job manager writes into jobs that ask for none.
	if j.cores <= s.cores && (j.mem > 0 || j.note == resource.ReasonUnsatisfiable) {
		return denyMemoryReason(j.note)
	}
	return denyReason(j.note)
}

// denyMemoryReason words the DENY note of a job refused for its memory.
func denyMemoryReason(note string) string {
	switch note {
	case resource.ReasonUnsatisfiable:
		return note + ": its memory per processor does not fit on the machine's nodes"
	case resource.ReasonUnsatisfiableConstrained:
		return note + ": its memory per processor does not fit on the nodes the queue's requires allow"
	}
	return denyReason(note)
}

// denyReason words the scheduler's DENY note for a trace job that asks
// for cores alone.
func denyReason(note string) string {
	switch note {
	case resource.ReasonUnsatisfiable:
		return note + ": more cores than the machine has"
	case resource.ReasonUnsatisfiableConstrained:
		return note + ": more cores than the nodes the queue's requires allow"
	case resource.ReasonNoMatch:
		return note + ": the queue's requires match no node"
	case "":
		return "denied by the scheduler"
	}
	return note
}

// tally counts jobs by reason; add them in trace order.
type tally map[string]*Reason

func (t tally) add(reason string, job int64) {
	r := t[reason]
	if r == nil {
		r = &Reason{Reason: reason, Examples: []int64{}}
		t[reason] = r
	}
	r.Count++
	if len(r.Examples) < MaxExamples {
		r.Examples = append(r.Examples, job)
	}
}

// list is the reasons, most jobs first, then by name so the order is
// stable; never nil, so JSON shows an empty list.
func (t tally) list() []Reason {
	out := make([]Reason, 0, len(t))
	for _, r := range t {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Reason) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return cmp.Compare(a.Reason, b.Reason)
	})
	return out
}
