package sim

import (
	"fmt"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// The simulated exec service (RFC 32 allows the job manager's exec
// service to be overridden): it starts a job the instant it is asked,
// and ends it at start + min(run time, requested time) in virtual time,
// with exception "timeout" first when the trace's run time is longer
// (docs/simulation.md: "killed at the requested time").
const execService = "sim-exec"

// Wait statuses of a simulated job's end: success, or killed by SIGALRM
// at its time limit, as the real exec service does (returncode 142).
const (
	statusOK      = 0
	statusTimeout = 14
)

// exec serves one message from the job manager.
func (s *simulation) exec(tx *store.Tx, m wire.Message) error {
	switch {
	case m.Type == wire.Response && m.Topic == execproto.TopicHello:
		if m.IsError() {
			return fmt.Errorf("exec-hello: %w", m.Err())
		}
		return nil
	case m.Type == wire.Request && m.Topic == execproto.Topic(execService, execproto.MethodStart):
		st, err := execproto.DecodeStart(m)
		if err != nil {
			return err
		}
		j, ok := s.byID[st.ID]
		if !ok || j.started {
			return fmt.Errorf("%s: start of job %s, which is not a waiting trace job", execService, st.ID)
		}
		j.started, j.start = true, s.now
		s.busy += j.cores
		s.seq++
		s.ends.push(end{at: s.now + min(j.run, j.requested), seq: s.seq, job: j})
		return s.respond(tx, j, execproto.TypeStart, nil)
	}
	// Exception and kill notifications need no answer: a simulated job
	// ends when the trace says, and the traces cancel nothing.
	return nil
}

// respond sends a start response of job j to the job manager.
func (s *simulation) respond(tx *store.Tx, j *simJob, typ string, data any) error {
	m := execproto.NewTypedResponse(execService, j.id, typ, data)
	if !s.wiring.typed {
		var err error
		if m, err = execproto.NewResponse(execService, j.id, typ, data); err != nil {
			return err
		}
	}
	if s.wiring.tap != nil {
		s.wiring.tap(false, m)
	}
	if err := s.jm.ExecMessage(tx, m); err != nil {
		return fmt.Errorf("job manager: %w", err)
	}
	return nil
}

// endsNow reports whether a job ends at the current instant.
func (s *simulation) endsNow() bool { return s.ends.Len() > 0 && s.ends[0].at == s.now }

// endJobs ends every job due now and carries the job manager's frees to
// the scheduler (no pass).
func (s *simulation) endJobs(tx *store.Tx) error {
	for s.endsNow() {
		j := s.ends.pop().job
		status := statusOK
		if j.run > j.requested {
			status = statusTimeout
			if err := s.respond(tx, j, execproto.TypeException, execproto.Exception{Severity: 0, Type: "timeout", Note: "resource allocation expired"}); err != nil {
				return err
			}
		}
		if err := s.respond(tx, j, execproto.TypeFinish, execproto.Finish{Status: status}); err != nil {
			return err
		}
		if err := s.respond(tx, j, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true}); err != nil {
			return err
		}
		s.busy -= j.cores
		s.ended++
	}
	return s.pump(tx)
}

// sample records the machine's state after an instant, when it changed.
func (s *simulation) sample() {
	if !s.cfg.Samples {
		return
	}
	u := 0.0
	if s.cores > 0 {
		u = float64(s.busy) / float64(s.cores)
	}
	smp := Sample{T: float64(s.now), Utilization: u, Queued: s.eng.Scheduler().Pending()}
	if n := len(s.samples); n > 0 && s.samples[n-1].Utilization == smp.Utilization && s.samples[n-1].Queued == smp.Queued {
		return
	}
	s.samples = append(s.samples, smp)
}

// denyNotes gives each denied job the note of the exception its DENY
// raised: the scheduler's words for why it could never run, as the
// job's eventlog would say it (the sink keeps the note of every job that
// never started).
func (s *simulation) denyNotes() error {
	for _, j := range s.jobs {
		if !j.denied || j.refused != "" {
			continue // refused: never submitted
		}
		j.note = s.sink.notes[j.id]
	}
	return nil
}
