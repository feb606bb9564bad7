package agent

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/journal"
	"github.com/fluxq/fluxq/internal/runner"
)

// ack forgets jobs whose ends fluxsched committed. The entries need no
// sync of their own: an ack lost in a crash only makes the end reported
// once more, to a job manager that acknowledges what it does not know.
func (a *Agent) ack(ids []fluid.ID) {
	var entries []journal.Entry
	a.mu.Lock()
	for _, id := range ids {
		if j := a.jobs[id]; j != nil && j.end != nil {
			delete(a.jobs, id)
			entries = append(entries, journal.Entry{Op: journal.OpAck, ID: id})
		}
	}
	a.mu.Unlock()
	if len(entries) > 0 {
		a.jnl.Append(entries, false, func(error) {
			a.mu.Lock()
			a.checkExit() // a retiring agent exits once its acks are written
			a.mu.Unlock()
		})
	}
}

// runningJob returns j if it runs (launched, not ended), and whether it
// is held at all. Called with mu held.
func (a *Agent) runningJob(id fluid.ID) *job {
	j := a.jobs[id]
	if j == nil || !j.launched || j.end != nil || j.ending {
		return nil
	}
	return j
}

func (a *Agent) signal(id fluid.ID, sig int) {
	a.mu.Lock()
	j := a.runningJob(id)
	a.mu.Unlock()
	if j != nil {
		a.run.Signal(id, syscall.Signal(sig))
	}
}

// fatal ends a job on a fatal exception: SIGTERM now, SIGKILL after its
// grace; one not launched yet is ended as soon as it is.
func (a *Agent) fatal(id fluid.ID) {
	a.mu.Lock()
	j := a.jobs[id]
	if j != nil && !j.launched {
		j.fatal = true
	}
	j = a.runningJob(id)
	a.mu.Unlock()
	if j != nil {
		a.run.Terminate(id)
	}
}

// cancel serves agent.cancel from a user of uid: the job's user or the
// agent's own may end it.
func (a *Agent) cancel(uid uint32, id fluid.ID) (int, string) {
	a.mu.Lock()
	j := a.jobs[id]
	if j == nil {
		a.mu.Unlock()
		return errNoEnt, "job " + id.String() + " is not running here"
	}
	if uid != a.uid && uid != j.userid {
		a.mu.Unlock()
		return errPerm, "permission denied: job " + id.String() + " is not yours"
	}
	a.mu.Unlock()
	a.fatal(id)
	return 0, ""
}

// retire takes no new job, and exits once every job ended and was
// acknowledged.
func (a *Agent) retire() {
	a.mu.Lock()
	a.retiring = true
	a.checkExit()
	a.mu.Unlock()
}

// stop exits once no job runs: at once if none does, after ending them
// with force; otherwise it refuses and returns how many run. reply, if
// not nil, answers the stop once it is taken, under mu.
func (a *Agent) stop(force bool, reply func()) int {
	a.mu.Lock()
	var running []fluid.ID
	n := 0
	for id, j := range a.jobs {
		if j.end == nil {
			n++
			if a.runningJob(id) != nil {
				running = append(running, id)
			} else if !j.launched {
				j.fatal = true
			}
		}
	}
	if n > 0 && !force {
		a.mu.Unlock()
		return n
	}
	a.stopping = true
	if reply != nil {
		// Queued before anything can end the agent (checkExit, or the
		// end of the last job terminated below): the exit flushes what
		// is queued, and a reply sent after it was lost (TestRealStopForce
		// failed 1 run in 15 under load).
		reply()
	}
	a.checkExit()
	a.mu.Unlock()
	for _, id := range running {
		a.run.Terminate(id)
	}
	return 0
}

// checkExit ends Run once the agent has nothing left to do. Called with
// mu held.
func (a *Agent) checkExit() {
	switch {
	case a.stopping:
		for _, j := range a.jobs {
			if j.end == nil {
				return
			}
		}
	case a.retiring:
		if len(a.jobs) > 0 {
			return
		}
	default:
		return
	}
	a.finish()
}

// takeBack holds the jobs of a journal the agent opened or adopted: ended
// ones until fluxsched acknowledges them; running ones watched by the
// runner until their processes are gone.
func (a *Agent) takeBack(jobs []journal.Job) {
	var adopt []runner.Record
	a.mu.Lock()
	for _, jj := range jobs {
		if a.jobs[jj.ID] != nil {
			continue
		}
		j := &job{id: jj.ID, launched: true}
		var rec runner.Record
		launchOK := jj.Launch != nil && json.Unmarshal(jj.Launch, &rec) == nil
		if launchOK {
			j.rec, j.userid = &rec, rec.UserID
		}
		a.jobs[jj.ID] = j
		switch {
		case jj.End != nil:
			var e endRecord
			if err := json.Unmarshal(jj.End, &e); err != nil {
				e = endRecord{Exceptions: []execproto.Exception{{Type: typeExec, Note: noteBadRecord}}}
			}
			j.end = &e
		case launchOK:
			j.stray = rec.Recovered
			adopt = append(adopt, rec)
		default:
			// Ended once the cgroups were searched, unless they hold its
			// processes (findStrays).
			if a.badRecords == nil {
				a.badRecords = map[fluid.ID]bool{}
			}
			a.badRecords[jj.ID] = true
			a.findAgain = true
		}
	}
	a.mu.Unlock()
	for _, rec := range adopt {
		a.run.Adopt(rec)
	}
}

