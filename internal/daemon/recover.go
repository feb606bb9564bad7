package daemon

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// What `fluxsched store check` and `fluxsched store recover` do: both
// read the store with no fluxsched holding it, and neither ever deletes
// a file (a damaged store is kept aside, renamed).

// HeldError is a store that a fluxsched (or a command) holds: check and
// recover refuse to run beside it.
type HeldError struct{ Path string }

func (e *HeldError) Error() string {
	return fmt.Sprintf("the store %s is in use (fluxsched is running, or a command holds it): stop fluxsched first", e.Path)
}

// Unwrap makes it a busy store (exit 69).
func (e *HeldError) Unwrap() error { return store.ErrBusy }

// lockStore takes the store's flock (shared to read, exclusive to
// replace), at once or not at all; nil file when there is no store.
func lockStore(path string, exclusive bool) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, &HeldError{Path: path}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// StoreCheck is what `fluxsched store check` found.
type StoreCheck struct {
	Path   string
	Exists bool
	Report *store.Report // the file's pages; nil when it does not exist
	// Jobs are the problems of single job records (a record that does
	// not decode, a summary that does not match its eventlog), found
	// when the pages are sound.
	Jobs []string
	// Backup is the backup's own report (nil: no backup), and its time.
	Backup     *store.Report
	BackupTime time.Time
}

// OK reports whether the store is sound, pages and records.
func (c *StoreCheck) OK() bool {
	return !c.Exists || (c.Report.OK() && len(c.Jobs) == 0)
}

