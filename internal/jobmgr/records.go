package jobmgr

import (
	"encoding/json"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Records is where the job manager keeps what it writes of a job as the
// job moves (its events, its listing summary, its R) and what it reads
// back of it (its jobspec, for the alloc and start requests; its
// exceptions, so an exec service that reports one again is heard once).
// These are the calls of a job's progress, the ones a replay makes for
// every job; the rarer paths (usage, retries, updates, purge,
// reservations) use the store through internal/state whatever Records
// says.
//
// Every live instance keeps its records in the store (the default, nil
// Config.Records): what the manager holds in memory is derived from what
// is durable, as docs/architecture.md requires. fluxsched sim, whose
// store no one reads and which is removed once the replay ends, gives
// the manager a sink that keeps only what the manager reads back
// (internal/sim; docs/simulation.md, "How it runs").
type Records interface {
	// Append applies ev to rec's job and records it (state.Append).
	Append(tx *store.Tx, rec *ops.Record, ev eventlog.Event) error
	// SaveSummaries records the listing summaries of recs
	// (state.SaveSummaries).
	SaveSummaries(tx *store.Tx, recs []*ops.Record) error
	// PutR records the job's R before its alloc event, and sets rec.R
	// and rec.RawR (state.PutR); a sink whose exec service reads no R
	// and whose scheduler never says hello again may leave RawR unset.
	PutR(tx *store.Tx, rec *ops.Record, r *rset.R) error
	// Jobspec is the job's jobspec as admitted (state.RawJobspec).
	Jobspec(tx *store.Tx, rec *ops.Record) (json.RawMessage, error)
	// HasException reports whether the job has an exception of this
	// type, severity and note (state.HasException).
	HasException(tx *store.Tx, id fluid.ID, typ string, severity int, note string) (bool, error)
}

// ParsedRecords is a Records that also keeps each active job's jobspec as
// a value (the simulator's sink, from state.SubmitUnstored's
// Record.Parsed). With Config.Typed a sched.alloc then carries it beside
// its bytes (schedproto.Alloc.Parsed), and the scheduler in the same
// process parses nothing.
type ParsedRecords interface {
	Records
	// ParsedJobspec is the job's jobspec as admitted, the one Jobspec
	// returns, as a value; nil when it is not kept.
	ParsedJobspec(rec *ops.Record) *jobspec.Jobspec
}

// parsedJobspec is the job's jobspec as a value for a typed sched.alloc,
// nil when the messages are JSON or the records keep none.
func (m *Manager) parsedJobspec(e *entry) *jobspec.Jobspec {
	if !m.cfg.Typed {
		return nil
	}
	if pr, ok := m.records.(ParsedRecords); ok {
		return pr.ParsedJobspec(e.rec)
	}
	return nil
}

// storeRecords keeps a job's records in the store: every live instance's.
type storeRecords struct{}

func (storeRecords) Append(tx *store.Tx, rec *ops.Record, ev eventlog.Event) error {
	return ops.Append(tx, rec, ev)
}

func (storeRecords) SaveSummaries(tx *store.Tx, recs []*ops.Record) error {
	return ops.SaveSummaries(tx, recs)
}

func (storeRecords) PutR(tx *store.Tx, rec *ops.Record, r *rset.R) error {
	return ops.PutR(tx, rec, r)
}

func (storeRecords) Jobspec(tx *store.Tx, rec *ops.Record) (json.RawMessage, error) {
	return ops.RawJobspec(tx, rec)
}

func (storeRecords) HasException(tx *store.Tx, id fluid.ID, typ string, severity int, note string) (bool, error) {
	return ops.HasException(tx, id, typ, severity, note)
}
