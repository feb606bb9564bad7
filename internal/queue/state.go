package queue

import "fmt"

// State is a queue's administrative state, as the store keeps it.
// Started is what the instance does now; CheckpointStarted is what a
// restart comes back to (flux queue start/stop --nocheckpoint changes only
// the former).
type State struct {
	Enabled           bool   `json:"enable"`
	DisableReason     string `json:"disable_reason,omitempty"`
	Started           bool   `json:"start"`
	StopReason        string `json:"stop_reason,omitempty"`
	CheckpointStarted bool   `json:"checkpoint_start"`
}

// DefaultDisableReason is flux queue disable's reason when none is given.
const DefaultDisableReason = "disabled by administrator"

// Initial is a queue's state before any command: named queues start
// enabled and stopped, the anonymous one enabled and started (as Flux).
func Initial(named bool) State {
	return State{Enabled: true, Started: !named, CheckpointStarted: !named}
}

// Enable enables or disables submission.
func (s *State) Enable(on bool, reason string) {
	s.Enabled = on
	s.DisableReason = ""
	if !on {
		if reason == "" {
			reason = DefaultDisableReason
		}
		s.DisableReason = reason
	}
}

// Start starts or stops scheduling; nocheckpoint leaves the state a
// restart comes back to alone.
func (s *State) Start(on bool, reason string, nocheckpoint bool) {
	s.Started = on
	s.StopReason = ""
	if !on {
		s.StopReason = reason
	}
	if !nocheckpoint {
		s.CheckpointStarted = on
	}
}

// Restart is the state a new loop takes up: the checkpointed start state.
func (s State) Restart() State {
	if s.Started != s.CheckpointStarted {
		s.Started = s.CheckpointStarted
		if s.Started {
			s.StopReason = ""
		}
	}
	return s
}

// stateOf returns a queue's state, its initial one when none is stored.
func stateOf(states map[string]State, s *Set, name string) State {
	if st, ok := states[name]; ok {
		return st
	}
	return Initial(s.named)
}

// Scheduling reports whether a queue's jobs may be scheduled: the queue
// and every ancestor must be started. The reason names what stops it.
func (s *Set) Scheduling(states map[string]State, name string) (bool, string) {
	q, ok := s.queues[name]
	if !ok {
		return false, "no such queue"
	}
	st := stateOf(states, s, name)
	if !st.Started {
		return false, st.StopReason
	}
	for p := q.Parent; p != ""; p = s.queues[p].Parent {
		if !stateOf(states, s, p).Started {
			return false, fmt.Sprintf("parent queue '%s' is stopped", p)
		}
	}
	return true, ""
}

// SubmissionLine is flux queue status's submission line.
func SubmissionLine(st State) string {
	if st.Enabled {
		return "Job submission is enabled"
	}
	return "Job submission is disabled: " + st.DisableReason
}

// SchedulingLine is flux queue status's scheduling line for a queue.
func (s *Set) SchedulingLine(states map[string]State, name string) string {
	started, reason := s.Scheduling(states, name)
	switch {
	case started:
		return "Scheduling is started"
	case reason == "":
		return "Scheduling is stopped"
	}
	return "Scheduling is stopped: " + reason
}

// StateOf is a queue's state, its initial one when none is stored.
func (s *Set) StateOf(states map[string]State, name string) State { return stateOf(states, s, name) }

// Lookup resolves a queue named on the command line: with named queues a
// name is required unless all is set, and must exist (flux queue's
// messages). It returns the names to act on.
func (s *Set) Lookup(name string, all bool) ([]string, error) {
	switch {
	case all || (!s.named && name == ""):
		return s.names, nil
	case name == "":
		return nil, reject("Named queues are defined. Specify a queue or use --all.")
	}
	if _, ok := s.queues[name]; !ok || !s.named {
		return nil, reject("'%s' is not a valid queue", printable(name))
	}
	return []string{name}, nil
}
