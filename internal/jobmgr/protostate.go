package jobmgr

import (
	"encoding/json"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// A job's place in the two conversations the manager holds about it is two
// small states, one per protocol, each with its moves in one table below
// (drawn in docs/architecture.md, "The job manager's protocol states").
// The protocols are independent in that each peer's messages move only
// its own state; they meet in guards: a job is started only once it holds
// resources, and freed only once no shell may still run on them.
//
// A move of the manager's own (a message it sends) that the table does
// not have is not made: the table is the guard, so "send a cancel unless
// one was sent" is the table refusing a second cancel. A peer's message
// the table does not have is a protocol error (heardAlloc, heardExec),
// which the loop logs and which suspends that peer, as RFC 27 and RFC 32
// ask.

// allocState is a job's place in the RFC 27 conversation with the
// scheduler.
type allocState uint8

const (
	allocIdle         allocState = iota // asks for nothing, holds nothing
	allocAsked                          // a sched.alloc is outstanding
	allocCanceling                      // a sched.alloc is outstanding and a sched.cancel was sent for it
	allocHeld                           // holds R: its alloc event is posted
	allocStray                          // holds R that came after the job stopped wanting it (no alloc event)
	allocFreeing                        // a sched.free is outstanding for held R
	allocStrayFreeing                   // a sched.free is outstanding for stray R
	nAllocStates
)

var allocStateNames = [nAllocStates]string{"idle", "asked", "canceling", "held", "stray", "freeing", "stray-freeing"}

func (s allocState) String() string { return allocStateNames[s] }

// asking reports that an alloc request is outstanding.
func (s allocState) asking() bool { return s == allocAsked || s == allocCanceling }

// holds reports that the job holds resources, allocated or stray: the
// scheduler must hear of them at hello, and get them back by sched.free.
func (s allocState) holds() bool {
	return s == allocHeld || s == allocStray || s == allocFreeing || s == allocStrayFreeing
}

// allocEvent is what moves an allocState: a message the manager sends,
// or one the scheduler sent.
type allocEvent uint8

const (
	// The manager's.
	allocSendAlloc      allocEvent = iota // the job is offered: sched.alloc
	allocSendCancel                       // it is taken back: sched.cancel
	allocSendPrioritize                   // its priority changed: sched.prioritize
	allocSendFree                         // it is done with R: sched.free
	// The scheduler's, and its going.
	allocAnnotate    // sched.alloc response ANNOTATE
	allocGranted     // SUCCESS for a job still in SCHED
	allocGrantedLate // SUCCESS for a job that has left SCHED (an exception raced it)
	allocRefused     // SUCCESS whose R does not fit (grant.go): refused
	allocDenied      // DENY
	allocCanceled    // CANCEL
	allocFreed       // the sched.free response
	allocLost        // the scheduler went, or said hello again: requests are void
	nAllocEvents
)

var allocEventNames = [nAllocEvents]string{"send alloc", "send cancel", "send prioritize", "send free",
	"ANNOTATE", "SUCCESS", "SUCCESS, left SCHED", "SUCCESS, refused", "DENY", "CANCEL", "free response", "scheduler lost"}

func (ev allocEvent) String() string { return allocEventNames[ev] }

// execState is a job's place in the RFC 32 conversation with the exec
// service.
type execState uint8

const (
	execNone     execState = iota // no shell was started
	execDetached                  // a shell may run, but no start stream is open: after a restart or a lost exec service; start again with reattach
	execOpen                      // a start request's stream is open
	execNotified                  // its stream is open, and the exec service knows of the fatal exception
	execReleased                  // the final release arrived: the stream ended
	nExecStates
)

var execStateNames = [nExecStates]string{"none", "detached", "open", "notified", "released"}

func (s execState) String() string { return execStateNames[s] }

// open reports that a start request's stream is open.
func (s execState) open() bool { return s == execOpen || s == execNotified }

// shellMayRun reports that a shell may still run on the job's resources,
// so they cannot be freed yet.
func (s execState) shellMayRun() bool { return s == execDetached || s.open() }

// execEvent is what moves an execState.
type execEvent uint8

const (
	// The manager's.
	execSendStart  execEvent = iota // <service>.start, reattaching a detached shell
	execSendNotice                  // <service>.exception: the job got a fatal exception
	// The exec service's, and its going.
	execStarted      // start response
	execException    // exception response
	execFinished     // finish response
	execRelease      // release response, not final
	execReleaseFinal // the final release: the end of the stream
	execLost         // the exec service went: streams are gone, shells may live on
	nExecEvents
)

var execEventNames = [nExecEvents]string{"send start", "send exception", "start", "exception", "finish",
	"release", "release final", "exec service lost"}

func (ev execEvent) String() string { return execEventNames[ev] }

// send is what a move sends.
type send uint8

const (
	sendNothing    send = iota
	sendAlloc           // sched.alloc
	sendCancel          // sched.cancel
	sendPrioritize      // sched.prioritize
	sendFree            // sched.free
	sendStart           // <service>.start
	sendNotice          // <service>.exception
	sendAck             // <service>.ack, after the turn's commit (Take)
)

var sendNames = [...]string{"", "alloc", "cancel", "prioritize", "free", "start", "exception", "ack"}

func (s send) String() string { return sendNames[s] }

// allocRows is the RFC 27 table: from, event, to, and what is sent.
// Pairs not listed have no move.
var allocRows = []struct {
	from allocState
	ev   allocEvent
	to   allocState
	send send
}{
	{allocIdle, allocSendAlloc, allocAsked, sendAlloc},
	{allocAsked, allocSendCancel, allocCanceling, sendCancel},
	{allocAsked, allocSendPrioritize, allocAsked, sendPrioritize},
	{allocCanceling, allocSendPrioritize, allocCanceling, sendPrioritize},
	{allocAsked, allocAnnotate, allocAsked, sendNothing},
	{allocCanceling, allocAnnotate, allocCanceling, sendNothing},
	{allocAsked, allocGranted, allocHeld, sendNothing},
	{allocCanceling, allocGranted, allocHeld, sendNothing},
	{allocAsked, allocGrantedLate, allocStray, sendNothing},
	{allocCanceling, allocGrantedLate, allocStray, sendNothing},
	{allocAsked, allocRefused, allocIdle, sendNothing},
	{allocCanceling, allocRefused, allocIdle, sendNothing},
	{allocAsked, allocDenied, allocIdle, sendNothing},
	{allocCanceling, allocDenied, allocIdle, sendNothing},
	{allocAsked, allocCanceled, allocIdle, sendNothing},
	{allocCanceling, allocCanceled, allocIdle, sendNothing},
	{allocHeld, allocSendFree, allocFreeing, sendFree},
	{allocStray, allocSendFree, allocStrayFreeing, sendFree},
	{allocFreeing, allocFreed, allocIdle, sendNothing},
	{allocStrayFreeing, allocFreed, allocIdle, sendNothing},
	// Whatever was outstanding is void; what is held stays held, and is
	// replayed at the next hello.
	{allocIdle, allocLost, allocIdle, sendNothing},
	{allocAsked, allocLost, allocIdle, sendNothing},
	{allocCanceling, allocLost, allocIdle, sendNothing},
	{allocHeld, allocLost, allocHeld, sendNothing},
	{allocStray, allocLost, allocStray, sendNothing},
	{allocFreeing, allocLost, allocHeld, sendNothing},
	{allocStrayFreeing, allocLost, allocStray, sendNothing},
}

// execRows is the RFC 32 table.
var execRows = []struct {
	from execState
	ev   execEvent
	to   execState
	send send
}{
	{execNone, execSendStart, execOpen, sendStart},
	{execDetached, execSendStart, execOpen, sendStart},
	{execOpen, execSendNotice, execNotified, sendNotice},
	{execOpen, execStarted, execOpen, sendNothing},
	{execNotified, execStarted, execNotified, sendNothing},
	{execOpen, execException, execNotified, sendNothing}, // the exec service raised it: it knows
	{execNotified, execException, execNotified, sendNothing},
	{execOpen, execFinished, execOpen, sendNothing},
	{execNotified, execFinished, execNotified, sendNothing},
	{execOpen, execRelease, execOpen, sendNothing},
	{execNotified, execRelease, execNotified, sendNothing},
	{execOpen, execReleaseFinal, execReleased, sendAck},
	{execNotified, execReleaseFinal, execReleased, sendAck},
	{execNone, execLost, execNone, sendNothing},
	{execDetached, execLost, execDetached, sendNothing},
	{execOpen, execLost, execDetached, sendNothing},
	{execNotified, execLost, execDetached, sendNothing},
	{execReleased, execLost, execReleased, sendNothing},
}

// move is one cell of a table.
type move[S ~uint8] struct {
	to   S
	send send
	ok   bool // false: no move
}

// The tables as arrays, indexed by state and event: a move costs an
// index, not a lookup.
var (
	allocMoves [nAllocStates][nAllocEvents]move[allocState]
	execMoves  [nExecStates][nExecEvents]move[execState]
)

func init() {
	for _, r := range allocRows {
		allocMoves[r.from][r.ev] = move[allocState]{to: r.to, send: r.send, ok: true}
	}
	for _, r := range execRows {
		execMoves[r.from][r.ev] = move[execState]{to: r.to, send: r.send, ok: true}
	}
}

// allocMay reports whether the table has a move for ev from the job's
// state.
func (e *entry) allocMay(ev allocEvent) bool { return allocMoves[e.alloc][ev].ok }

// execMay is allocMay for the exec conversation.
func (e *entry) execMay(ev execEvent) bool { return execMoves[e.exec][ev].ok }

// allocGo makes the job's move for ev and sends what the table says;
// false: the table has no move, and nothing changed.
func (m *Manager) allocGo(e *entry, ev allocEvent) bool { return m.allocMove(e, ev, nil, nil) }

// allocMove is allocGo with the jobspec that a sched.alloc carries: the
// manager keeps none in memory (ops.Record.Trim), so whoever offers a job
// reads it from the store for the message alone (Schedule); parsed is the
// same jobspec as a value when the records keep it so (parsedJobspec),
// else nil.
func (m *Manager) allocMove(e *entry, ev allocEvent, js json.RawMessage, parsed *jobspec.Jobspec) bool {
	mv := allocMoves[e.alloc][ev]
	if !mv.ok {
		return false
	}
	j := e.j()
	switch mv.send {
	case sendAlloc:
		m.sendSched(schedproto.TopicAlloc, schedproto.Alloc{ID: e.id(), Priority: j.Priority, UserID: j.UserID, TSubmit: j.TSubmit, Jobspec: js, Parsed: parsed})
	case sendCancel:
		m.sendSched(schedproto.TopicCancel, schedproto.JobID{ID: e.id()})
	case sendPrioritize:
		m.sendSched(schedproto.TopicPrioritize, schedproto.Prioritize{Jobs: [][2]uint64{{uint64(e.id()), uint64(j.Priority)}}})
	case sendFree:
		m.sendSched(schedproto.TopicFree, schedproto.JobID{ID: e.id()})
	}
	if mv.to != e.alloc {
		m.touch(e)
		if mv.to.holds() != e.alloc.holds() {
			m.hold(e, mv.to.holds())
		}
		e.alloc = mv.to
		if mv.to == allocIdle {
			m.queue.relist(e)
		}
	}
	return true
}

// execGo is allocGo for the exec conversation.
func (m *Manager) execGo(e *entry, ev execEvent) bool { return m.execMove(e, ev, nil) }

// execMove is allocMove for the exec conversation: js is the jobspec a
// start carries (start).
func (m *Manager) execMove(e *entry, ev execEvent, js json.RawMessage) bool {
	mv := execMoves[e.exec][ev]
	if !mv.ok {
		return false
	}
	j := e.j()
	switch mv.send {
	case sendStart:
		// Reattach a job whose start was committed, or that must never
		// start now (an exception took it to CLEANUP): the exec service
		// reports its end if it holds it, and launches nothing. One the
		// exec service launched just before a restart, whose start never
		// reached the store, must be answered start again, or it could
		// never finish: a start without reattach, which the service
		// launches only if it holds no record of the job.
		m.sendExec(execproto.MethodStart, execproto.Start{ID: e.id(), UserID: j.UserID, Jobspec: js, Reattach: e.exec == execDetached && (j.Started || j.State != job.Run), R: e.rec.RawR})
	case sendNotice:
		if x := j.Exception; x != nil { // cleanup sends it for a fatal one only
			m.sendExec(execproto.MethodException, execproto.ExceptionNotice{ID: e.id(), Severity: x.Severity, Type: x.Type, Note: x.Note})
		}
	case sendAck:
		// Sent after the commit (Take), so the exec service forgets the
		// end only once it cannot be lost.
		m.out.acks = append(m.out.acks, e.id())
	}
	if mv.to != e.exec {
		m.touch(e)
		e.exec = mv.to
	}
	return true
}

// heardAlloc checks a scheduler's response for job id (e nil: not
// active) against the table: one with no move from the job's state
// answers no request outstanding, a protocol error.
func heardAlloc(e *entry, id fluid.ID, ev allocEvent, topic string) error {
	if e != nil && e.allocMay(ev) {
		return nil
	}
	what := "alloc"
	if ev == allocFreed {
		what = "free"
	}
	// The number as the peer sent it, then as users know it.
	return errorf(topic, "response for job %d (%s), which has no %s request outstanding", uint64(id), id, what)
}

// heardExec is heardAlloc for the exec service's start responses.
func heardExec(e *entry, id fluid.ID, ev execEvent, topic string) error {
	if e != nil && e.execMay(ev) {
		return nil
	}
	return errorf(topic, "response for job %d (%s), which has no start request outstanding", uint64(id), id)
}
