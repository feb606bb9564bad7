package agent

import (
	"errors"
	"fmt"
	"slices"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/cycletrace"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/journal"
	"github.com/fluxq/fluxq/internal/runner"
	"github.com/fluxq/fluxq/internal/wire"
)

// typeExec is the exception type of the agent's own exceptions, as the
// exec service's.
const typeExec = "exec"

// job is a job the agent holds: from its start until fluxsched
// acknowledges its end. Its fields are guarded by the agent's mu.
type job struct {
	id     fluid.ID
	userid uint32
	rec    *runner.Record
	spec   runner.Spec // until launched

	// conn is the start stream its responses go to, while it is the
	// current connection; nil for a job taken over from a journal until
	// a fluxsched takes it back.
	conn      *conn
	launched  bool // its tasks were forked: responses may flow
	startOwed bool // the start response is sent once launched
	fatal     bool // a fatal exception came before the launch
	ending    bool // its end is being journaled
	early     []runner.Event
	exc       []execproto.Exception
	sent      int // exceptions sent on conn
	end       *endRecord
	// stray: held from its cgroup, its record having been lost (see
	// findStrays).
	stray bool
}

// endRecord is the data of a journal end entry: everything the job's
// stream still has to say.
type endRecord struct {
	Status     int                   `json:"status"`
	Known      bool                  `json:"known"`
	Usage      *agentproto.Usage     `json:"usage,omitempty"`
	Exceptions []execproto.Exception `json:"exceptions,omitempty"`
	// Ended is when the job's processes were found gone (seconds since
	// the epoch): journaled with the end, so that however late the end is
	// reported (a journal that could not be written, fluxsched down, a
	// new agent), the job's run time is its processes'.
	Ended float64 `json:"ended,omitempty"`
}

// sendTo sends a response line of j if its stream is the current
// connection. Called with mu held.
func (a *Agent) sendTo(j *job, line []byte) {
	if j.conn != nil && j.conn == a.cur {
		j.conn.send(line)
	}
}

func (a *Agent) exceptionTo(j *job, e execproto.Exception) {
	a.sendTo(j, startLine(j.id, execproto.TypeException, exceptionData(e)))
}

// refuse answers a start that will not run: an exception, then the final
// release.
func refuse(cn *conn, id fluid.ID, typ, note string) {
	cn.send(startLine(id, execproto.TypeException, exceptionData(execproto.Exception{Type: typ, Note: note})))
	cn.send(startLine(id, execproto.TypeRelease, dataRelease))
}

