package api

import (
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
)

// The table: every request the instance answers. The name is what travels;
// the types are what the server decodes and the client expects.
var (
	// Submit stores jobs (all or none) and returns their ids.
	Submit = Method[SubmitParams, []fluid.ID, None]{Spec{Name: "submit", Access: Anyone}}
	// Jobs lists job summaries in the order of `fluxq jobs`.
	Jobs = Method[JobsQuery, []JobSummary, None]{Spec{Name: "jobs", Access: Anyone, ReadOnly: true}}
	// Job returns one job whole (its owner and the instance owner only).
	Job = Method[IDParams, JobInfo, None]{Spec{Name: "job", Access: Anyone, ReadOnly: true}}
	// JobOutput reads what a job's tasks wrote on the hosts it ran on,
	// from the exec agents there, for a job whose JobInfo says
	// OutputRemote (its owner and the instance owner only). Only a
	// running instance with a launcher for other machines answers it.
	JobOutput = Method[OutputParams, Outputs, None]{Spec{Name: "job-output", Access: Anyone, ReadOnly: true}}
	// Cancel raises a cancel exception on each job; the result has one
	// error per id, nil where it worked.
	Cancel = Method[CancelParams, CancelResult, None]{Spec{Name: "cancel", Access: Anyone}}
	// CancelAll raises a cancel exception on every active job a query
	// selects, in one turn; a job the caller may not cancel is a failure
	// of its own (a guest's --all -u all).
	CancelAll = Method[CancelAllParams, CancelAllResult, None]{Spec{Name: "cancel-all", Access: Anyone}}
	// Purge removes inactive jobs from the instance: their records and
	// their job folders (flux job purge). Guests purge their own only.
	Purge = Method[PurgeParams, PurgeResult, None]{Spec{Name: "purge", Access: Anyone}}
	// Urgency sets a pending job's urgency.
	Urgency = Method[UrgencyParams, None, None]{Spec{Name: "urgency", Access: Anyone}}
	// Update changes an active job's jobspec (flux update): every key or
	// none, checked as a submission is, with one jobspec-update event;
	// with DryRun it only answers the jobspec the update would make.
	Update = Method[UpdateParams, UpdateResult, None]{Spec{Name: "update", Access: Anyone}}
	// Events streams a job's eventlog, and with Follow what comes until
	// the job is inactive.
	Events = Method[EventsParams, None, eventlog.Event]{Spec{Name: "events", Access: Anyone, Stream: true, ReadOnly: true}}
	// Wait answers a job's summary once it is inactive.
	Wait = Method[IDParams, JobSummary, None]{Spec{Name: "wait", Access: Anyone, Stream: true, ReadOnly: true}}
	// WaitAll streams each listed job's summary once it is inactive, in
	// the order listed (fluxq wait --all, submit --wait): one request for
	// any number of jobs.
	WaitAll = Method[IDsParams, None, JobSummary]{Spec{Name: "wait-all", Access: Anyone, Stream: true, ReadOnly: true}}
	// Reap consumes the caller's waitable jobs as Flux's job manager
	// consumes its zombies: a job is waitable by its submitter from its
	// submission until a wait reports it. With All it takes every one of
	// the caller's jobs that has ended and is waitable; with IDs, those of
	// them that have. The result is the jobs it took (fluxq wait --all
	// reports them; a job is taken once).
	Reap = Method[ReapParams, []fluid.ID, None]{Spec{Name: "reap", Access: Anyone}}
	// Resubmit makes a new job from a job's jobspec, admitted as a new
	// submission (fluxq resubmit, pueue's restart), and returns its id.
	Resubmit = Method[IDParams, fluid.ID, None]{Spec{Name: "resubmit", Access: Anyone}}
	// Stats counts jobs per state and per result (fluxq stats).
	Stats = Method[None, JobCounts, None]{Spec{Name: "stats", Access: Anyone, ReadOnly: true}}

	// Resources returns the instance's resources and their status.
	Resources = Method[None, ResourceInfo, None]{Spec{Name: "resources", Access: Anyone, ReadOnly: true}}
	// Drain takes ranks out of scheduling with a reason; Force replaces
	// the reason of ranks already drained.
	Drain = Method[DrainParams, None, None]{Spec{Name: "drain", Access: OwnerOnly("drain or undrain")}}
	// Undrain returns ranks to scheduling.
	Undrain = Method[DrainParams, None, None]{Spec{Name: "undrain", Access: OwnerOnly("drain or undrain")}}

	// Queues returns the queues: configuration, state and job counts.
	Queues = Method[None, QueueInfo, None]{Spec{Name: "queues", Access: Anyone, ReadOnly: true}}
	// ChangeQueues enables, disables, starts or stops queues and returns
	// their state after.
	ChangeQueues = Method[QueueChange, QueueInfo, None]{Spec{Name: "queue-change", Access: OwnerOnly("change queue state")}}
	// WaitQueues waits for a queue, or the instance, to drain or become
	// idle, streaming the counts as they change.
	WaitQueues = Method[QueueWait, QueueCounts, QueueCounts]{Spec{Name: "queue-wait", Access: Anyone, Stream: true, ReadOnly: true}}

	// Reserve serves a reservation request (create, extend, release,
	// reclaim); a refusal is a *reservation.Error with its PMIx status.
	Reserve = Method[ReserveParams, ReservationView, None]{Spec{Name: "reserve", Access: Anyone}}
	// Reservations lists reservations and every node's session.
	Reservations = Method[ReservationsParams, ReservationList, None]{Spec{Name: "reservations", Access: Anyone, ReadOnly: true}}
	// ToolEvents streams the timeout warnings directed to the calling
	// tool, and with Follow each new one.
	ToolEvents = Method[ToolEventsParams, None, ToolEvent]{Spec{Name: "tool-events", Access: Anyone, Stream: true, ReadOnly: true}}
	// AddSpares registers spare nodes and returns their names.
	AddSpares = Method[SpareParams, []string, None]{Spec{Name: "spare-add", Access: OwnerOnly("add or remove nodes")}}
	// RemoveNodes takes nodes out of the scheduler's pool.
	RemoveNodes = Method[SpareParams, None, None]{Spec{Name: "node-remove", Access: OwnerOnly("add or remove nodes")}}
)

// Table is every entry, in the order above.
var Table = []Spec{
	Submit.Spec, Jobs.Spec, Job.Spec, JobOutput.Spec, Cancel.Spec, CancelAll.Spec, Purge.Spec, Urgency.Spec, Update.Spec, Events.Spec, Wait.Spec, WaitAll.Spec, Reap.Spec, Resubmit.Spec, Stats.Spec,
	Resources.Spec, Drain.Spec, Undrain.Spec,
	Queues.Spec, ChangeQueues.Spec, WaitQueues.Spec,
	Reserve.Spec, Reservations.Spec, ToolEvents.Spec, AddSpares.Spec, RemoveNodes.Spec,
}

// Lookup finds an entry by its name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Table {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}
