package client

import (
	"encoding/json"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
)

// The socket protocol: one JSON request line per connection, answered by
// zero or more event lines (for followers) and one final line.

// Methods of the socket protocol.
const (
	MethodSubmit    = "submit"
	MethodJobs      = "jobs"
	MethodJob       = "job"
	MethodCancel    = "cancel"
	MethodUrgency   = "urgency"
	MethodEvents    = "events"
	MethodWait      = "wait"
	MethodStats     = "stats"
	MethodResources = "resources"
	MethodDrain     = "drain"
	MethodUndrain   = "undrain"
	MethodQueues    = "queues"
	MethodQueueSet  = "queue-change"
	MethodQueueWait = "queue-wait"
	// Reservations (node-reservation specification).
	MethodReserve      = "reserve"
	MethodReservations = "reservations"
	MethodToolEvents   = "tool-events"
	MethodSpareAdd     = "spare-add"
	MethodNodeRemove   = "node-remove"
)

// Request is one call.
type Request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// Job is the caller's FLUXQ_JOB_ID: a claim the instance verifies
	// against the caller's process session before it believes it.
	Job string `json:"job,omitempty"`
	// AsScheduler asks to act as the scheduler (the owner only).
	AsScheduler bool `json:"as_scheduler,omitempty"`
	// Timeout is the caller's --timeout in seconds: fluxsched shows it
	// is alive (Working lines) well within it while it answers.
	Timeout float64 `json:"timeout,omitempty"`
}

// Response is one line of an answer: an event of a stream, or the final
// result or error.
type Response struct {
	Event *eventlog.Event `json:"event,omitempty"`
	// Progress is a stream line of a wait that is not an event.
	Progress json.RawMessage `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	// Status is the PMIx status of a rejected reservation request.
	Status int `json:"status,omitempty"`
	// Errno is the system error behind Error (ENOSPC: the instance's
	// store or job folders are on a full filesystem), so that the
	// caller's error still says what it is.
	Errno int `json:"errno,omitempty"`
	// Errors has one message per id of a cancel ("" when it worked).
	Errors []string `json:"errors,omitempty"`
	Final  bool     `json:"final,omitempty"`
	// Working is a sign of life, no answer: fluxsched has the request
	// and is at work on it (sent only to callers that give a Timeout).
	Working bool `json:"working,omitempty"`
}

// Params of the methods that take more than a query.
type (
	SubmitParams struct {
		Jobs []SubmitJob `json:"jobs"`
	}
	IDParams struct {
		ID fluid.ID `json:"id"`
	}
	CancelParams struct {
		IDs  []fluid.ID `json:"ids"`
		Note string     `json:"note"`
	}
	UrgencyParams struct {
		ID      fluid.ID `json:"id"`
		Urgency int      `json:"urgency"`
	}
	EventsParams struct {
		ID     fluid.ID `json:"id"`
		Follow bool     `json:"follow"`
	}
	DrainParams struct {
		Ranks  string `json:"ranks"`
		Reason string `json:"reason"`
		Force  bool   `json:"force"`
	}
)
