package resource

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// Policy says in which order nodes are tried when a request is placed.
type Policy int

// The placement policies of flux-core's sched-simple (its alloc-mode).
// The zero value is WorstFit, sched-simple's default.
const (
	// WorstFit tries the node with the most free cores first, spreading
	// jobs over the machine.
	WorstFit Policy = iota
	// FirstFit tries nodes in rank order.
	FirstFit
	// BestFit tries the node with the fewest free cores that still holds
	// a slot first, packing jobs together.
	BestFit
)

// String returns the policy's flux-core name, e.g. "worst-fit".
func (p Policy) String() string {
	switch p {
	case WorstFit:
		return "worst-fit"
	case FirstFit:
		return "first-fit"
	case BestFit:
		return "best-fit"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy reads a policy name: "first", "worst", "best", or flux-core's
// "first-fit", "worst-fit", "best-fit".
func ParsePolicy(s string) (Policy, error) {
	switch strings.TrimSuffix(s, "-fit") {
	case "worst":
		return WorstFit, nil
	case "first":
		return FirstFit, nil
	case "best":
		return BestFit, nil
	}
	return 0, fmt.Errorf("unknown allocation mode: %s", s)
}

// Request is what a job asks for, in the terms placement needs: the
// job-wide counts flux-core's libjj derives from jobspec V1 and the job's
// constraint.
type Request struct {
	// NNodes is the exact node count, 0 to let placement choose.
	NNodes int
	// NSlots is the total slot count; with NNodes > 0 it is spread evenly,
	// NSlots/NNodes per node.
	NSlots int
	// CoresPerSlot and GPUsPerSlot size one slot; a slot is on one node.
	CoresPerSlot, GPUsPerSlot int
	// MemPerSlot is the memory of one slot in bytes, 0 for none asked
	// (the slot's memory vertex, jobspec.Counts.MemPerSlot).
	MemPerSlot uint64
	// Exclusive asks for whole nodes; it needs NNodes > 0.
	Exclusive bool
	// Duration is the time limit in seconds, 0 for none.
	Duration float64
	// Constraint limits the nodes that may be used (RFC 31).
	Constraint constraint.Constraint
	// Targets are the sessions the request may be placed on, allocation
	// ids and jobspec.DefaultSession (attributes.system.targets); nil
	// means the default session only.
	Targets []string
}

// Reasons a request is refused, as flux-core's librlist words them.
const (
	ReasonUnsatisfiable            = "unsatisfiable request"
	ReasonNoMatch                  = "no resources satisfy provided constraints"
	ReasonUnsatisfiableConstrained = "unsatisfiable constrained request"
	ReasonExclusiveNeedsNodes      = "exclusive allocation only supported with nnodes"
)

// Errors Feasible returns; each one's text is its Reason constant.
var (
	ErrUnsatisfiable            = errors.New(ReasonUnsatisfiable)
	ErrNoMatch                  = errors.New(ReasonNoMatch)
	ErrUnsatisfiableConstrained = errors.New(ReasonUnsatisfiableConstrained)
)

// RequestFromJobspec derives a Request from a validated jobspec: its
// counts (jobspec.Counts), attributes.system.constraints and
// attributes.system.targets.
func RequestFromJobspec(js *jobspec.Jobspec) (Request, error) {
	if js == nil {
		return Request{}, errors.New("no jobspec")
	}
	c := js.Counts()
	req := Request{
		NNodes:       c.NNodes,
		NSlots:       c.NSlots,
		CoresPerSlot: c.CoresPerSlot,
		GPUsPerSlot:  c.GPUsPerSlot,
		MemPerSlot:   c.MemPerSlot,
		Exclusive:    c.Exclusive,
		Duration:     c.Duration,
	}
	if raw := js.Attributes.System.Constraints; len(raw) > 0 {
		con, err := constraint.ParseJSON(raw)
		if err != nil {
			return Request{}, fmt.Errorf("attributes.system.constraints: %w", err)
		}
		req.Constraint = con
	}
	targets, err := js.Targets()
	if err != nil {
		return Request{}, err
	}
	req.Targets = targets
	if err := req.Validate(); err != nil {
		return Request{}, err
	}
	return req, nil
}

// Validate checks that the request is well formed; libjj's and librlist's
// messages are used where they have one.
func (r Request) Validate() error {
	switch {
	case r.NSlots <= 0:
		return errors.New("Unable to determine slot count")
	case r.CoresPerSlot <= 0:
		return errors.New("Unable to determine slot size")
	case r.NNodes < 0:
		return fmt.Errorf("invalid node count %d", r.NNodes)
	case r.GPUsPerSlot < 0:
		return fmt.Errorf("invalid gpu count %d", r.GPUsPerSlot)
	case r.Duration < 0:
		return fmt.Errorf("invalid duration %g", r.Duration)
	case r.Exclusive && r.NNodes == 0:
		return errors.New(ReasonExclusiveNeedsNodes)
	case r.NNodes > 0 && r.NSlots%r.NNodes != 0:
		// Jobspec V1 gives every node the same slot count; an uneven
		// spread would need a rule flux-core does not write down.
		return fmt.Errorf("%d slots cannot be spread evenly over %d nodes", r.NSlots, r.NNodes)
	}
	return nil
}

// PerNode is the slot count each node gets with a node count, 0 without
// one.
func (r Request) PerNode() int { return r.perNode() }
