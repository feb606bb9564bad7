package state

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/store"
)

// purgeStore stores n jobs, and ends those ended says (a fatal exception,
// then clean), the i-th at second 100-i: the last submitted ends first.
func purgeStore(t *testing.T, n int, ended func(i int) bool) (*store.Store, []fluid.ID) {
	t.Helper()
	st := openStore(t)
	var ids []fluid.ID
	err := st.Update(func(tx *store.Tx) error {
		reqs := make([]SubmitRequest, n)
		for i := range reqs {
			reqs[i] = SubmitRequest{Jobspec: spec(t, jobspec.Options{Command: []string{"true"}, Cwd: "/tmp"}), UserID: uint32(i), Urgency: 16}
		}
		var recs []*Record
		var err error
		ids, recs, err = Submit(tx, time.Unix(1, 0), reqs, nil)
		if err != nil {
			return err
		}
		for i, rec := range recs {
			if !ended(i) {
				continue
			}
			ts := float64(100 - i)
			if err := Post(tx, rec, eventlog.Event{Timestamp: ts, Name: "exception", Context: map[string]any{"type": "cancel", "severity": 0, "note": ""}}); err != nil {
				return err
			}
			if err := Post(tx, rec, eventlog.Event{Timestamp: ts, Name: "clean"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st, ids
}

func TestInactiveJobsAndPurgeJobs(t *testing.T) {
	st, ids := purgeStore(t, 4, func(i int) bool { return i != 2 })
	err := st.Update(func(tx *store.Tx) error {
		got, err := InactiveJobs(tx)
		if err != nil {
			return err
		}
		// Oldest first by the time they became inactive, not by id.
		var order []fluid.ID
		for _, j := range got {
			order = append(order, j.ID)
		}
		if want := []fluid.ID{ids[3], ids[1], ids[0]}; !slices.Equal(order, want) {
			t.Errorf("inactive jobs %v, want %v", order, want)
		}
		// All or none: an active job among them refuses the whole call.
		if err := PurgeJobs(tx, []fluid.ID{ids[0], ids[2]}); !errors.Is(err, ErrPurgeActive) {
			t.Errorf("purging an active job: %v", err)
		}
		if !tx.HasJob(uint64(ids[0])) {
			t.Error("a refused purge removed a job")
		}
		if err := PurgeJobs(tx, []fluid.ID{ids[0], 12345}); !errors.Is(err, ErrUnknownJob) {
			t.Errorf("purging an unknown job: %v", err)
		}
		if err := PurgeJobs(tx, []fluid.ID{ids[0], ids[3]}); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if tx.HasJob(uint64(id)) != (i == 1 || i == 2) {
				t.Errorf("job %d: in the store %v", i, tx.HasJob(uint64(id)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPurgeCheck(t *testing.T) {
	st, ids := purgeStore(t, 3, func(i int) bool { return i != 2 })
	st.View(func(tx *store.Tx) error {
		for _, tc := range []struct {
			name  string
			id    fluid.ID
			uid   uint32
			owner bool
			want  error
		}{
			{"its owner", ids[1], 1, false, nil},
			{"the instance owner", ids[1], 7, true, nil},
			{"another guest", ids[1], 0, false, ErrPurgeOthers},
			{"another guest, active", ids[2], 0, false, ErrPurgeOthers},
			{"active", ids[2], 2, false, ErrPurgeActive},
			{"unknown", 12345, 0, true, ErrUnknownJob},
		} {
			if _, err := PurgeCheck(tx, tc.id, tc.uid, tc.owner); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			}
		}
		return nil
	})
}

// A job folder is removed whole, and what a guest planted there (links to
// files and folders outside) is unlinked, never followed.
func TestRemoveJobFolder(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{outside, filepath.Join(jobs, "7", "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(jobs, "7", "stdout"), []byte("out"), 0o644)
	os.Symlink(secret, filepath.Join(jobs, "7", "link"))
	os.Symlink(outside, filepath.Join(jobs, "7", "sub", "dirlink"))
	// A job folder that is itself a link (it cannot be, the jobs folder
	// is the instance's, but if it were): the link goes, not its target.
	os.Symlink(outside, filepath.Join(jobs, "8"))

	if err := RemoveJobFolders(jobs, []fluid.ID{7, 8, 9}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"7", "8"} {
		if _, err := os.Lstat(filepath.Join(jobs, gone)); !os.IsNotExist(err) {
			t.Errorf("jobs/%s: %v", gone, err)
		}
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "keep" {
		t.Errorf("outside the folder: %q, %v", b, err)
	}
}

func TestOrphanFolders(t *testing.T) {
	st, ids := purgeStore(t, 2, func(int) bool { return true })
	jobs := filepath.Join(t.TempDir(), "jobs")
	for _, name := range []string{ids[0].String(), "x", "0", "007"} {
		os.MkdirAll(filepath.Join(jobs, name), 0o700)
	}
	for _, id := range ids {
		os.MkdirAll(JobDir(jobs, id), 0o700)
	}
	os.MkdirAll(JobDir(jobs, ids[1]+1000), 0o700) // never issued: not ours to judge
	st.Update(func(tx *store.Tx) error { return PurgeJobs(tx, ids[:1]) })
	st.View(func(tx *store.Tx) error {
		got, err := OrphanFolders(tx, jobs)
		if err != nil || !slices.Equal(got, ids[:1]) {
			t.Errorf("orphan folders %v (%v), want %v", got, err, ids[:1])
		}
		return nil
	})
}

// A big folder, and a deep one, go whole.
func TestRemoveJobFolderLarge(t *testing.T) {
	jobs := t.TempDir()
	top := JobDir(jobs, 9)
	deep := top
	for range 60 {
		deep = filepath.Join(deep, "d")
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if err := os.WriteFile(filepath.Join(top, "f"+strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(deep, "last"), []byte("x"), 0o400)
	os.Chmod(filepath.Dir(deep), 0o500) // not writable by its owner: root removes it all the same, and others get an error
	if err := RemoveJobFolder(jobs, 9); err != nil {
		if os.Geteuid() == 0 {
			t.Fatal(err)
		}
		os.Chmod(filepath.Dir(deep), 0o700)
		return
	}
	if _, err := os.Lstat(top); !os.IsNotExist(err) {
		t.Errorf("the folder is still there: %v", err)
	}
}

// A filesystem mounted in a job folder (a guest's FUSE mount) is not
// entered: its mount point is left, and reported.
func TestRemoveJobFolderStopsAtMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	jobs := t.TempDir()
	mnt := filepath.Join(JobDir(jobs, 9), "mnt")
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	inside := filepath.Join(mnt, "theirs")
	if err := os.WriteFile(inside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(JobDir(jobs, 9), "stdout"), []byte("out"), 0o600)
	err := RemoveJobFolder(jobs, 9)
	if err == nil || !strings.Contains(err.Error(), "mount point") {
		t.Errorf("removing a folder with a mount in it: %v", err)
	}
	if _, err := os.Stat(inside); err != nil {
		t.Errorf("the mounted filesystem was entered: %v", err)
	}
	if _, err := os.Stat(filepath.Join(JobDir(jobs, 9), "stdout")); !os.IsNotExist(err) {
		t.Errorf("the rest of the folder is left: %v", err)
	}
}
