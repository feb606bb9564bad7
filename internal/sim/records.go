package sim

import (
	"encoding/json"
	"fmt"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	jobstate "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// sink is where the job manager keeps its records of the replay's jobs
// (jobmgr.Records): what the manager reads back, and what the replay's
// result needs, and nothing else. A live instance keeps every event and
// summary in its store; a replay's store is removed once it ends, and
// no one reads them, so encoding and storing them was a fifth of a
// replay (docs/simulation.md, "How it runs").
type sink struct {
	// jobspecs are the active jobs' jobspecs as admitted, for the alloc
	// and start requests; a job's goes once it is clean.
	jobspecs map[fluid.ID]json.RawMessage
	// parsed are the same jobspecs as values, which the scheduler takes
	// in its sched.alloc rather than parsing the bytes
	// (jobmgr.ParsedRecords).
	parsed map[fluid.ID]*jobspec.Jobspec
	// nonfatal are the active jobs' non-fatal exceptions, for
	// HasException.
	nonfatal map[fluid.ID][]jobstate.Exception
	// notes are the exception notes of jobs that never started (a
	// denied job's DENY note): what the job would have as its exception,
	// first fatal else first, as its eventlog replayed says.
	notes map[fluid.ID]string
}

func newSink() *sink {
	return &sink{jobspecs: map[fluid.ID]json.RawMessage{}, parsed: map[fluid.ID]*jobspec.Jobspec{}, nonfatal: map[fluid.ID][]jobstate.Exception{}, notes: map[fluid.ID]string{}}
}

// submitted takes the jobspecs of records just submitted
// (state.SubmitUnstored), before the job manager takes them up.
func (k *sink) submitted(recs []*state.Record) {
	for _, rec := range recs {
		k.jobspecs[rec.Job.ID] = rec.Raw
		k.parsed[rec.Job.ID] = rec.Parsed
		rec.Parsed = nil // kept here, as the bytes are, until the job is clean
	}
}

func (k *sink) Append(_ *store.Tx, rec *state.Record, ev eventlog.Event) error {
	if err := state.Apply(rec, ev); err != nil {
		return err
	}
	j := rec.Job
	switch ev.Name {
	case jobstate.EventException:
		if x := j.Exception; x != nil && !j.Started {
			k.notes[j.ID] = x.Note
		}
		if sev, _ := ev.Context["severity"].(int); sev > 0 {
			t, _ := ev.Context["type"].(string)
			n, _ := ev.Context["note"].(string)
			k.nonfatal[j.ID] = append(k.nonfatal[j.ID], jobstate.Exception{Type: t, Severity: sev, Note: n})
		}
	case jobstate.EventClean:
		delete(k.jobspecs, j.ID)
		delete(k.parsed, j.ID)
		delete(k.nonfatal, j.ID)
		if j.Started {
			delete(k.notes, j.ID)
		}
	}
	return nil
}

func (k *sink) SaveSummaries(*store.Tx, []*state.Record) error { return nil }

// PutR keeps the job's R as a value, without its JSON (rec.RawR): that is
// for a live exec service's start request and for replaying the job to a
// scheduler that says hello again, and the simulated exec service reads
// no R, and the replay's scheduler says hello once, before any job holds
// resources. Encoding every grant's R was a tenth of a replay.
func (k *sink) PutR(_ *store.Tx, rec *state.Record, r *rset.R) error {
	rec.R = r
	return nil
}

func (k *sink) Jobspec(_ *store.Tx, rec *state.Record) (json.RawMessage, error) {
	js, ok := k.jobspecs[rec.Job.ID]
	if !ok {
		return nil, fmt.Errorf("job %s: no jobspec", rec.Job.ID)
	}
	return js, nil
}

func (k *sink) ParsedJobspec(rec *state.Record) *jobspec.Jobspec { return k.parsed[rec.Job.ID] }

func (k *sink) HasException(_ *store.Tx, id fluid.ID, typ string, severity int, note string) (bool, error) {
	for _, x := range k.nonfatal[id] {
		if x.Type == typ && x.Severity == severity && x.Note == note {
			return true, nil
		}
	}
	return false, nil
}

// The scheduler takes the sink's parsed jobspecs (jobmgr.ParsedRecords).
var _ jobmgr.ParsedRecords = (*sink)(nil)
