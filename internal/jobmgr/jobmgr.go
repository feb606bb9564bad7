// Package jobmgr is the job manager: it walks each job through the RFC 21
// states, asks the scheduler for resources (RFC 27) and the exec service
// to run the job (RFC 32), and records every step as an event.
//
// The Manager is a single-threaded state machine. The loop feeds it inputs
// (messages from the scheduler and the exec service, users' requests),
// each handled inside the loop turn's store transaction; the messages it
// wants sent wait in its outbox until that transaction has committed. So a
// scheduler never sees a request for a job whose submission is not yet
// durable, and the exec service never starts a job whose alloc event could
// still be lost.
//
// Each active job's place in the two conversations is one state per
// protocol, alloc (RFC 27, with the scheduler) and exec (RFC 32, with the
// exec service), moved only through these tables (protostate.go; drawn
// with their rules in docs/architecture.md, "The job manager's protocol
// states"). A row is an event, a column the state it moves from, a cell
// the state it moves to and what is sent; "-" is no move: refused if the
// manager would send it, a protocol error if a peer sent it.
//
//	| RFC 27 event        | idle          | asked              | canceling              | held           | stray                | freeing | stray-freeing |
//	| ------------------- | ------------- | ------------------ | ---------------------- | -------------- | -------------------- | ------- | ------------- |
//	| send alloc          | asked (alloc) | -                  | -                      | -              | -                    | -       | -             |
//	| send cancel         | -             | canceling (cancel) | -                      | -              | -                    | -       | -             |
//	| send prioritize     | -             | asked (prioritize) | canceling (prioritize) | -              | -                    | -       | -             |
//	| send free           | -             | -                  | -                      | freeing (free) | stray-freeing (free) | -       | -             |
//	| ANNOTATE            | -             | asked              | canceling              | -              | -                    | -       | -             |
//	| SUCCESS             | -             | held               | held                   | -              | -                    | -       | -             |
//	| SUCCESS, left SCHED | -             | stray              | stray                  | -              | -                    | -       | -             |
//	| SUCCESS, refused    | -             | idle               | idle                   | -              | -                    | -       | -             |
//	| DENY                | -             | idle               | idle                   | -              | -                    | -       | -             |
//	| CANCEL              | -             | idle               | idle                   | -              | -                    | -       | -             |
//	| free response       | -             | -                  | -                      | -              | -                    | idle    | idle          |
//	| scheduler lost      | idle          | idle               | idle                   | held           | stray                | held    | stray         |
//
//	| RFC 32 event      | none         | detached     | open                 | notified       | released |
//	| ----------------- | ------------ | ------------ | -------------------- | -------------- | -------- |
//	| send start        | open (start) | open (start) | -                    | -              | -        |
//	| send exception    | -            | -            | notified (exception) | -              | -        |
//	| start             | -            | -            | open                 | notified       | -        |
//	| exception         | -            | -            | notified             | notified       | -        |
//	| finish            | -            | -            | open                 | notified       | -        |
//	| release           | -            | -            | open                 | notified       | -        |
//	| release final     | -            | -            | released (ack)       | released (ack) | -        |
//	| exec service lost | none         | detached     | detached             | detached       | released |
package jobmgr