// start serves agent.start: a job taken back, or launched.
func (a *Agent) start(cn *conn, m wire.Message) {
	req, err := decodeStart(m)
	if err != nil {
		cn.send(errorLine(m.Topic, wire.EPROTO, err.Error()))
		return
	}
	if req.Reattach && !a.holds(req.ID) {
		// Held by an agent that died since fluxsched last heard of it:
		// its journal is taken over first, so that the job is taken
		// back, not run a second time.
		a.adoptDead()
	}
	a.mu.Lock()
	if cn != a.cur {
		a.mu.Unlock()
		cn.send(errorLine(m.Topic, wire.EPROTO, "agent.start before agent.hello"))
		return
	}
	if j := a.jobs[req.ID]; j != nil {
		a.takeback(cn, j, req.Reattach)
		stray := j.stray && j.end == nil && !j.ending
		a.mu.Unlock()
		if stray {
			a.limitStray(req)
		}
		return
	}
	if req.Reattach {
		// A job fluxsched knows started, or must not start now, of which
		// no agent here holds a record: it ended unreported with an agent
		// whose journal is gone, or the machine restarted before its
		// launch reached the disk. Its status is lost; it never runs
		// again.
		a.mu.Unlock()
		refuse(cn, req.ID, typeExec, NoteNoRecord)
		return
	}
	if a.retiring || a.stopping {
		note := NoteRetiring
		if a.stopping {
			note = NoteStopping
		}
		a.mu.Unlock()
		refuse(cn, req.ID, typeExec, note)
		return
	}
	grace := agentproto.Duration(req.KillGrace)
	if grace == 0 {
		grace = DefaultKillGrace
	}
	j := &job{id: req.ID, userid: req.UserID, conn: cn, startOwed: true,
		spec: runner.Spec{ID: req.ID, UserID: req.UserID, Jobspec: req.Jobspec, R: req.R, KillGrace: grace, Launched: a.opts.Now(), Memory: req.Memory, Ranks: req.Ranks}}
	a.jobs[req.ID] = j
	a.mu.Unlock()

	cycletrace.At(cycletrace.AgentStartIn, uint64(req.ID))
	rec, data, err := a.prepare(j.spec)
	cycletrace.At(cycletrace.AgentPrepared, uint64(req.ID))
	if err != nil {
		a.mu.Lock()
		delete(a.jobs, req.ID)
		a.checkExit()
		a.mu.Unlock()
		// Nothing was started: the exception says why (the time limit
		// passed already, the user does not exist, the folder could not
		// be written, its record could not be made...).
		typ := typeExec
		var re *runner.Error
		if errors.As(err, &re) && re.Type != "" {
			typ = re.Type
		}
		refuse(cn, req.ID, typ, err.Error())
		return
	}
	j.rec = rec
	// Written before the fork, so that a later agent finds the processes.
	// Written is enough where the kernel names its boot: the record then
	// outlives this agent in the page cache, and only a crash of the
	// machine, which ends the processes too, can lose it; fluxsched, seeing
	// the new boot, starts no job it allocated before (jobmgr.Load), and
	// a start with reattach is never a launch (above). Elsewhere it is
	// synced first; the launches of a burst share one sync.
	a.jnl.Append([]journal.Entry{{Op: journal.OpLaunch, ID: j.id, Data: data}}, a.syncLaunch, func(err error) {
		if err == nil {
			cycletrace.At(cycletrace.AgentLaunchWritten, uint64(j.id))
			a.queueLaunch(j)
		}
	})
}

// prepare has the runner prepare a job and encodes the record to journal.
// It is the boundary of one job's start: whatever goes wrong in it, a
// record that does not encode or a panic of the runner, fails that job
// alone, which is refused, and the agent goes on serving the others
// (issue 24: one guest's record that did not encode killed the agent,
// and with it every other user's running job). Called without mu.
func (a *Agent) prepare(spec runner.Spec) (rec *runner.Record, data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &startFailure{why: fmt.Sprint(p)}
			// Nothing was forked: whatever Prepare made goes back. On a
			// goroutine of its own: a panic may have left a lock of
			// the runner's held, and this connection must not wait on
			// it.
			go a.run.Discard(spec.ID)
			a.log.Error("a job could not be started", "job", spec.ID, "err", err)
		}
	}()
	if rec, err = a.run.Prepare(spec); err != nil {
		return nil, nil, err
	}
	if data, err = json.Marshal(rec); err != nil {
		// The agent's own failure, not the job's: said once in the log
		// too, for the admin.
		err = &startFailure{why: "its record does not encode: " + err.Error()}
		a.run.Discard(spec.ID)
		a.log.Error("a job could not be started", "job", spec.ID, "err", err)
		return nil, nil, err
	}
	return rec, data, nil
}

// startFailure is a start that failed in the agent itself, rather than for
// a reason of the job's (a bad R, an unknown user...).
type startFailure struct{ why string }

func (e *startFailure) Error() string { return "the exec agent cannot start the job: " + e.why }

func (a *Agent) holds(id fluid.ID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.jobs[id] != nil
}

// takeback serves a start for a job the agent holds: never a second
// launch. Called with mu held.
func (a *Agent) takeback(cn *conn, j *job, reattach bool) {
	j.conn, j.sent = cn, 0
	if !j.launched {
		// The launch sends start: whoever asked before never saw one.
		j.startOwed = true
		return
	}
	if !reattach {
		a.sendTo(j, startLine(j.id, execproto.TypeStart, dataStart))
	}
	a.report(j)
}

