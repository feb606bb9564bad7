// Package client is the one interface the commands use to reach an
// instance: over fluxsched's socket while the loop runs, or straight to
// the store while it does not ("submit now, schedule later"). A command
// never knows which it got.
package client

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/state"
)

// Client is an instance, as the commands see it. Every method is one
// request; identities come from the connection (the socket's peer
// credentials, or the process's own uid on the direct path), never from
// an argument.
type Client interface {
	// Submit stores jobs (all or none) and returns their ids.
	Submit(ctx context.Context, jobs []SubmitJob) ([]fluid.ID, error)
	// Jobs lists job summaries, newest first within each group as
	// CLI.md orders them.
	Jobs(ctx context.Context, q JobsQuery) ([]state.Summary, error)
	// Job returns one job whole.
	Job(ctx context.Context, id fluid.ID) (*JobInfo, error)
	// Cancel raises a cancel exception on each job; the result has one
	// entry per id (nil when it worked).
	Cancel(ctx context.Context, ids []fluid.ID, note string) ([]error, error)
	// Urgency sets a pending job's urgency.
	Urgency(ctx context.Context, id fluid.ID, urgency int) error
	// Events calls fn with each event of the job's eventlog in order; with
	// follow it then waits for more until the job is inactive (or fn
	// returns an error, or ctx ends).
	Events(ctx context.Context, id fluid.ID, follow bool, fn func(eventlog.Event) error) error
	// Wait blocks until the job is inactive and returns its summary.
	Wait(ctx context.Context, id fluid.ID) (*state.Summary, error)
	// Stats counts jobs per state and per result (fluxq stats).
	Stats(ctx context.Context) (*Stats, error)

	// Resources returns the instance's resources and their status.
	Resources(ctx context.Context) (*Resources, error)
	// Drain takes ranks out of scheduling with a reason (fluxres drain);
	// force replaces the reason of ranks already drained.
	Drain(ctx context.Context, ranks string, reason string, force bool) error
	// Undrain returns ranks to scheduling.
	Undrain(ctx context.Context, ranks string) error

	// Queues returns the queues: configuration, state and job counts.
	Queues(ctx context.Context) (*QueueInfo, error)
	// ChangeQueues enables, disables, starts or stops queues (instance
	// owner only) and returns their state after.
	ChangeQueues(ctx context.Context, c state.QueueChange) (*QueueInfo, error)
	// WaitQueues waits for a queue, or the instance, to drain or become
	// idle; progress hears the counts as they change.
	WaitQueues(ctx context.Context, w QueueWait, progress func(QueueCounts)) (QueueCounts, error)

	// Reserve serves a reservation request (create, extend, release,
	// reclaim); rejections are *reservation.Error with their PMIx status.
	Reserve(ctx context.Context, p ReserveParams) (*ReservationView, error)
	// Reservations lists live reservations (all of them with all) and
	// every node's session.
	Reservations(ctx context.Context, all bool) (*ReservationList, error)
	// ToolEvents calls fn with the timeout warnings directed to the
	// calling tool, then, with follow, with each new one until ctx ends.
	ToolEvents(ctx context.Context, follow bool, fn func(state.ToolEvent) error) error
	// AddSpares registers spare nodes; RemoveNodes takes them out of the
	// scheduler's pool.
	AddSpares(ctx context.Context, p SpareParams) ([]string, error)
	RemoveNodes(ctx context.Context, hosts string) error

	// Close releases the connection or the store.
	Close() error
}

// Stats are job counts (fluxq stats).
type Stats struct {
	States  map[string]int `json:"states"`  // RFC 21 state name -> count
	Results map[string]int `json:"results"` // result name -> count of inactive jobs
	Total   int            `json:"total"`
}

// Resources is the inventory and what holds or blocks each part of it.
type Resources struct {
	Inventory json.RawMessage `json:"inventory"` // R v1 of the whole instance
	Allocated json.RawMessage `json:"allocated"` // R v1 held by jobs (union)
	Drained   []Drain         `json:"drained"`   // in rank order
	// Draining are drained ranks that still run jobs (Flux's "draining").
	Draining string `json:"draining"` // idset
}

// Drain is one drained rank.
type Drain struct {
	Rank      uint    `json:"rank"`
	Timestamp float64 `json:"timestamp"`
	Reason    string  `json:"reason"`
}

// SubmitJob is one job to submit.
type SubmitJob struct {
	Jobspec json.RawMessage `json:"jobspec"` // V1, JSON
	Urgency int             `json:"urgency"`
}

// JobsQuery selects jobs to list.
type JobsQuery struct {
	States   job.State    `json:"states"`            // 0: pending and running
	Results  []job.Result `json:"results,omitempty"` // inactive jobs with these results only
	AllUsers bool         `json:"all_users"`
	UserID   *uint32      `json:"userid,omitempty"` // -u USER; nil: the caller
	Queues   []string     `json:"queues,omitempty"`
	IDs      []fluid.ID   `json:"ids,omitempty"`
	Count    int          `json:"count,omitempty"` // at most this many; 0: no limit
}

// JobInfo is one job with everything stored about it.
type JobInfo struct {
	Summary  state.Summary    `json:"summary"`
	Jobspec  json.RawMessage  `json:"jobspec"`
	R        json.RawMessage  `json:"R,omitempty"`
	Eventlog []eventlog.Event `json:"eventlog"`
	JobDir   string           `json:"jobdir,omitempty"` // where its output is kept
}

// Errors every implementation returns the same way.
var (
	// ErrUnavailable: the instance could not be reached within the
	// timeout (CLI.md exit 69).
	ErrUnavailable = errors.New("instance unavailable")
)