// CheckStore checks the store of the state directory dir, every page and
// every job record, and its backup's pages. It refuses (*HeldError) while
// a fluxsched holds the store.
func CheckStore(dir string) (*StoreCheck, error) {
	path := filepath.Join(dir, state.StoreFile)
	out := &StoreCheck{Path: path}
	f, err := lockStore(path, false)
	if err != nil {
		return nil, err
	}
	if f != nil {
		defer f.Close()
		out.Exists = true
		if out.Report, err = store.CheckFile(path, true); err != nil {
			return nil, err
		}
		if out.Report.OK() {
			if out.Jobs, err = checkJobs(path); err != nil {
				return nil, err
			}
		}
	}
	backup := filepath.Join(dir, state.BackupFile)
	if fi, err := os.Stat(backup); err == nil {
		out.BackupTime = fi.ModTime()
		if out.Backup, err = store.CheckFile(backup, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkJobs reads every job record of a store whose pages are sound, as
// fluxsched and the listings would.
func checkJobs(path string) ([]string, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []string
	err = st.View(func(tx *store.Tx) error {
		return tx.ForEachJob(0, func(raw uint64, get func(string) []byte) (bool, error) {
			id := fluid.ID(raw)
			rec, err := state.Decode(id, get)
			if err != nil {
				out = append(out, fmt.Sprintf("job %s cannot be read: %v", id, trimJob(id, err)))
				return true, nil
			}
			want, _ := json.Marshal(state.Summarize(rec))
			if !sameJSON(want, get(store.JobSummary)) {
				out = append(out, fmt.Sprintf("job %s: its stored summary does not match its eventlog (listings show it from the eventlog; recover makes it again)", id))
			}
			return true, nil
		})
	})
	return out, err
}

// sameJSON compares two JSON values as values.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func trimJob(id fluid.ID, err error) string {
	msg := err.Error()
	if p := "job " + id.String() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}

// Recovery is what `fluxsched store recover` did.
type Recovery struct {
	Path       string
	Sound      bool   // the store was sound: nothing was done
	KeptAs     string // where the damaged file now is ("" when there was none)
	Restored   int    // jobs in the new store
	FromBackup int    // of which taken from the backup
	Lines      []string
	BackupTime time.Time // zero: no usable backup
}

// RecoverStore puts together a new store for dir from what can be read of
// the damaged one and, for what it lacks, its backup: every job record
// that reads (one line for each that does not), the other buckets whole
// from whichever file has them undamaged. Jobs taken from the backup that
// were active there get a fatal exception (state.Restore): what they did
// since the backup is unknown, so they are never started again. The
// damaged file is renamed fluxq.db.damaged-<time>, never deleted. A
// sound store is left alone. It refuses (*HeldError) while a fluxsched
// holds the store.
func RecoverStore(dir string, owner uint32, now time.Time) (*Recovery, error) {
	path := filepath.Join(dir, state.StoreFile)
	out := &Recovery{Path: path}
	// Shared while the records are read through bbolt (whose own lock is
	// shared too), then exclusive until the new store is in place.
	lock, err := lockStore(path, false)
	if err != nil {
		return nil, err
	}
	var cur *store.Salvaged
	if lock != nil {
		defer lock.Close()
		rep, err := store.CheckFile(path, true)
		if err != nil {
			return nil, err
		}
		if rep.OK() {
			if jobs, err := checkJobs(path); err != nil || len(jobs) == 0 {
				out.Sound = err == nil
				return out, err
			}
		}
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			return nil, &HeldError{Path: path}
		}
		if cur, err = store.Salvage(path); err != nil {
			return nil, err
		}
	}
	backupPath := filepath.Join(dir, state.BackupFile)
	var bk *store.Salvaged
	if fi, err := os.Stat(backupPath); err == nil {
		rep, err := store.CheckFile(backupPath, true)
		switch {
		case err != nil:
			out.Lines = append(out.Lines, fmt.Sprintf("the backup %s cannot be read (%v): not used", backupPath, err))
		case !rep.OK():
			out.Lines = append(out.Lines, fmt.Sprintf("the backup %s is damaged too (%s): not used", backupPath, rep.Problems[0]))
		default:
			if bk, err = store.Salvage(backupPath); err != nil {
				return nil, err
			}
			out.BackupTime = fi.ModTime()
		}
	}
	if cur != nil && bk == nil && len(cur.Root.Names) == 0 {
		// Nothing to put in a new store: leave the file as it is for
		// whoever can do better with it.
		why := "no bucket reads"
		if len(cur.Report.Problems) > 0 {
			why = cur.Report.Problems[0]
		}
		return nil, fmt.Errorf("nothing in the store %s can be read (%s) and there is no backup %s: nothing to recover; the file is left as it is", path, why, backupPath)
	}
	if cur == nil && bk == nil {
		return nil, fmt.Errorf("there is no store %s and no backup %s: nothing to recover", path, backupPath)
	}
	if cur == nil {
		cur = &store.Salvaged{Root: &store.Node{}, Report: &store.Report{}}
		out.Lines = append(out.Lines, fmt.Sprintf("there is no store %s: everything is taken from the backup of %s", path, stamp(out.BackupTime)))
	}
	for _, l := range cur.Losses {
		if l.JobID() == 0 {
			msg := fmt.Sprintf("%s: %s", l.Where, l.What)
			if bk != nil {
				msg += "; what it held is taken from the backup where the backup has it"
			}
			out.Lines = append(out.Lines, msg)
		}
	}
	root, err := merge(cur, bk, owner, now, out)
	if err != nil {
		return nil, err
	}
	// The folders of jobs the new store lacks (their records could not
	// be read) would be taken for a purge's leftovers and removed at the
	// next start: they are moved aside instead, with their output.
	jobsDir := filepath.Join(dir, state.JobsFolder)
	var unrestored []fluid.ID
	tmp := path + ".recovering"
	os.Remove(tmp) // a recovery that stopped half way; never the store
	if err := store.Write(tmp, root); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("writing the recovered store: %w", err)
	}
	rep, err := store.CheckFile(tmp, true)
	if err == nil && !rep.OK() {
		err = rep.Err(tmp)
	}
	if err == nil {
		// Open it as fluxsched would: the schema, the buckets.
		var st *store.Store
		if st, err = store.Open(tmp, store.Options{Timeout: time.Second}); err == nil {
			err = st.View(func(tx *store.Tx) error {
				var err error
				unrestored, err = state.OrphanFolders(tx, jobsDir)
				return err
			})
			if cerr := st.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("the recovered store does not check: %w", err)
	}
	if lock != nil {
		out.KeptAs = path + ".damaged-" + now.UTC().Format("20060102T150405Z")
		if err := os.Rename(path, out.KeptAs); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	if err := keepFolders(dir, jobsDir, unrestored, now, out); err != nil {
		return out, err
	}
	return out, store.SyncDir(dir)
}

// keepFolders moves the job folders of ids, jobs the recovered store does
// not have, from jobsDir into jobs.unrestored-<time> in dir, a line for
// each, so that fluxsched's start-up sweep of purged jobs' folders leaves
// their output alone.
func keepFolders(dir, jobsDir string, ids []fluid.ID, now time.Time, out *Recovery) error {
	if len(ids) == 0 {
		return nil
	}
	aside := filepath.Join(dir, state.JobsFolder+".unrestored-"+now.UTC().Format("20060102T150405Z"))
	if err := os.Mkdir(aside, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("keeping the folders of jobs not restored: %w", err)
	}
	for _, id := range ids {
		name := strconv.FormatUint(uint64(id), 10)
		if err := os.Rename(filepath.Join(jobsDir, name), filepath.Join(aside, name)); err != nil {
			return fmt.Errorf("keeping the folder of job %s, which was not restored: %w", id, err)
		}
		out.Lines = append(out.Lines, fmt.Sprintf("job %s was not restored: its folder is kept as %s", id, filepath.Join(aside, name)))
	}
	return store.SyncDir(jobsDir)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// merge puts the new tree together.
func merge(cur, bk *store.Salvaged, owner uint32, now time.Time, out *Recovery) (*store.Node, error) {
	root := &store.Node{Buckets: map[string]*store.Node{}}
	var bkRoot *store.Node
	if bk != nil {
		bkRoot = bk.Root
	}
	// The buckets other than jobs: whole, from the damaged file when it
	// has them undamaged, else from the backup.
	for _, name := range []string{"meta", "queues", "resources", "reservations", "tool-events"} {
		c, b := cur.Root.Bucket([]byte(name)), bkRoot.Bucket([]byte(name))
		pick := c
		if c == nil || damaged(c) {
			if b != nil {
				pick = b
				if c != nil {
					out.Lines = append(out.Lines, fmt.Sprintf("bucket %s is damaged: taken whole from the backup of %s", name, stamp(out.BackupTime)))
				}
			} else if c != nil {
				out.Lines = append(out.Lines, fmt.Sprintf("bucket %s is damaged and there is no backup: what could be read of it is kept", name))
			}
		}
		if pick != nil {
			root.Names = append(root.Names, []byte(name))
			root.Buckets[name] = pick
		}
	}
	if m := root.Bucket([]byte("meta")); m != nil {
		// Never issue an id or a reservation number twice: the higher of
		// the two files'.
		for _, key := range []string{"last-jobid", "last-alloc"} {
			hi := max(u64(cur.Root.Bucket([]byte("meta")).Get([]byte(key))), u64(bkRoot.Bucket([]byte("meta")).Get([]byte(key))))
			setKey(m, []byte(key), binary.BigEndian.AppendUint64(nil, hi))
		}
	}

	jobs := &store.Node{Buckets: map[string]*store.Node{}}
	root.Names = append(root.Names, []byte("jobs"))
	root.Buckets["jobs"] = jobs
	curJobs := cur.Jobs()
	var bkJobs *store.Node
	if bk != nil {
		bkJobs = bk.Jobs()
	}
	lostJobs := map[uint64]string{}
	for _, l := range cur.Losses {
		if id := l.JobID(); id != 0 {
			lostJobs[id] = l.What
		}
	}
	// A loss in job/ (schema 3) is of one kind of record, for the jobs
	// whose ids its pages could hold: each such job lost that record.
	if curJobs != nil {
		for _, name := range curJobs.Names {
			if len(name) != 8 {
				continue
			}
			id := binary.BigEndian.Uint64(name)
			for _, l := range cur.Losses {
				if _, ok := lostJobs[id]; !ok && l.Covers(id) {
					lostJobs[id] = fmt.Sprintf("its %s: %s", l.Record(), l.What)
				}
			}
		}
	}
	// Jobs only the backup has are taken when the damaged file lost
	// part of its jobs bucket (or the bucket itself): else the job was
	// purged since the backup, and stays purged.
	jobsLost := curJobs == nil || curJobs.Damaged
	ids := unionIDs(curJobs, bkJobs, jobsLost)
	for _, id := range ids {
		key := binary.BigEndian.AppendUint64(nil, id)
		fid := fluid.ID(id)
		var why string
		if c := curJobs.Bucket(key); c != nil {
			if lost, ok := lostJobs[id]; ok {
				why = lost
			} else if vals, err := state.Restore(fid, values(fid, c, out), false, owner, now, out.BackupTime); err == nil {
				addJob(jobs, key, vals)
				continue
			} else {
				why = trimJob(fid, err)
			}
		}
		if b := bkJobs.Bucket(key); b != nil {
			vals, err := state.Restore(fid, values(fid, b, out), true, owner, now, out.BackupTime)
			if err == nil {
				addJob(jobs, key, vals)
				out.FromBackup++
				if why != "" {
					out.Lines = append(out.Lines, fmt.Sprintf("job %s cannot be read (%s): taken from the backup of %s", fid, why, stamp(out.BackupTime)))
				}
				continue
			}
			if why == "" {
				why = trimJob(fid, err)
			}
		}
		out.Lines = append(out.Lines, fmt.Sprintf("job %s cannot be read (%s) and the backup does not have it: not restored; its record stays in the damaged file", fid, why))
	}
	out.Restored = len(jobs.Names)
	return root, nil
}

// damaged reports whether a salvaged bucket, or one inside it, lost
// pages.
func damaged(n *store.Node) bool {
	if n.Damaged {
		return true
	}
	for _, c := range n.Buckets {
		if damaged(c) {
			return true
		}
	}
	return false
}

func unionIDs(cur, bk *store.Node, withBackup bool) []uint64 {
	seen := map[uint64]bool{}
	var ids []uint64
	add := func(n *store.Node) {
		if n == nil {
			return
		}
		for _, k := range n.Names {
			if len(k) != 8 {
				continue
			}
			id := binary.BigEndian.Uint64(k)
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	add(cur)
	if withBackup {
		add(bk)
	}
	slices.Sort(ids)
	return ids
}

// values is a salvaged job's records by key. A key no job has (a name
// damaged on its page, which still read) cannot be stored: it is left
// out, and said so.
func values(fid fluid.ID, n *store.Node, out *Recovery) map[string][]byte {
	vals := make(map[string][]byte, len(n.Keys))
	for i, k := range n.Keys {
		if !store.IsJobRecord(string(k)) {
			out.Lines = append(out.Lines, fmt.Sprintf("job %s: its record %q is not one fluxq knows: left out", fid, k))
			continue
		}
		vals[string(k)] = n.Values[i]
	}
	return vals
}

func addJob(jobs *store.Node, key []byte, vals map[string][]byte) {
	n := &store.Node{}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if v := vals[k]; v != nil {
			n.Keys = append(n.Keys, []byte(k))
			n.Values = append(n.Values, v)
		}
	}
	jobs.Names = append(jobs.Names, key)
	jobs.Buckets[string(key)] = n
}

func setKey(n *store.Node, key, v []byte) {
	for i, k := range n.Keys {
		if bytes.Equal(k, key) {
			n.Values[i] = v
			return
		}
	}
	n.Keys = append(n.Keys, key)
	n.Values = append(n.Values, v)
}

func u64(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}
