package job

import (
	"encoding/json"
	"fmt"
)

// A job's state and result travel in summaries (the store, the socket,
// `fluxq jobs --json`) by their RFC 21 names, as flux jobs prints them:
// "SCHED", "COMPLETED". Masks in a query are numbers; see api.JobsQuery.

// MarshalJSON writes the state's name.
func (s State) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a state name, or a comma list of them; "" is no state.
func (s *State) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return fmt.Errorf("job state: want a name, got %s", b)
	}
	if name == "" {
		*s = 0
		return nil
	}
	st, err := ParseStates(name)
	if err != nil {
		return err
	}
	*s = st
	return nil
}

// MarshalJSON writes the result's name, "" for none.
func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// UnmarshalJSON reads a result name; "" is none.
func (r *Result) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return fmt.Errorf("job result: want a name, got %s", b)
	}
	if name == "" {
		*r = 0
		return nil
	}
	res, err := ParseResult(name)
	if err != nil {
		return err
	}
	*r = res
	return nil
}