// findStrays holds as running the jobs whose cgroups still hold processes
// though no readable record says they run: the journal's entry was
// damaged, or lost with a torn write. The cgroup is the truth for what
// runs: such a job is listed running at hello, so that fluxsched keeps its
// resources held and takes it back, and it ends, with an exec exception
// saying its record was lost, once its processes are gone. A job of a
// record that did not read and whose cgroup is empty (or that has none:
// subreaper mode) ends at once with that exception. Called under adoptMu;
// othersLive says another agent lives, whose jobs' unlocked cgroups must
// not be taken.
func (a *Agent) findStrays(othersLive bool) {
	a.mu.Lock()
	held := make(map[fluid.ID]bool, len(a.jobs))
	for id := range a.jobs {
		if !a.badRecords[id] {
			held[id] = true
		}
	}
	a.mu.Unlock()
	strays := a.run.Strays(func(id fluid.ID) bool { return held[id] }, !othersLive)
	var entries []journal.Entry
	a.mu.Lock()
	for _, rec := range strays {
		j := a.jobs[rec.ID]
		if j == nil {
			j = &job{id: rec.ID, launched: true}
			a.jobs[rec.ID] = j
		}
		j.rec, j.userid, j.stray = &rec, rec.UserID, true
		delete(a.badRecords, rec.ID)
		a.log.Warn("a job's record in the journal was lost or damaged, but its cgroup holds processes: it is held as running until they end",
			"job", rec.ID.String(), "cgroup", rec.Cgroup[0])
		// Journaled anew, so that an agent that follows finds the job by
		// its record.
		if data, err := json.Marshal(rec); err == nil {
			entries = append(entries, journal.Entry{Op: journal.OpLaunch, ID: rec.ID, Data: data})
		}
	}
	for id := range a.badRecords {
		if j := a.jobs[id]; j != nil && j.end == nil && !j.ending {
			a.endJob(j, runner.End{}, &execproto.Exception{Type: typeExec, Note: noteBadRecord})
		}
	}
	a.badRecords = nil
	a.mu.Unlock()
	if len(entries) > 0 {
		a.jnl.Append(entries, true, nil)
	}
	for _, rec := range strays {
		a.run.Adopt(rec)
	}
}

// adoptDead takes over the journals of dead agents, of any build.
func (a *Agent) adoptDead() {
	a.adoptMu.Lock()
	defer a.adoptMu.Unlock()
	paths, _ := filepath.Glob(filepath.Join(a.dir, "*.journal"))
	own := JournalPath(a.dir, a.opts.Build)
	othersLive := false
	for _, p := range paths {
		if p == own {
			continue
		}
		build := strings.TrimSuffix(filepath.Base(p), ".journal")
		pidFile := PIDPath(a.dir, build)
		jobs, err := a.jnl.Adopt(p, SocketPath(a.dir, build), pidFile, pidFile+".tmp")
		if errors.Is(err, journal.ErrLocked) {
			othersLive = true
			continue
		}
		a.findAgain = true // a dead agent's cgroups may hold what its journal lost
		if err != nil {
			a.log.Warn("taking over a dead agent's journal", "err", err)
		}
		if len(jobs) > 0 {
			a.log.Info("took over the jobs of a dead agent", "build", build, "jobs", len(jobs))
		}
		a.takeBack(jobs)
	}
	if a.findAgain {
		a.findAgain = false
		a.findStrays(othersLive)
	}
}

// expire sets a running job's time limit anew (fluxq update duration=),
// and journals its record with it, so that an agent that follows keeps
// it. A job the agent does not run, or that has ended, is left alone.
func (a *Agent) expire(id fluid.ID, at time.Time) {
	rec, ok := a.run.SetExpiration(id, at)
	if !ok {
		return
	}
	a.mu.Lock()
	if j := a.jobs[id]; j != nil {
		j.rec = &rec
	}
	a.mu.Unlock()
	if data, err := json.Marshal(rec); err == nil {
		a.jnl.Append([]journal.Entry{{Op: journal.OpLaunch, ID: id, Data: data}}, true, nil)
	}
}

// limitStray gives a stray the time limit its reattach names (its record,
// made from its cgroup, knew none), and journals the record with it, so
// that an agent that follows keeps it.
func (a *Agent) limitStray(req agentproto.Start) {
	grace := agentproto.Duration(req.KillGrace)
	rec, ok := a.run.Limit(req.ID, runner.Spec{ID: req.ID, UserID: req.UserID, Jobspec: req.Jobspec, R: req.R, KillGrace: grace})
	if !ok {
		return
	}
	a.mu.Lock()
	if j := a.jobs[req.ID]; j != nil {
		j.rec = &rec
	}
	a.mu.Unlock()
	if data, err := json.Marshal(rec); err == nil {
		a.jnl.Append([]journal.Entry{{Op: journal.OpLaunch, ID: req.ID, Data: data}}, true, nil)
	}
}
