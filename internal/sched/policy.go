package sched

import (
	"fmt"
	"math"

	"github.com/fluxq/fluxq/internal/resource"
)

// Kind is a queue policy: which pending jobs a pass starts, and which get
// a planned start, what backfilling calls a reservation (docs/simulation.md,
// "Policies"; Fluxion's queue-policy).
type Kind int

// The queue policies. The zero value is FCFS, the default.
const (
	// FCFS starts jobs from the head of the queue while they fit and stops
	// at the first that does not.
	FCFS Kind = iota
	// EASY plans the head's earliest start (its shadow time) and
	// backfills any job that does not delay it.
	EASY
	// Hybrid gives planned starts to the first ReservationDepth jobs
	// that cannot start, and backfills the rest around them.
	Hybrid
	// Conservative gives every waiting job a planned start.
	Conservative
)

// Defaults of a QueuePolicy, as Fluxion's qmanager has them.
const (
	DefaultQueueDepth       = 32
	DefaultReservationDepth = 64
)

// String returns the policy's configuration name, e.g. "easy".
func (k Kind) String() string {
	switch k {
	case FCFS:
		return "fcfs"
	case EASY:
		return "easy"
	case Hybrid:
		return "hybrid"
	case Conservative:
		return "conservative"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind reads a queue policy name.
func ParseKind(s string) (Kind, error) {
	for _, k := range []Kind{FCFS, EASY, Hybrid, Conservative} {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown queue policy %q (want fcfs, easy, hybrid or conservative)", s)
}

// QueuePolicy is how one queue is scheduled.
type QueuePolicy struct {
	Kind Kind
	// QueueDepth bounds how many of the queue's pending jobs one pass
	// considers, in queue order; 0 considers them all.
	QueueDepth int
	// ReservationDepth is how many jobs that cannot start get a planned
	// start in one pass under Hybrid (0: DefaultReservationDepth). The
	// name is Fluxion's, as the configuration key reservation-depth is.
	ReservationDepth int
	// Match orders nodes when a job is placed.
	Match resource.Policy
}

// DefaultPolicy is fcfs, worst-fit, considering DefaultQueueDepth jobs.
func DefaultPolicy() QueuePolicy {
	return QueuePolicy{Kind: FCFS, QueueDepth: DefaultQueueDepth, Match: resource.WorstFit}
}

// planDepth is how many planned starts one pass may make in the queue.
func (q QueuePolicy) planDepth() int {
	switch q.Kind {
	case EASY:
		return 1
	case Hybrid:
		if q.ReservationDepth > 0 {
			return q.ReservationDepth
		}
		return DefaultReservationDepth
	case Conservative:
		return math.MaxInt
	}
	return 0
}

// Validate reports a depth out of range.
func (q QueuePolicy) Validate() error {
	if q.Kind < FCFS || q.Kind > Conservative {
		return fmt.Errorf("unknown queue policy %v", q.Kind)
	}
	if q.QueueDepth < 0 {
		return fmt.Errorf("queue-depth must be 0 (all) or more, not %d", q.QueueDepth)
	}
	if q.ReservationDepth < 0 {
		return fmt.Errorf("reservation-depth must be 1 or more, not %d", q.ReservationDepth)
	}
	return nil
}
