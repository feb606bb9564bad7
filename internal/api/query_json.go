package api

import (
	"encoding/json"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
)

// jobsQueryWire is JobsQuery as it travels: the state mask and the results
// as their numbers. job.State and job.Result write themselves by name (a
// summary's "state": "SCHED"); a query's mask has always been a number.
type jobsQueryWire struct {
	States   uint       `json:"states"`
	Results  []uint     `json:"results,omitempty"`
	AllUsers bool       `json:"all_users"`
	UserID   *uint32    `json:"userid,omitempty"`
	Queues   []string   `json:"queues,omitempty"`
	IDs      []fluid.ID `json:"ids,omitempty"`
	Name     string     `json:"name,omitempty"`
	Count    int        `json:"count,omitempty"`
}

// MarshalJSON writes the query with its mask and results as numbers.
func (q JobsQuery) MarshalJSON() ([]byte, error) {
	w := jobsQueryWire{States: uint(q.States), AllUsers: q.AllUsers, UserID: q.UserID, Queues: q.Queues, IDs: q.IDs, Name: q.Name, Count: q.Count}
	if q.Results != nil {
		w.Results = make([]uint, len(q.Results))
		for i, r := range q.Results {
			w.Results[i] = uint(r)
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (q *JobsQuery) UnmarshalJSON(b []byte) error {
	var w jobsQueryWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*q = JobsQuery{States: job.State(w.States), AllUsers: w.AllUsers, UserID: w.UserID, Queues: w.Queues, IDs: w.IDs, Name: w.Name, Count: w.Count}
	if w.Results != nil {
		q.Results = make([]job.Result, len(w.Results))
		for i, r := range w.Results {
			q.Results[i] = job.Result(r)
		}
	}
	return nil
}
