package state

import (
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/store"
)

// Caller is who asks, as an operation needs to know it: the server takes
// it from the socket's peer credentials, the direct path from the process.
type Caller struct {
	UID     uint32
	Owner   bool   // the instance owner
	JobsDir string // the state directory's jobs folder
	// RemoteOutput: jobs' output is kept by the exec agents of other
	// machines (a launcher for them), not in JobsDir.
	RemoteOutput bool
}

// A Reader is a read-only operation bound to its table entry: the server
// and the direct client both run it inside a read transaction of their
// own, so a read is written once, here.
type Reader struct {
	run func(tx *store.Tx, c Caller, params func(any) error) (any, error)
}

// Run answers the read: params fills the entry's parameter type (a
// pointer to it) from the request.
func (r Reader) Run(tx *store.Tx, c Caller, params func(any) error) (any, error) {
	return r.run(tx, c, params)
}

var readers = map[string]Reader{}

// read binds a table entry to the function that answers it.
func read[P, R, S any](m api.Method[P, R, S], fn func(*store.Tx, Caller, P) (R, error)) {
	if !m.ReadOnly {
		panic("state: " + m.Name + " is not read-only")
	}
	readers[m.Name] = Reader{run: func(tx *store.Tx, c Caller, params func(any) error) (any, error) {
		var p P
		if err := params(&p); err != nil {
			return nil, err
		}
		return fn(tx, c, p)
	}}
}

// ReaderOf is the read that answers a method, if it is one the store
// alone answers.
func ReaderOf(name string) (Reader, bool) {
	r, ok := readers[name]
	return r, ok
}

// The reads the store alone answers, on both paths. (Queues is not one:
// the loop's counts know the alloc requests outstanding.)
func init() {
	read(api.Jobs, func(tx *store.Tx, c Caller, q api.JobsQuery) ([]api.JobSummary, error) {
		list, err := ListJobs(tx, c.UID, q)
		ExplainPending(tx, list)
		Redact(c, list)
		return list, err
	})
	read(api.Job, func(tx *store.Tx, c Caller, p api.IDParams) (api.JobInfo, error) {
		info, err := ReadJob(tx, c, p)
		one := []api.JobSummary{info.Summary}
		ExplainPending(tx, one)
		info.Summary = one[0]
		return info, err
	})
	read(api.Stats, func(tx *store.Tx, _ Caller, _ api.None) (api.JobCounts, error) {
		st, err := CountJobs(tx)
		if err != nil {
			return api.JobCounts{}, err
		}
		return *st, nil
	})
	read(api.Resources, func(tx *store.Tx, _ Caller, _ api.None) (api.ResourceInfo, error) {
		res, err := LoadResources(tx)
		if err != nil {
			return api.ResourceInfo{}, err
		}
		return *res, nil
	})
	read(api.Reservations, func(tx *store.Tx, _ Caller, p api.ReservationsParams) (api.ReservationList, error) {
		l, err := StoredReservations(tx, p.All)
		if err != nil {
			return api.ReservationList{}, err
		}
		return *l, nil
	})
}

// ErrNotYours refuses a job's jobspec, eventlog and output to anyone but
// its owner and the instance owner, as Flux does (EPERM).
var ErrNotYours = api.Errorf(api.CodePermission, "permission denied: only the job's owner and the instance owner may read it")

// MayRead says whether c may read the whole of a job of owner.
func MayRead(c Caller, owner uint32) error {
	if c.Owner || c.UID == owner {
		return nil
	}
	return ErrNotYours
}

// Redact strips from a listing what c may not see of other users' jobs:
// the command line, the working directory and the exception's note (a
// note is free text: a cancel's message, or a launch error that names a
// path). What is left is what a shared machine shows everyone (id, user,
// name, queue, state, resources, times), as squeue does. It is the one
// place a listing is cut down for its reader, on both transports, so no
// field or format of any command can show more. A job's name stays: Flux
// shows it to all, and the owner chose it (by default the command's base
// name).
func Redact(c Caller, list []api.JobSummary) {
	for i := range list {
		s := &list[i]
		if MayRead(c, s.UserID) == nil {
			continue
		}
		s.Command, s.Cwd = nil, ""
		if s.Exception != nil && s.Exception.Note != "" {
			ex := *s.Exception // the stored one may be shared
			ex.Note = ""
			s.Exception = &ex
		}
	}
}

// ReadJob reads one job whole, for its owner or the instance owner.
func ReadJob(tx *store.Tx, c Caller, p api.IDParams) (api.JobInfo, error) {
	info, err := LoadJobInfo(tx, p.ID, c.JobsDir)
	if err != nil {
		return api.JobInfo{}, err
	}
	if err := MayRead(c, info.Summary.UserID); err != nil {
		return api.JobInfo{}, err
	}
	if c.RemoteOutput {
		info.JobDir, info.OutputRemote = "", true
	}
	return *info, nil
}

// MayFollow checks that a job exists and that c may read its events.
func MayFollow(tx *store.Tx, c Caller, id fluid.ID) error {
	owner, err := Owner(tx, id)
	if err != nil {
		return err
	}
	return MayRead(c, owner)
}
