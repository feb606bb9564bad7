package state

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	json "github.com/goccy/go-json"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// InactiveJob is an inactive job as purge orders them: by the time it
// became inactive (Flux purges the oldest first by that time, not by
// submission).
type InactiveJob struct {
	ID     fluid.ID
	UserID uint32
	T      float64 // t_inactive
}

// ErrPurgeActive refuses to purge a job that has not ended: its record is
// what its processes, its dependants and its waiters still need.
var ErrPurgeActive = errors.New("cannot purge an active job")

// ErrPurgeOthers refuses a guest another user's job.
var ErrPurgeOthers = api.Errorf(api.CodePermission, "permission denied: guests may purge only their own jobs")

// InactiveJobs lists the store's inactive jobs, oldest first (by the time
// each became inactive, then id). It reads the summaries alone.
func InactiveJobs(tx *store.Tx) ([]InactiveJob, error) {
	var out []InactiveJob
	err := tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
		if j, ok := inactiveOf(id, get(store.JobSummary)); ok {
			out = append(out, j)
		}
		return true, nil
	})
	SortInactive(out)
	return out, err
}

// inactiveOf reads a summary as an InactiveJob; ok is false for an active
// job, or one whose summary cannot be read (never purged on a guess).
func inactiveOf(id uint64, raw []byte) (InactiveJob, bool) {
	var s struct {
		State     job.State `json:"state"`
		UserID    uint32    `json:"userid"`
		TInactive float64   `json:"t_inactive"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.State != job.Inactive {
		return InactiveJob{}, false
	}
	return InactiveJob{ID: fluid.ID(id), UserID: s.UserID, T: s.TInactive}, true
}

// SortInactive orders inactive jobs as purge takes them.
func SortInactive(js []InactiveJob) {
	slices.SortFunc(js, func(a, b InactiveJob) int {
		switch {
		case a.T < b.T:
			return -1
		case a.T > b.T:
			return 1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

// PurgeCheck says whether uid may purge job id now: nil, ErrUnknownJob,
// ErrPurgeActive, or (a guest, another's job) ErrPurgeOthers. It reads
// the summary, which is what decides: a job is purged only once its
// INACTIVE state is committed.
func PurgeCheck(tx *store.Tx, id fluid.ID, uid uint32, owner bool) (InactiveJob, error) {
	raw, err := tx.JobValue(uint64(id), store.JobSummary)
	if err != nil {
		return InactiveJob{}, ErrUnknownJob
	}
	var s struct {
		UserID uint32 `json:"userid"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return InactiveJob{}, fmt.Errorf("job %s: stored summary: %w", id, err)
	}
	if !owner && s.UserID != uid {
		// Said before whether it is active: a guest learns nothing of
		// another's job.
		return InactiveJob{}, ErrPurgeOthers
	}
	j, ok := inactiveOf(uint64(id), raw)
	if !ok {
		return InactiveJob{}, ErrPurgeActive
	}
	return j, nil
}

// PurgeJobs removes inactive jobs' records from the store, all or none:
// the writes of fluxq purge and of retention ([job-manager]
// inactive-age-limit and inactive-num-limit). Every id must be an
// inactive job's (the caller selected them); an active one refuses the
// whole call. Nothing else in the store is indexed by a job: a pending
// job's dependency on a purged one was resolved when that one ended, and
// a later submission naming it is refused as naming an unknown job, as
// Flux refuses it. The job folders are the caller's to remove once the
// transaction has committed (RemoveJobFolder).
func PurgeJobs(tx *store.Tx, ids []fluid.ID) error {
	for _, id := range ids {
		raw, err := tx.JobValue(uint64(id), store.JobSummary)
		if err != nil {
			return fmt.Errorf("job %s: %w", id, ErrUnknownJob)
		}
		if _, ok := inactiveOf(uint64(id), raw); !ok {
			return fmt.Errorf("job %s: %w", id, ErrPurgeActive)
		}
	}
	for _, id := range ids {
		if err := tx.DeleteJob(uint64(id)); err != nil {
			return err
		}
	}
	return nil
}

// RemoveJobFolder removes a purged job's folder, <jobs>/<id>/, and all
// in it. A guest's folder is the guest's, and so is what is in it: the
// walk opens every folder relative to its parent with O_NOFOLLOW, so a
// symbolic link is unlinked, never followed, and a folder renamed or
// swapped for a link meanwhile leads nowhere else; it never crosses into
// another filesystem (a FUSE mount the guest made there), whose mount
// point is left, and reported. A folder that is not there (a job that
// wrote nothing) is no error.
func RemoveJobFolder(jobsDir string, id fluid.ID) error {
	if jobsDir == "" || id == 0 {
		return nil
	}
	parent, err := unix.Open(jobsDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "open", Path: jobsDir, Err: err}
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	if err := unix.Fstat(parent, &st); err != nil {
		return &os.PathError{Op: "stat", Path: jobsDir, Err: err}
	}
	name := strconv.FormatUint(uint64(id), 10)
	if err := removeAt(parent, name, st.Dev); err != nil {
		return fmt.Errorf("removing %s: %w", JobDir(jobsDir, id), err)
	}
	return nil
}

// removeAt removes name in folder dir, and what it holds, on filesystem
// dev only.
func removeAt(dir int, name string, dev uint64) error {
	err := unix.Unlinkat(dir, name, 0)
	switch {
	case err == nil, errors.Is(err, unix.ENOENT):
		return nil
	case !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM):
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Dev != dev {
		return fmt.Errorf("%s is another filesystem's mount point: left", name)
	}
	// Entries removed while the folder is read may make a filesystem skip
	// some: it is read again, from the start, while it is not empty.
	for pass := 0; ; pass++ {
		var first error
		for {
			names, rerr := f.Readdirnames(1024)
			for _, n := range names {
				if err := removeAt(fd, n, dev); err != nil && first == nil {
					first = fmt.Errorf("%s/%w", name, err)
				}
			}
			if rerr != nil || len(names) == 0 {
				break
			}
		}
		if first != nil {
			return first
		}
		err := unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
		switch {
		case err == nil, errors.Is(err, unix.ENOENT):
			return nil
		case !errors.Is(err, unix.ENOTEMPTY) || pass == 2:
			return err
		}
		if _, err := f.Seek(0, 0); err != nil {
			return err
		}
	}
}

// OrphanFolders lists the job folders in jobsDir whose job the store no
// longer has (a purge whose folder removal a crash interrupted): ids the
// store issued (at most its last job id) and holds no record of.
func OrphanFolders(tx *store.Tx, jobsDir string) ([]fluid.ID, error) {
	ents, err := os.ReadDir(jobsDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	last := tx.LastJobID()
	var out []fluid.ID
	for _, e := range ents {
		id, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil || id == 0 || id > last || strconv.FormatUint(id, 10) != e.Name() {
			continue
		}
		if !tx.HasJob(id) {
			out = append(out, fluid.ID(id))
		}
	}
	return out, nil
}

// RemoveJobFolders removes the folders of purged jobs, every one it can,
// and returns the first failure.
func RemoveJobFolders(jobsDir string, ids []fluid.ID) error {
	var first error
	for _, id := range ids {
		if err := RemoveJobFolder(jobsDir, id); err != nil && first == nil {
			first = err
		}
	}
	return first
}