import (
	"fmt"
	"slices"
	"sort"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// Config is what a Manager needs from the instance.
type Config struct {
	Inventory *rset.R // every resource the scheduler may be given: the instance and its spare nodes
	// Reservations is the reservation state as loaded from the store; nil
	// for none (tests that do not care).
	Reservations *reservation.State
	Down         idset.Set        // ranks drained or offline at start
	Owner        uint32           // the instance owner's uid
	ExecService  string           // RFC 32 service name; default "job-exec"
	Now          func() time.Time // default time.Now
	// Guests is what each user but the owner may hold in reservations.
	Guests reservation.Limits
	// BootID is the machine's current boot (internal/boot); "" when
	// unknown, or when this manager does not run jobs. Load compares it
	// with the boot under which the jobs were last taken up.
	BootID string
	// Records keeps what the manager writes of each job as it moves, and
	// what it reads back (records.go); nil is the store, every live
	// instance's.
	Records Records
	// Offline is a manager no loop runs: the direct path's, for one
	// write made while no fluxsched runs (internal/writes). No scheduler
	// or exec service will hear what it would send, so it leaves new jobs
	// as stored for the next loop's Load (Submitted), and it will not
	// take a node with jobs out of the instance (RemoveSpares).
	Offline bool
	// Typed sends the scheduler and the exec service their messages as
	// schedproto and execproto values (wire.NewTypedRequest) rather than
	// JSON: for peers in the same process that decode them as they are
	// (fluxsched sim's). They carry what the JSON would, and are encoded
	// if they cross a socket (wire.Message.Encoded). Typed messages from
	// the peers (a SUCCESS's allocation as a value) are taken either way.
	// A live instance sends JSON: its exec router reads the start
	// request's bytes.
	Typed bool
	// TypedSched is Typed for the scheduler's messages alone: a live
	// instance's (fluxsched run's), whose exec service reads JSON and
	// whose scheduler, in process, decodes values as they are (one
	// behind a socket, --sched-cmd, gets them encoded as it always did).
	// A sched.alloc then hands its jobspec's bytes on without encoding
	// the request around them and decoding it again.
	TypedSched bool
}

// Outbox is what a loop turn produced, to act on after the commit.
type Outbox struct {
	Sched   []wire.Message // to the scheduler
	Exec    []wire.Message // to the exec service
	Changed []fluid.ID     // jobs with new events (for followers and waiters)
	// Reservations reports that reservations or tool events changed.
	Reservations bool
	// Exceptions are the exceptions the turn raised, for the log.
	Exceptions []Exception
	// SchedReady is the scheduler's ready once the turn accepted it: the
	// mode it chose, for the log.
	SchedReady *schedproto.Ready

	// Purged are the jobs retention removed from the store in the turn
	// (Retain), whose folders go once it has committed.
	Purged []fluid.ID

	// acks are jobs whose end the turn committed, acknowledged to the
	// exec service in one notification by Take.
	acks []fluid.ID
}

// Manager is the job manager.
type Manager struct {
	cfg     Config
	records Records // cfg.Records, or the store
	active  map[fluid.ID]*entry
	// asStored is, for an Offline manager, each active job's state as
	// its stored record had it before Load moved it on: what a listing
	// showed the caller, and so what a selection of the direct path
	// takes (Selected). nil for a loop's manager.
	asStored map[fluid.ID]job.State
	sched    schedLink
	exec     execLink
	// schedTag is the matchtag of the last request sent to the scheduler.
	schedTag uint32
	out      Outbox
	// spare holds the slices of an outbox handed back (Recycle), for the
	// next Take's outbox to fill.
	spare Outbox
	dirty bool // the SCHED queue needs another scheduling pass
	down  idset.Set

	// perUser counts the active jobs of each user (see ActiveOf), kept
	// with active; nil until the first job.
	perUser map[uint32]int

	// heldOn lists, by rank, the jobs whose alloc state holds an R with
	// something on that rank (allocState.holds), so that a SUCCESS is
	// checked against the few jobs on its ranks (grant.go). It is kept
	// by allocGo, and derived anew when a failed turn puts entries back.
	heldOn rankJobs

	waiters map[fluid.ID][]fluid.ID // job -> jobs whose dependencies name it
	queue   schedQueue              // the jobs in SCHED, for Schedule (schedq.go)
	wake    float64                 // the earliest begin-time still awaited (0: none)

	queues  *queue.Set      // nil: no queue gates scheduling
	stopped map[string]bool // queues not scheduling now

	inv *rset.R            // the scheduler's inventory; grows as spares are added
	res *reservation.State // nodes and reservations

	inactive    inactiveIndex // the inactive jobs, oldest first (purge.go)
	retention   Retention
	retainPause time.Time // retention waits until then (purge.go)

	cp   *Checkpoint // the turn's journal (see Save); nil outside turns
	turn uint64      // turns saved so far

	// With deferSummaries, the listing summaries of the jobs changed
	// since the last SaveSummaries wait in stale (see DeferSummaries),
	// their ids in staleIDs in the order they were first changed: a map
	// keeps the room of its largest burst, and ranging over it costs
	// that room at every turn after.
	deferSummaries bool
	stale          map[fluid.ID]*ops.Record
	staleIDs       []fluid.ID
}

// entry is an active job and its conversation state.
type entry struct {
	rec   *ops.Record
	alloc allocState // with the scheduler (RFC 27; protostate.go)
	exec  execState  // with the exec service (RFC 32)

	saved uint64 // the turn that last copied it into a Checkpoint
	// listed: it is in the SCHED queue's list (schedq.go).
	listed bool
}

func (e *entry) id() fluid.ID { return e.rec.Job.ID }
func (e *entry) j() *job.Job  { return e.rec.Job }

type schedPhase int

const (
	schedDown  schedPhase = iota // no scheduler, or suspended (RFC 27 Finalization)
	schedHello                   // hello answered, waiting for ready
	schedReady                   // serving allocs
)

type schedLink struct {
	phase       schedPhase
	limit       int // 0: unlimited
	outstanding int
	acquire     bool // a resource.acquire stream is open
	// acquireReq is the request that opened it: its updates are
	// answered with its matchtag and streaming flag.
	acquireReq wire.Message
}

type execLink struct {
	up      bool
	service string
}

// New returns a Manager; call Load before anything else.
func New(cfg Config) *Manager {
	if cfg.ExecService == "" {
		cfg.ExecService = "job-exec"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	inv := cfg.Inventory
	if inv == nil {
		inv = rset.New(nil)
	}
	res := cfg.Reservations
	if res == nil {
		res, _ = reservation.New(reservation.Support{}, inv.Nodelist().Expand(), nil, nil, 0)
	}
	records := cfg.Records
	if records == nil {
		records = storeRecords{}
	}
	return &Manager{cfg: cfg, records: records, active: map[fluid.ID]*entry{}, queue: newSchedQueue(), down: cfg.Down, waiters: map[fluid.ID][]fluid.ID{}, inv: inv, res: res, retention: NoRetention}
}

// Take returns and clears the outbox.
func (m *Manager) Take() Outbox {
	out := m.out
	m.out = Outbox{Sched: m.spare.Sched, Exec: m.spare.Exec, Changed: m.spare.Changed}
	m.spare = Outbox{}
	if len(out.acks) > 0 && m.exec.up {
		topic, ack := execproto.Topic(m.exec.service, execproto.MethodAck), execproto.Ack{IDs: out.acks}
		if m.cfg.Typed {
			out.Exec = append(out.Exec, wire.NewTypedRequest(topic, ack))
		} else if msg, err := wire.NewRequest(topic, ack); err == nil {
			out.Exec = append(out.Exec, msg)
		}
	}
	out.acks = nil
	return out
}

// Recycle hands back an outbox Take returned, once the caller is done
// with it (nothing of it may be used after): the next turns fill its
// slices again rather than growing new ones, which a loop that takes an
// outbox for every message (fluxsched sim's) would make by the million.
func (m *Manager) Recycle(out Outbox) {
	clear(out.Sched) // let go of the messages
	clear(out.Exec)
	m.spare = Outbox{Sched: out.Sched[:0], Exec: out.Exec[:0], Changed: out.Changed[:0]}
}

// TakeSched returns the messages for the scheduler the turn has made so
// far, and forgets them: the loop sends them before the commit when the
// scheduler shares the process (see internal/loop, exchange).
func (m *Manager) TakeSched() []wire.Message {
	msgs := m.out.Sched
	m.out.Sched = nil
	return msgs
}

// SchedQueued reports how many messages for the scheduler the turn has
// made so far.
func (m *Manager) SchedQueued() int { return len(m.out.Sched) }

// Quiet reports that the turn so far has nothing to send to the
// scheduler or the exec service.
func (m *Manager) Quiet() bool { return len(m.out.Sched) == 0 && len(m.out.Exec) == 0 }

// Active reports how many jobs are active.
func (m *Manager) Active() int { return len(m.active) }

// Load takes up every active job in the store, as after a restart or when
// jobs were submitted while no loop ran: jobs holding resources are marked
// for reattach, the rest continue from where their eventlog left them.
func (m *Manager) Load(tx *store.Tx) error {
	var ids []fluid.ID
	var inactive []ops.InactiveJob
	// The summaries where they lie, walked beside job/ids: a job whose
	// summary does not read (or fails its sum) is taken up from its
	// eventlog.
	err := tx.ForEachJobSummary(func(id uint64, sum []byte) {
		var s struct {
			State     job.State `json:"state"`
			UserID    uint32    `json:"userid"`
			TInactive float64   `json:"t_inactive"`
		}
		if err := json.Unmarshal(sum, &s); err == nil && s.State == job.Inactive {
			// Purge and retention find the oldest in memory.
			inactive = append(inactive, ops.InactiveJob{ID: fluid.ID(id), UserID: s.UserID, T: s.TInactive})
			return
		}
		ids = append(ids, fluid.ID(id))
	})
	if err != nil {
		return err
	}
	ops.SortInactive(inactive)
	m.inactive = inactiveIndex{list: inactive}
	if m.cfg.Offline {
		m.asStored = make(map[fluid.ID]job.State, len(ids))
	}
	err = ops.LoadAll(tx, ids, func(rec *ops.Record) error {
		if rec.Job.State == job.Inactive {
			return nil
		}
		id := rec.Job.ID
		if m.asStored != nil {
			m.asStored[id] = rec.Job.State
		}
		rec.Trim()
		e := &entry{rec: rec}
		j := rec.Job
		if j.Allocated {
			// Stray R (no alloc event) is not remembered across a restart.
			e.alloc = allocHeld
			m.hold(e, true)
		}
		switch {
		case j.Allocated && !j.Released && j.State&job.Running != 0:
			e.exec = execDetached // a shell may still run
		case j.Released:
			e.exec = execReleased
		}
		m.active[id] = e
		m.countActive(j.UserID, 1)
		m.track(e)
		return nil
	})
	if err != nil {
		return err
	}
	rebooted, err := m.rebooted(tx)
	if err != nil {
		return err
	}
	for _, e := range m.sortedActive() {
		if rebooted && e.exec == execDetached && !e.j().Started && e.j().State == job.Run {
			if err := m.raise(tx, e, "exec", NoteRebooted); err != nil {
				return err
			}
			continue
		}
		if err := m.advance(tx, e); err != nil {
			return err
		}
	}
	m.dirty = true
	return nil
}

// NoteRebooted is the exception raised at Load for a job that held its
// resources but had no start when the machine went down.
const NoteRebooted = "the machine restarted while the job was starting: it is not started again"

// rebooted reports whether the machine restarted since the jobs were last
// taken up, and records this boot for the next time, in the turn's
// transaction. A job allocated before the restart and not known to have
// started may have started all the same: the exec agent syncs its record
// of a launch only to the page cache (a crash of the machine, which loses
// it, also ends the job's processes), so after a restart of the machine,
// and only then, no record is no proof, and the job is never started
// again.
func (m *Manager) rebooted(tx *store.Tx) (bool, error) {
	now := m.cfg.BootID
	if now == "" {
		return false, nil
	}
	last := tx.BootID()
	if last != now {
		// Not recorded, a later restart would take this boot's jobs for
		// the last one's: the turn fails instead.
		if err := tx.PutBootID(now); err != nil {
			return false, fmt.Errorf("recording the boot id: %w", err)
		}
	}
	return last != "" && last != now, nil
}

// Submitted takes up jobs just stored by ops.Submit in this transaction.
// An offline manager takes up none: "submit now, schedule later", the jobs
// wait in DEPEND as stored until a loop's Load takes them up.
func (m *Manager) Submitted(tx *store.Tx, recs []*ops.Record) error {
	if m.cfg.Offline {
		return nil
	}
	for _, rec := range recs {
		rec.Trim() // what an active job costs is what it needs (Spec)
		e := &entry{rec: rec}
		m.activate(e)
		if err := m.advance(tx, e); err != nil {
			return err
		}
	}
	return nil
}

// now is the time for events.
func (m *Manager) now() float64 { return ops.Timestamp(m.cfg.Now()) }

func (m *Manager) post(tx *store.Tx, e *entry, name string, ctx map[string]any) error {
	return m.postAt(tx, e, name, ctx, m.now())
}

// postAt posts an event that happened at ts (a finish: when the
// processes ended).
func (m *Manager) postAt(tx *store.Tx, e *entry, name string, ctx map[string]any, ts float64) error {
	m.touch(e)
	err := m.records.Append(tx, e.rec, eventlog.Event{Timestamp: ts, Name: name, Context: ctx})
	m.track(e)
	if err == nil {
		err = m.saveSummary(tx, e)
	}
	if err != nil {
		return err
	}
	m.out.Changed = append(m.out.Changed, e.id())
	if name == job.EventException {
		m.out.Exceptions = append(m.out.Exceptions, exceptionOf(e.id(), ctx))
	}
	if name == job.EventStart || name == job.EventClean {
		// Jobs waiting on this one may now go on (or never will).
		for _, wid := range m.waiters[e.id()] {
			if w, ok := m.active[wid]; ok && w != e && w.j().State == job.Depend {
				if err := m.advance(tx, w); err != nil {
					return err
				}
			}
		}
		if name == job.EventClean {
			m.touchWaiters(e.id())
			delete(m.waiters, e.id())
		}
	}
	return nil
}

// advance takes every step the job's state allows now (flux-core's
// event_job_action): DEPEND -> PRIORITY -> SCHED, starting, cancelling,
// freeing, cleaning.
func (m *Manager) advance(tx *store.Tx, e *entry) error {
	for {
		j := e.j()
		switch j.State {
		case job.Depend:
			if len(j.Dependencies) > 0 {
				progressed, err := m.resolve(tx, e)
				if err != nil || !progressed {
					return err
				}
				continue
			}
			if err := m.post(tx, e, job.EventDepend, nil); err != nil {
				return err
			}
		case job.Priority:
			if err := m.post(tx, e, job.EventPriority, map[string]any{"priority": job.PriorityOf(j.Urgency)}); err != nil {
				return err
			}
			m.dirty = true
		case job.Sched:
			m.dirty = true
			return nil
		case job.Run:
			return m.start(tx, e)
		case job.Cleanup:
			done, err := m.cleanup(tx, e)
			if err != nil || !done {
				return err
			}
		default: // NEW awaits validation; INACTIVE is gone
			return nil
		}
	}
}

// cleanup moves a job in CLEANUP toward INACTIVE; done reports that it
// posted clean.
func (m *Manager) cleanup(tx *store.Tx, e *entry) (bool, error) {
	if e.alloc.asking() {
		if m.sched.phase == schedReady {
			m.allocGo(e, allocSendCancel) // unless one was sent
		}
		return false, nil
	}
	if e.exec.shellMayRun() {
		if e.j().Exception.Fatal() {
			m.execGo(e, execSendNotice) // on an open stream, once
		}
		return false, nil
	}
	if e.alloc.holds() {
		if m.sched.phase == schedReady {
			m.allocGo(e, allocSendFree) // unless one is outstanding
		}
		return false, nil
	}
	// A retry is stored in the transaction that posts the clean: a
	// crash loses or repeats neither (retry.go).
	next, err := m.retry(tx, e)
	if err != nil {
		return false, err
	}
	if err := m.post(tx, e, job.EventClean, nil); err != nil {
		return false, err
	}
	m.touch(e) // Restore brings it back
	delete(m.active, e.id())
	m.countActive(e.j().UserID, -1)
	m.becameInactive(e) // Restore drops it
	if err := m.jobEnded(tx, e.id()); err != nil {
		return true, err
	}
	// Taken up once the failed run is gone: it never runs beside it.
	return true, m.Submitted(tx, next)
}

// start sends the exec service a start request for an allocated job,
// with its jobspec read back from the store.
func (m *Manager) start(tx *store.Tx, e *entry) error {
	if m.exec.up && e.execMay(execSendStart) { // unless a stream is open or has ended
		// A jobspec that cannot be read (a damaged store) is sent as
		// none: the exec service refuses that job alone.
		js, _ := m.records.Jobspec(tx, e.rec)
		m.execMove(e, execSendStart, js)
	}
	return nil
}

// sendSched sends the scheduler a request, with a matchtag of the job
// manager's own (RFC 6); RFC 27's responses are matched by topic and job
// id all the same, so a scheduler need not echo it.
func (m *Manager) sendSched(topic string, v any) {
	msg, err := m.schedMessage(wire.Request, topic, v)
	if err != nil {
		return // our own types always encode
	}
	m.schedTag++
	if m.schedTag == 0 { // 0 is RFC 6's "no matchtag"
		m.schedTag = 1
	}
	msg.Matchtag = m.schedTag
	m.out.Sched = append(m.out.Sched, msg)
}

// respondSched answers the scheduler's request req, with its matchtag and
// its streaming flag (RFC 6).
func (m *Manager) respondSched(req wire.Message, v any) {
	msg, err := m.schedMessage(wire.Response, req.Topic, v)
	if err != nil {
		return
	}
	m.out.Sched = append(m.out.Sched, msg.Answering(req))
}

// schedMessage builds a message to the scheduler: typed (Config.Typed,
// Config.TypedSched) or JSON.
func (m *Manager) schedMessage(t wire.Type, topic string, v any) (wire.Message, error) {
	switch {
	case (m.cfg.Typed || m.cfg.TypedSched) && t == wire.Request:
		return wire.NewTypedRequest(topic, v), nil
	case m.cfg.Typed || m.cfg.TypedSched:
		return wire.NewTypedResponse(topic, v), nil
	case t == wire.Request:
		return wire.NewRequest(topic, v)
	}
	return wire.NewResponse(topic, v)
}

// refuseSched answers the scheduler's message with an error response.
func (m *Manager) refuseSched(msg wire.Message, errnum int, errstr string) {
	m.out.Sched = append(m.out.Sched, wire.NewError(msg.Topic, errnum, errstr).Answering(msg))
}

func (m *Manager) sendExec(method string, v any) {
	topic := execproto.Topic(m.exec.service, method)
	if m.cfg.Typed {
		m.out.Exec = append(m.out.Exec, wire.NewTypedRequest(topic, v))
		return
	}
	msg, err := wire.NewRequest(topic, v)
	if err != nil {
		return
	}
	m.out.Exec = append(m.out.Exec, msg)
}

// sortedActive lists active jobs in id (submit) order, so a restart
// replays them deterministically.
func (m *Manager) sortedActive() []*entry {
	es := make([]*entry, 0, len(m.active))
	for _, e := range m.active {
		es = append(es, e)
	}
	sort.Slice(es, func(a, b int) bool { return es[a].id() < es[b].id() })
	return es
}

// Schedule sends sched.alloc requests in priority, then submit order, as
// many as the scheduler's mode allows (RFC 27), and in limited mode asks
// the scheduler to cancel its lowest request when a higher-priority job
// waits. The loop calls it once per turn, in the turn's transaction (tx),
// from which each request's jobspec is read.
func (m *Manager) Schedule(tx *store.Tx) {
	if m.sched.phase != schedReady || !m.dirty {
		return
	}
	m.dirty = false
	// In limited mode only the first few waiting jobs can matter: those
	// that fill the free places, and as many more as there are requests
	// they may displace. A turn then costs the jobs in SCHED, not a sort
	// of them all.
	keep := -1
	if m.sched.limit > 0 {
		keep = max(m.sched.limit-m.sched.outstanding, 0) + m.sched.limit
	}
	waiting := m.waiting(keep)
	for len(waiting) > 0 && (m.sched.limit == 0 || m.sched.outstanding < m.sched.limit) {
		e := waiting[0]
		waiting = waiting[1:]
		if !e.allocMay(allocSendAlloc) {
			continue // waiting lists only jobs that may ask
		}
		// A jobspec that cannot be read (a damaged store) is sent as
		// none, which the scheduler denies: the job ends with that
		// exception, and the others are offered.
		js, _ := m.records.Jobspec(tx, e.rec)
		m.allocMove(e, allocSendAlloc, js, m.parsedJobspec(e))
		m.queue.allocs[e.id()] = e
		m.sched.outstanding++
	}
	if len(waiting) == 0 || m.sched.limit == 0 {
		return
	}
	// Limited mode and full: make room for each waiting job that outranks
	// an outstanding request (RFC 27 Cancel: "to make room for higher
	// priority jobs").
	var outstanding []*entry
	for _, e := range m.queue.allocs {
		if e.allocMay(allocSendCancel) && e.j().State == job.Sched {
			outstanding = append(outstanding, e)
		}
	}
	slices.SortFunc(outstanding, func(a, b *entry) int { return order(b, a) }) // lowest first
	for i, w := range waiting {
		if i >= len(outstanding) || !before(w, outstanding[i]) {
			break
		}
		m.allocGo(outstanding[i], allocSendCancel)
	}
}

// before orders jobs for allocation: priority descending, then id (submit
// order) ascending.
func before(a, b *entry) bool {
	if a.j().Priority != b.j().Priority {
		return a.j().Priority > b.j().Priority
	}
	return a.id() < b.id()
}

func (m *Manager) lookup(id fluid.ID) (*entry, bool) {
	e, ok := m.active[id]
	return e, ok
}

// errorf wraps a protocol problem with the peer's topic.
func errorf(topic string, format string, a ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{topic}, a...)...)
}

// Now is the manager's clock, for operations run beside it in a turn.
func (m *Manager) Now() time.Time { return m.cfg.Now() }

// Offline reports that no loop runs this manager (Config.Offline).
func (m *Manager) Offline() bool { return m.cfg.Offline }
