package jobmgr

import (
	"fmt"
	"strings"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// ExecMessage handles one message from the exec service. An error means it
// broke the protocol; it is suspended until its next hello (RFC 32).
func (m *Manager) ExecMessage(tx *store.Tx, msg wire.Message) error {
	switch {
	case msg.Type == wire.Request && msg.Topic == execproto.TopicHello:
		return m.execHello(tx, msg)
	case msg.Type == wire.Response && m.exec.up && msg.Topic == execproto.Topic(m.exec.service, execproto.MethodStart):
		if msg.IsError() {
			// RFC 32: an error response is an exec service fatality.
			m.ExecDisconnected()
			return msg.Err()
		}
		if err := m.startResponse(tx, msg); err != nil {
			m.ExecDisconnected()
			return err
		}
		return nil
	}
	if msg.Type == wire.Request {
		m.out.Exec = append(m.out.Exec, wire.NewError(msg.Topic, wire.ENOSYS, "unknown method"))
	}
	return fmt.Errorf("unexpected %s %s from the exec service", msg.Topic, msg.Type)
}

// ExecDisconnected suspends the exec service. Every start stream is gone
// with it; the jobs are reattached after the next hello.
func (m *Manager) ExecDisconnected() {
	m.exec.up = false
	for _, e := range m.active {
		m.execGo(e, execLost)
	}
}

func (m *Manager) execHello(tx *store.Tx, msg wire.Message) error {
	h, err := execproto.DecodeHello(msg)
	if err != nil {
		m.out.Exec = append(m.out.Exec, wire.NewError(msg.Topic, wire.EPROTO, err.Error()))
		return err
	}
	// RFC 32: fail the hello while another service has starts outstanding.
	if m.exec.up {
		for _, e := range m.active {
			if e.exec.open() {
				m.out.Exec = append(m.out.Exec, wire.NewError(msg.Topic, 16 /* EBUSY */, "jobs have start requests outstanding"))
				return nil
			}
		}
	}
	m.exec = execLink{up: true, service: h.Service}
	m.respondExec(msg.Topic)
	// Ends the exec service holds for jobs that will not be taken back
	// were committed before a restart: they are acknowledged now, so the
	// agent can forget them. The others are reported again on their
	// start stream and acknowledged after that commit.
	for _, id := range h.Ended {
		if e, ok := m.active[id]; !ok || e.exec == execReleased {
			m.out.acks = append(m.out.acks, id)
		}
	}
	for _, e := range m.sortedActive() {
		if e.j().State&job.Running != 0 {
			if err := m.advanceRunning(tx, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// advanceRunning (re)starts a job in RUN or CLEANUP whose shell may need
// the exec service: a job in CLEANUP that was started before a restart is
// reattached so its shell is seen to its end before resources are freed.
func (m *Manager) advanceRunning(tx *store.Tx, e *entry) error {
	if e.j().State == job.Cleanup && e.exec == execDetached {
		if err := m.start(tx, e); err != nil {
			return err
		}
	}
	return m.advance(tx, e)
}

func (m *Manager) respondExec(topic string) {
	msg, _ := wire.NewResponse(topic, nil)
	m.out.Exec = append(m.out.Exec, msg)
}

func (m *Manager) startResponse(tx *store.Tx, msg wire.Message) error {
	r, data, err := execproto.DecodeResponse(msg)
	if err != nil {
		return err
	}
	e, _ := m.lookup(r.ID)
	var ev execEvent
	switch d := data.(type) {
	case nil:
		ev = execStarted
	case *execproto.Exception:
		ev = execException
	case *execproto.Finish:
		ev = execFinished
	case *execproto.Release:
		ev = execRelease
		if d.Final {
			ev = execReleaseFinal
		}
	}
	if err := heardExec(e, r.ID, ev, msg.Topic); err != nil {
		return err
	}
	j := e.j()
	switch d := data.(type) {
	case nil: // start
		// A reattached job was started before the restart: one start only.
		if j.Started {
			return nil
		}
		if j.State != job.Run {
			return nil // an exception already ended it; the shell will be told
		}
		return m.post(tx, e, job.EventStart, nil)
	case *execproto.Exception:
		if d.Severity > 0 {
			// Taken back after a restart, a job's exceptions are
			// reported again: a note is posted once.
			if dup, err := m.records.HasException(tx, e.id(), d.Type, d.Severity, d.Note); err != nil || dup {
				return err
			}
		}
		ctx := map[string]any{"type": d.Type, "severity": d.Severity, "note": d.Note}
		if err := m.post(tx, e, job.EventException, ctx); err != nil {
			return err
		}
		if d.Severity == 0 {
			// The exec service raised a fatal one: it knows. A
			// non-fatal one leaves the job as it was, and a fatal
			// exception after it (a cancel) must still be sent.
			m.execGo(e, ev)
		}
		return m.advance(tx, e)
	case *execproto.Finish:
		if j.Finished || !j.Started {
			// A shell that ends before its start was posted (an
			// exception raced it) leaves nothing to finish.
			return nil
		}
		if d.Usage != nil {
			m.touch(e)
			// Stored beside the job, not in the event: RFC 21's finish
			// context is the status alone.
			if err := ops.SetUsage(tx, e.rec, *d.Usage); err != nil {
				return err
			}
		}
		return m.postAt(tx, e, job.EventFinish, map[string]any{"status": d.Status}, endedAt(d.Timestamp, j, m.now()))
	case *execproto.Release:
		ranks := d.Ranks
		if strings.TrimSpace(ranks) == "" {
			ranks = "all"
		}
		if err := m.post(tx, e, job.EventRelease, map[string]any{"ranks": ranks, "final": d.Final}); err != nil {
			return err
		}
		if d.Final {
			// RFC 32: the final release ends the stream; the end is
			// acknowledged after the commit.
			m.execGo(e, ev)
			return m.advance(tx, e)
		}
	}
	return nil
}

// endedAt is the time of a job's finish event: when its processes ended,
// as the exec service says, not when the end reached the job manager,
// which may be much later (an agent whose journal could not be written
// held its ends until it could), so that a job's run time is its
// processes'. It is kept after the job's start and its exception, so
// that the eventlog stays in order, and never later than now; without a
// time from the exec service it is now.
func endedAt(ended float64, j *job.Job, now float64) float64 {
	if ended <= 0 || ended > now {
		return now
	}
	floor := max(j.TRun, j.TStart)
	if ex := j.Exception; ex != nil {
		floor = max(floor, ex.Occurred)
	}
	return max(ended, floor)
}