// report sends what j's stream has not yet had on its connection: its
// exceptions, and once it ended its finish (if its status is known) and
// the final release. Called with mu held.
func (a *Agent) report(j *job) {
	exc := j.exc
	if j.end != nil {
		exc = j.end.Exceptions
	}
	for ; j.sent < len(exc); j.sent++ {
		a.exceptionTo(j, exc[j.sent])
	}
	if j.end == nil {
		return
	}
	if j.end.Known {
		b, _ := json.Marshal(agentproto.Finish{Status: j.end.Status, Usage: j.end.Usage, Timestamp: j.end.Ended})
		a.sendTo(j, startLine(j.id, execproto.TypeFinish, b))
	}
	a.sendTo(j, startLine(j.id, execproto.TypeRelease, dataRelease))
}

func (a *Agent) queueLaunch(j *job) {
	a.mu.Lock()
	a.launchQ = append(a.launchQ, j)
	a.mu.Unlock()
	select {
	case a.launchSig <- struct{}{}:
	default:
	}
}

// launcher forks the jobs whose records are durable, in order, on one
// goroutine, so that the journal's committer never waits on a fork.
func (a *Agent) launcher() {
	for {
		select {
		case <-a.launchSig:
		case <-a.done:
			return
		}
		a.mu.Lock()
		q := a.launchQ
		a.launchQ = nil
		a.mu.Unlock()
		for i, j := range q {
			select {
			case <-a.done:
				// Exiting without ending jobs (Close): a later agent
				// finds these records and reports them lost.
				return
			default:
			}
			a.launch(j)
			q[i] = nil
		}
	}
}

func (a *Agent) launch(j *job) {
	cycletrace.At(cycletrace.AgentForking, uint64(j.id))
	err := a.launchOne(j)
	cycletrace.At(cycletrace.AgentLaunched, uint64(j.id))
	if err != nil {
		a.mu.Lock()
		j.launched, j.startOwed, j.spec = true, false, runner.Spec{}
		a.endJob(j, runner.End{}, &execproto.Exception{Type: typeExec, Note: err.Error()})
		a.mu.Unlock()
		return
	}
	if len(j.rec.Procs) > 0 {
		// Subreaper mode: the pids a later agent must look for. Journaled
		// before any end of the job can be.
		if data, err := json.Marshal(j.rec); err == nil {
			a.jnl.Append([]journal.Entry{{Op: journal.OpLaunch, ID: j.id, Data: data}}, true, nil)
		}
	}
	a.mu.Lock()
	j.launched, j.spec = true, runner.Spec{}
	if j.startOwed {
		j.startOwed = false
		a.sendTo(j, startLine(j.id, execproto.TypeStart, dataStart))
	}
	early := j.early
	j.early = nil
	for _, ev := range early {
		a.handle(j, ev)
	}
	terminate := (j.fatal || a.stopping) && j.end == nil && !j.ending
	a.mu.Unlock()
	if terminate {
		a.run.Terminate(j.id)
	}
}

// launchOne forks one job's tasks; a panic in it fails that job alone, as
// an exception, instead of ending the agent and every job it holds. What
// the launch may have started is terminated. Called without mu.
func (a *Agent) launchOne(j *job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &startFailure{why: fmt.Sprint(p)}
			a.log.Error("a job could not be launched", "job", j.id, "err", err)
			// On a goroutine of its own, as in prepare: the launches
			// of the other jobs must not wait on a lock the panic left.
			go a.run.Terminate(j.id)
		}
	}()
	return a.run.Launch(j.rec, j.spec)
}

// event receives the runner's events. It never blocks on I/O.
func (a *Agent) event(ev runner.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j := a.jobs[ev.ID]
	if j == nil {
		return
	}
	if !j.launched {
		j.early = append(j.early, ev) // reported after start
		return
	}
	a.handle(j, ev)
}

// handle applies one runner event to a launched job. Called with mu held.
func (a *Agent) handle(j *job, ev runner.Event) {
	if j.end != nil || j.ending {
		return
	}
	if ev.Exception != nil {
		j.exc = append(j.exc, *ev.Exception)
		if j.conn != nil && j.conn == a.cur {
			a.exceptionTo(j, *ev.Exception)
			j.sent = len(j.exc)
		}
	}
	if ev.End != nil {
		var lost *execproto.Exception
		if !ev.End.Known {
			// Not our child any more (the agent that forked it died):
			// its wait status went with it.
			note := NoteStatusLost
			if j.stray {
				note = noteStray
			}
			lost = &execproto.Exception{Type: typeExec, Note: note}
		}
		a.endJob(j, *ev.End, lost)
	}
}

