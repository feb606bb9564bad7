// Package state holds the operations fluxq's users ask for — every read and
// every write each makes of the store — written once as work inside one
// store transaction, so that the loop (serving the socket) and a CLI
// opening the store directly (no loop running) do exactly the same thing:
// "submit now, schedule later". The reads the store alone answers are bound
// to their api table entries here (table.go), for the server and the direct
// client both.
//
// Every job event goes through Post, which applies it to the job's state
// (internal/job decides whether it may happen), appends it to the stored
// eventlog and refreshes the job's listing summary in the same transaction.
package state

import (
	"errors"
	"fmt"
	"slices"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/inorder"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// EventlogVersion is the RFC 21 eventlog format version in submit events.
const EventlogVersion = 1

// ErrUnknownJob is returned for an id with no job record (Flux's wording).
var ErrUnknownJob = api.ErrUnknownJob

// A damaged store (store.DamagedError, a record that does not decode) is
// its own kind, on the wire and on the direct path alike, so a command can
// tell it from a refusal. It is given here because api may not import the
// store, and both transports run the operations of this package.
func init() { api.Classify(store.ErrCorrupt, api.CodeStoreDamaged) }

// Record is everything stored about one job, decoded.
//
// Raw, Events and Summary are as they were stored when the record was
// loaded, for the reader that asked (fluxq info): they are not kept up to
// date as events are posted, and the job manager drops them from the
// records it keeps (Trim), reading the jobspec back from the store when it
// sends it.
type Record struct {
	Job     *job.Job
	Spec    Spec            // what is kept of the jobspec
	Raw     json.RawMessage // the jobspec as stored (canonical JSON)
	R       *rset.R         // nil until allocated
	RawR    json.RawMessage
	Events  []eventlog.Event
	Summary *Summary         // as stored; nil for a record that predates summaries
	Usage   *execproto.Usage // what its processes consumed; nil until it finished

	// Annotations are the scheduler's volatile annotations while the job
	// waits (RFC 27); once allocated, the alloc event's snapshot in Job
	// is what counts.
	Annotations map[string]any

	// Parsed is set by SubmitUnstored alone: the jobspec as admitted, as
	// a value, for a sink that keeps it (the simulator's, which hands it
	// to its scheduler in process). Nil in every record of a live
	// instance, which keeps no jobspec in memory.
	Parsed *jobspec.Jobspec

	// held is what Summarize derived from R, for R (an R is never changed
	// in place: a new one is a new pointer): the nodelist is costly to
	// build, and a job is summarized three to five times while it holds
	// the same R.
	held heldR
}

type heldR struct {
	r                     *rset.R
	nnodes, ncores, ngpus int
	nodelist              string
}

// Trim drops what the record holds as loaded for its reader alone (Raw,
// Events, Summary), for a holder that keeps it for as long as the job is
// active: the job manager.
func (rec *Record) Trim() {
	rec.Raw, rec.Events, rec.Summary = nil, nil, nil
}

// RawJobspec is the job's jobspec as stored: rec.Raw when the record holds
// it, else read from the store.
func RawJobspec(tx *store.Tx, rec *Record) (json.RawMessage, error) {
	if rec.Raw != nil {
		return rec.Raw, nil
	}
	raw, err := tx.JobValue(uint64(rec.Job.ID), store.JobJobspec)
	if err != nil {
		return nil, fmt.Errorf("job %s: stored jobspec: %w", rec.Job.ID, err)
	}
	return raw, nil
}

// Load reads and decodes a job's record.
func Load(tx *store.Tx, id fluid.ID) (*Record, error) {
	if !tx.HasJob(uint64(id)) {
		return nil, ErrUnknownJob
	}
	return Decode(id, func(key string) []byte {
		v, _ := tx.JobValue(uint64(id), key)
		return v
	})
}

// LoadAll is Load for each of ids, calling fn with each record in the
// order of ids; the first error stops it (an id with no job stops it
// before any job of its chunk is handed on). A start takes up every active
// job, and decoding their jobspecs and eventlogs one after the other was
// the most of it (100,000 pending jobs: 2 s of one core, the direct
// path's cancel --all included). So the values are read a chunk at a time
// in the transaction, which only its own goroutine may use, and decoded on
// every core; a chunk's copies are dropped before the next is read.
func LoadAll(tx *store.Tx, ids []fluid.ID, fn func(*Record) error) error {
	const chunk, piece = 8192, 256
	keys := [...]string{store.JobJobspec, store.JobEventlog, store.JobR, store.JobSummary, store.JobUsage}
	vals := make([][]byte, min(chunk, len(ids))*len(keys))
	nums := make([]uint64, 0, min(chunk, len(ids)))
	for len(ids) > 0 {
		now := ids[:min(chunk, len(ids))]
		ids = ids[len(now):]
		nums = nums[:0]
		for _, id := range now {
			nums = append(nums, uint64(id))
		}
		if err := tx.JobValues(nums, keys[:], vals); errors.Is(err, store.ErrNotFound) {
			for _, id := range now {
				if !tx.HasJob(uint64(id)) {
					return fmt.Errorf("job %s: %w", id, ErrUnknownJob)
				}
			}
			return err
		} else if err != nil {
			return err
		}
		// A piece that meets a record it cannot decode keeps those before
		// it, which are handed on before its error.
		type decoded struct {
			recs []*Record
			err  error
		}
		err := inorder.Each((len(now)+piece-1)/piece, func(p int) (decoded, error) {
			lo, hi := p*piece, min((p+1)*piece, len(now))
			d := decoded{recs: make([]*Record, 0, hi-lo)}
			for i := lo; i < hi && d.err == nil; i++ {
				var rec *Record
				rec, d.err = decode(now[i], func(key string) []byte {
					return vals[i*len(keys)+slices.Index(keys[:], key)]
				}, true)
				if d.err == nil {
					d.recs = append(d.recs, rec)
				}
			}
			return d, nil
		}, func(_ int, d decoded) error {
			for _, rec := range d.recs {
				if err := fn(rec); err != nil {
					return err
				}
			}
			return d.err
		})
		if err != nil {
			return err
		}
		clear(vals)
	}
	return nil
}

// Decode decodes a job's record from its stored values (get returns a
// value by its key, nil when absent): what Load does with a store's,
// and store recovery with values it salvaged.
func Decode(id fluid.ID, get func(key string) []byte) (*Record, error) {
	return decode(id, get, false)
}

// errNotJSON is a stored jobspec that a take-up found not to be JSON.
var errNotJSON = errors.New("not valid JSON")

// decode is Decode; with takeUp, the record of a job never allocated
// takes its Spec from its stored summary (specOfSummary) rather than
// from its jobspec parsed, whose bytes are then only checked to be JSON,
// so that a torn or overwritten jobspec still stops the take-up. Store
// checks (daemon's checkJobs) decode in full, holding the summary to the
// jobspec and eventlog.
func decode(id fluid.ID, get func(key string) []byte, takeUp bool) (*Record, error) {
	raw := get(store.JobJobspec)
	logb := get(store.JobEventlog)
	rawR := get(store.JobR)
	sum := get(store.JobSummary)
	usage := get(store.JobUsage)
	events, err := eventlog.Parse(logb)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	j, err := job.Replay(id, events)
	if err != nil {
		return nil, err
	}
	rec := &Record{Job: j, Raw: raw, Events: events}
	if len(sum) > 0 {
		rec.Summary = new(Summary)
		if err := json.Unmarshal(sum, rec.Summary); err != nil {
			return nil, fmt.Errorf("job %s: stored summary: %w", id, err)
		}
		if j.State&job.Pending != 0 {
			rec.Annotations = rec.Summary.Annotations
		}
	}
	var fromSummary bool
	if takeUp && len(rawR) == 0 {
		rec.Spec, fromSummary = specOfSummary(id, rec.Summary)
	}
	switch {
	case !fromSummary:
		js, err := jobspec.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("job %s: stored jobspec: %w", id, err)
		}
		rec.Spec = SpecOf(js)
	case !json.Valid(raw):
		return nil, fmt.Errorf("job %s: stored jobspec: %w", id, errNotJSON)
	}
	if len(rawR) > 0 {
		if rec.R, err = rset.Parse(rawR); err != nil {
			return nil, fmt.Errorf("job %s: stored R: %w", id, err)
		}
		rec.RawR = rawR
	}
	if len(usage) > 0 {
		rec.Usage = new(execproto.Usage)
		if err := json.Unmarshal(usage, rec.Usage); err != nil {
			return nil, fmt.Errorf("job %s: stored usage: %w", id, err)
		}
	}
	return rec, nil
}

