// Package writes is every write a user's request makes, bound once: for
// each method of the api table that changes something, the store
// transaction (internal/state) and the job manager's part
// (internal/jobmgr), in one function. The server runs an entry inside
// one of the loop's turns, with the loop's job manager; the direct
// transport runs the same entry in a store transaction of its own, with
// a manager of its own (Offline, made by Manager). Reads the store alone
// answers are bound beside them, in internal/state's table.
//
// The package sits in the loop's layer, below the transports: it imports
// the job manager and the operations, and both transports import it.
package writes

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Caller is who asks a write, as its transport established it from the
// connection (the socket's peer credentials, or the direct path's own
// process), never from the request.
type Caller struct {
	state.Caller
	StateDir string // the instance's state directory
	// Who is the requester for the reservation rules, when the entry
	// asks for it (Write.Identifies): the transport identifies the
	// caller before the turn, as that reads /proc and the job's folder.
	Who *reservation.Requester
	// MaxActive is [access] guest-max-active-jobs for a guest (0: no
	// cap; the owner has none).
	MaxActive int
	// Room refuses a guest's submission that would leave the store's
	// filesystem less than its reserve (the server's; nil: no reserve
	// to keep, as for the owner).
	Room func(jobspecs uint64, jobs int) error
}

// Turn is where a write runs: one store transaction, and the job
// manager that hears of the change in that same transaction.
type Turn struct {
	Tx     *store.Tx
	JM     *jobmgr.Manager
	Caller Caller
	then   []func(context.Context) error
}

// Then has fn run once the turn has committed, by whichever transport
// ran it: what must not happen for a change that could still be lost
// (a purged job's folder, a signal to a job's processes).
func (t *Turn) Then(fn func(context.Context) error) { t.then = append(t.then, fn) }

// Committed runs what the turn left for after its commit, in order, and
// returns what failed: the transport logs it or leaves it to the next
// fluxsched start.
func (t *Turn) Committed(ctx context.Context) []error {
	var errs []error
	for _, fn := range t.then {
		if err := fn(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	t.then = nil
	return errs
}

// identify says when an entry needs the caller identified for the
// reservation rules.
type identify int

const (
	never     identify = iota
	ifClaimed          // only when the caller claims a job (FLUXQ_JOB_ID) or to be a scheduler
	always
)

// Write is one entry of the table.
type Write struct {
	api.Spec
	identify identify
	// loads: the direct path's manager takes up the store's active jobs
	// first (the entry acts on jobs the manager must hold).
	loads bool
	// loop: only a running instance can answer (its scheduler decides).
	loop bool
	// many: the entry may change every active job in one turn, whose
	// garbage is of the order of the live heap (Bursts).
	many bool
	bind func(params func(any) error) (func(*Turn) (any, error), error)
}

// Identifies says whether the caller must be identified (Caller.Who)
// before the entry runs; claimed is whether it claims a job or to be a
// scheduler.
func (w *Write) Identifies(claimed bool) bool {
	return w.identify == always || (w.identify == ifClaimed && claimed)
}

// NeedsLoop says that only a running instance answers the entry: the
// direct path refuses it (api.ErrNeedsInstance).
func (w *Write) NeedsLoop() bool { return w.loop }

// Bursts says that the entry may change every active job in one turn (a
// cancel of them all), making garbage of the order of the live heap: the
// server lifts the collector's memory limit while it runs (gcpace.Burst),
// as for a listing. Under the limit a cancel of 100,000 pending jobs
// spent as much CPU collecting as cancelling.
func (w *Write) Bursts() bool { return w.many }

// Bind decodes the request's parameters (params fills a pointer to the
// entry's parameter type) and returns the write to run in a turn. The
// server decodes before the loop's turn, so a large submission's parsing
// does not hold up the loop.
func (w *Write) Bind(params func(any) error) (func(*Turn) (any, error), error) {
	return w.bind(params)
}

var table = map[string]*Write{}

// Of is the write that answers a method, if it is one.
func Of(name string) (*Write, bool) {
	w, ok := table[name]
	return w, ok
}

// write binds a table entry to its write.
func write[P, R, S any](m api.Method[P, R, S], w Write, fn func(*Turn, P) (R, error)) {
	if m.ReadOnly {
		panic("writes: " + m.Name + " is read-only")
	}
	if _, dup := table[m.Name]; dup {
		panic("writes: " + m.Name + " is bound twice")
	}
	w.Spec = m.Spec
	w.bind = func(params func(any) error) (func(*Turn) (any, error), error) {
		var p P
		if err := params(&p); err != nil {
			return nil, err
		}
		return func(t *Turn) (any, error) { return fn(t, p) }, nil
	}
	table[m.Name] = &w
}

// Manager is the direct path's job manager for w, in tx: an offline one
// over the store's reservations, holding the store's active jobs when the
// entry acts on them. What it would tell a scheduler or an exec service
// is for the next loop to say, once it loads the jobs. As the loop's, it
// saves a changed job's summary once per transaction, not once per event
// (jobmgr.DeferSummaries): the caller calls its SaveSummaries once the
// write has run, before the commit (a cancel of 100,000 pending jobs
// encoded and stored 200,000 summaries, 1.3 s of CPU, for 100,000).
func (w *Write) Manager(tx *store.Tx, owner uint32, now func() time.Time) (*jobmgr.Manager, error) {
	res, err := state.ReservationsOrEmpty(tx)
	if err != nil {
		return nil, fmt.Errorf("reservations: %w", err)
	}
	jm := jobmgr.New(jobmgr.Config{Owner: owner, Now: now, Reservations: res, Offline: true})
	jm.DeferSummaries()
	if w.loads {
		if err := jm.Load(tx); err != nil {
			return nil, err
		}
	}
	return jm, nil
}