// endJob journals j's end and reports it once it is in the journal, adding
// the exception extra, if any, to those it had. Called with mu held; the
// journal calls back on its committer.
//
// Where the kernel names its boot the end is written, not synced, as the
// launch is (start): a write is in the kernel's page cache once write(2)
// returns, so it outlives this agent however it dies, and the next agent
// reports it; fluxsched acknowledges it only after its own commit of the
// finish, which is durable. Only a crash of the machine can lose the
// end, and then either the store has the finish already (the next agent
// finds the job's record without its end, its cgroup empty, and reports
// it lost: the job manager, which holds the job inactive, acknowledges
// it), or the job is reattached under a new boot and ends with "job
// status lost", as the jobs the crash killed do: never a second run,
// since a start with reattach is never a launch. What is given up is the
// exit status of a job that ended in the milliseconds before a machine
// crash; what is saved is an fdatasync on every job's way from its end
// to the next job's start. Elsewhere the end is synced before it is
// reported, as the launch is.
func (a *Agent) endJob(j *job, e runner.End, extra *execproto.Exception) {
	cycletrace.At(cycletrace.AgentEnded, uint64(j.id))
	j.ending = true
	rec := &endRecord{Status: e.Status, Known: e.Known, Exceptions: slices.Clone(j.exc), Ended: timestamp(a.opts.Now())}
	if e.Known {
		u := e.Usage
		rec.Usage = &u
	}
	if extra != nil {
		rec.Exceptions = append(rec.Exceptions, *extra)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		// Only a usage figure can fail (NaN): the end is journaled
		// without it, rather than the agent dying with every job.
		a.log.Error("a job's usage does not encode", "job", j.id, "err", err)
		rec.Usage = nil
		if data, err = json.Marshal(rec); err != nil {
			rec = &endRecord{Status: e.Status, Known: e.Known}
			data, _ = json.Marshal(rec)
		}
	}
	a.jnl.Append([]journal.Entry{{Op: journal.OpEnd, ID: j.id, Data: data}}, a.syncLaunch, func(err error) {
		if err != nil {
			return // the agent is exiting: the next one reports the job lost
		}
		cycletrace.At(cycletrace.AgentEndWritten, uint64(j.id))
		a.mu.Lock()
		j.ending, j.end, j.exc = false, rec, nil
		cycletrace.At(cycletrace.AgentEndSent, uint64(j.id))
		a.report(j)
		a.checkExit()
		a.mu.Unlock()
	})
}

// decodeStart reads an agent.start request, whose id, userid, jobspec and
// reattach are required, in one pass: the required keys are found by their
// pointers.
func decodeStart(m wire.Message) (agentproto.Start, error) {
	var w struct {
		ID        *fluid.ID       `json:"id"`
		UserID    *uint32         `json:"userid"`
		Jobspec   json.RawMessage `json:"jobspec"`
		Reattach  *bool           `json:"reattach"`
		R         json.RawMessage `json:"R"`
		KillGrace float64         `json:"kill_grace"`
		Memory    uint64          `json:"memory"`
		Ranks     string          `json:"ranks"`
	}
	if err := json.Unmarshal(m.Payload, &w); err != nil {
		return agentproto.Start{}, fmt.Errorf("%s: %w", m.Topic, err)
	}
	for _, k := range []struct {
		name    string
		missing bool
	}{{"id", w.ID == nil}, {"userid", w.UserID == nil}, {"jobspec", w.Jobspec == nil}, {"reattach", w.Reattach == nil}} {
		if k.missing {
			return agentproto.Start{}, fmt.Errorf("%s: payload has no %q", m.Topic, k.name)
		}
	}
	return agentproto.Start{Start: execproto.Start{ID: *w.ID, UserID: *w.UserID, Jobspec: w.Jobspec,
		Reattach: *w.Reattach, R: w.R}, KillGrace: w.KillGrace, Memory: w.Memory, Ranks: w.Ranks}, nil
}

// timestamp is t in seconds since the epoch, as RFC 18 eventlogs write
// time.
func timestamp(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