// Post applies one event to rec's job and stores it, with the refreshed
// summary. The job is unchanged when the event is refused.
func Post(tx *store.Tx, rec *Record, ev eventlog.Event) error {
	if err := Append(tx, rec, ev); err != nil {
		return err
	}
	return SaveSummary(tx, rec)
}

// Append is Post without the summary: a caller posting several events
// of a job in one transaction saves its summary once, after the last
// (SaveSummary), before the transaction commits.
func Append(tx *store.Tx, rec *Record, ev eventlog.Event) error {
	line, err := apply(rec, ev)
	if err != nil {
		return err
	}
	return tx.AppendJobValue(uint64(rec.Job.ID), store.JobEventlog, line)
}

// Apply is Append for a job manager whose records go to a sink
// (jobmgr.Config.Records): the job moves as Append moves it, and the
// event is not encoded or stored.
func Apply(rec *Record, ev eventlog.Event) error {
	if err := rec.Job.Apply(ev); err != nil {
		return fmt.Errorf("job %s: %s: %w", rec.Job.ID, ev.Name, err)
	}
	return nil
}

// apply applies one event to rec's job and returns its eventlog line.
// The job is unchanged when the event is refused.
func apply(rec *Record, ev eventlog.Event) ([]byte, error) {
	if err := Apply(rec, ev); err != nil {
		return nil, err
	}
	line, err := eventlog.Append(nil, ev)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", rec.Job.ID, err)
	}
	return line, nil
}

