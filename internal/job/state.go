// Package job holds the rules of a job's life (RFC 21): its states, the
// events that move it between them, its result, and priority from urgency.
// Transitions are pure functions of a job and an event, so replaying a job's
// eventlog always reproduces its state, after a crash as much as in a test.
package job

import (
	"fmt"
	"strings"
)

// State is an RFC 21 job state. The values are bits, as in flux-core, so a
// set of states (a filter like "pending,running") is one mask.
type State uint

// The RFC 21 states in life order.
const (
	New      State = 1 << iota // submitted, not yet validated
	Depend                     // waiting for dependencies
	Priority                   // waiting for a priority
	Sched                      // waiting for resources
	Run                        // resources allocated; shells start and run
	Cleanup                    // finished or excepted; releasing
	Inactive                   // done; the record is read-only
)

// The RFC 21 virtual states.
const (
	Pending State = Depend | Priority | Sched
	Running State = Run | Cleanup
	Active  State = Pending | Running
	All     State = New | Active | Inactive
)

var stateNames = []struct {
	s     State
	name  string
	abbr  string
	virtu bool
}{
	{New, "NEW", "N", false},
	{Depend, "DEPEND", "D", false},
	{Priority, "PRIORITY", "P", false},
	{Sched, "SCHED", "S", false},
	{Run, "RUN", "R", false},
	{Cleanup, "CLEANUP", "C", false},
	{Inactive, "INACTIVE", "I", false},
	{Pending, "PENDING", "", true},
	{Running, "RUNNING", "", true},
	{Active, "ACTIVE", "", true},
}

// String returns the RFC 21 name of a single state ("SCHED"), or the names
// of a mask joined by commas.
func (s State) String() string {
	for _, n := range stateNames {
		if n.s == s {
			return n.name
		}
	}
	var parts []string
	for _, n := range stateNames {
		if !n.virtu && s&n.s != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("State(%d)", uint(s))
	}
	return strings.Join(parts, ",")
}

// Abbrev returns the one-letter form `flux jobs` prints in its ST column.
func (s State) Abbrev() string {
	for _, n := range stateNames {
		if n.s == s && !n.virtu {
			return n.abbr
		}
	}
	return "?"
}

// ParseStates reads a comma-separated list of state names, virtual states
// included and case ignored ("pending,running", "sched"), into a mask, as
// `flux jobs -f` does. "all" is every state.
func ParseStates(s string) (State, error) {
	var mask State
	for _, word := range strings.Split(s, ",") {
		word = strings.ToUpper(strings.TrimSpace(word))
		if word == "ALL" {
			mask |= All
			continue
		}
		found := false
		for _, n := range stateNames {
			if n.name == word {
				mask |= n.s
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("invalid state %q", strings.ToLower(word))
		}
	}
	return mask, nil
}