// SetR stores a job's R. It must be stored before the alloc event is posted
// (RFC 27: R is committed before the allocation is announced).
func SetR(tx *store.Tx, rec *Record, raw json.RawMessage) error {
	r, err := rset.Parse(raw)
	if err != nil {
		return fmt.Errorf("job %s: R: %w", rec.Job.ID, err)
	}
	return PutR(tx, rec, r)
}

// PutR is SetR for an R already parsed: the job manager reads a SUCCESS's
// R once, to check it against the inventory, and stores what it checked.
func PutR(tx *store.Tx, rec *Record, r *rset.R) error {
	canon, err := r.MarshalJSON()
	if err != nil {
		return fmt.Errorf("job %s: R: %w", rec.Job.ID, err)
	}
	if err := tx.PutJobValue(uint64(rec.Job.ID), store.JobR, canon); err != nil {
		return err
	}
	rec.R, rec.RawR = r, canon
	return nil
}

// SetUsage stores what a job's processes consumed, beside its eventlog
// rather than in its finish event, whose context is RFC 21's. The summary
// shows it from the next event on (the finish that carries it).
func SetUsage(tx *store.Tx, rec *Record, u execproto.Usage) error {
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	if err := tx.PutJobValue(uint64(rec.Job.ID), store.JobUsage, b); err != nil {
		return err
	}
	rec.Usage = &u
	return nil
}

// SaveSummary stores rec's listing summary.
func SaveSummary(tx *store.Tx, rec *Record) error {
	b, err := summary(rec)
	if err != nil {
		return err
	}
	return tx.PutJobValue(uint64(rec.Job.ID), store.JobSummary, b)
}

// summaryPiece is how many summaries SaveSummaries encodes to a piece of
// work on one core.
const summaryPiece = 2048

// SaveSummaries stores the listing summaries of recs, as SaveSummary
// each, in order; many are encoded on every core (inorder) while they
// are stored one after another: a cancel of 100,000 jobs saves 100,000
// summaries in its turn, and encoding them was a sixth of it.
func SaveSummaries(tx *store.Tx, recs []*Record) error {
	if len(recs) < 2*summaryPiece {
		for _, rec := range recs {
			if err := SaveSummary(tx, rec); err != nil {
				return err
			}
		}
		return nil
	}
	pieces := (len(recs) + summaryPiece - 1) / summaryPiece
	return inorder.Each(pieces, func(i int) ([][]byte, error) {
		part := recs[i*summaryPiece : min((i+1)*summaryPiece, len(recs))]
		out := make([][]byte, len(part))
		for j, rec := range part {
			b, err := summary(rec)
			if err != nil {
				return nil, err
			}
			out[j] = b
		}
		return out, nil
	}, func(i int, sums [][]byte) error {
		for j, b := range sums {
			if err := tx.PutJobValue(uint64(recs[i*summaryPiece+j].Job.ID), store.JobSummary, b); err != nil {
				return err
			}
		}
		return nil
	})
}

// summary derives rec's listing summary and encodes it.
func summary(rec *Record) ([]byte, error) {
	return json.Marshal(Summarize(rec))
}

// Timestamp is the eventlog time for t.
func Timestamp(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
