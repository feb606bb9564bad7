package daemon_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// stored makes a store in a new state directory with n pending jobs,
// and returns the directory and the ids.
func stored(t *testing.T, n int) (string, []fluid.ID) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, state.StoreFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []fluid.ID
	err = st.Update(func(tx *store.Tx) error {
		var err error
		ids, _, err = state.Submit(tx, time.Now(), submitRequests(t, n, []string{"true"}), nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir, ids
}

func backup(t *testing.T, dir string) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, state.StoreFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Backup(filepath.Join(dir, state.BackupFile)); err != nil {
		t.Fatal(err)
	}
}

// events is each job's event names, from the store.
func events(t *testing.T, dir string) map[fluid.ID][]string {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, state.StoreFile), store.Options{ReadOnly: true, FullCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[fluid.ID][]string{}
	err = st.View(func(tx *store.Tx) error {
		return tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
			evs, err := eventlog.Parse(get(store.JobEventlog))
			for _, e := range evs {
				out[fluid.ID(id)] = append(out[fluid.ID(id)], e.Name)
			}
			return true, err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRecoverStore(t *testing.T) {
	for _, tc := range []struct {
		name     string
		damage   func(t *testing.T, path string)
		backup   bool
		restored int
		fromBk   int
		restore  bool   // the backup's active jobs get the restore exception
		err      string // RecoverStore fails so
	}{
		{"sound", nil, true, 0, 0, false, ""},
		{"empty, with a backup", func(t *testing.T, p string) { os.Truncate(p, 0) }, true, 3, 3, true, ""},
		{"missing, with a backup", func(t *testing.T, p string) { os.Remove(p) }, true, 3, 3, true, ""},
		{"truncated, with a backup", func(t *testing.T, p string) { os.Truncate(p, 8192) }, true, 3, 3, true, ""},
		{"empty, no backup", func(t *testing.T, p string) { os.Truncate(p, 0) }, false, 0, 0, false, "nothing to recover; the file is left as it is"},
		{"missing, no backup", func(t *testing.T, p string) { os.Remove(p) }, false, 0, 0, false, "nothing to recover"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ids := stored(t, 3)
			if tc.backup {
				backup(t, dir)
			}
			path := filepath.Join(dir, state.StoreFile)
			if tc.damage != nil {
				tc.damage(t, path)
			}
			res, err := daemon.RecoverStore(dir, uint32(os.Getuid()), time.Now())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("RecoverStore = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.damage == nil {
				if !res.Sound {
					t.Fatalf("a sound store: %+v", res)
				}
				return
			}
			if res.Restored != tc.restored || res.FromBackup != tc.fromBk {
				t.Errorf("restored %d (%d from the backup), want %d (%d); lines %q", res.Restored, res.FromBackup, tc.restored, tc.fromBk, res.Lines)
			}
			if _, err := os.Stat(path); err == nil && res.KeptAs != "" {
				if _, err := os.Stat(res.KeptAs); err != nil {
					t.Errorf("the damaged file is not kept: %v", err)
				}
			}
			evs := events(t, dir)
			for _, id := range ids[:tc.restored] {
				names := evs[id]
				if tc.restore && (len(names) == 0 || names[len(names)-1] != job.EventException) {
					t.Errorf("job %s restored from the backup while pending: events %v, want a last exception", id, names)
				}
			}
			if got := len(evs); got != tc.restored {
				t.Errorf("%d jobs in the new store, want %d", got, tc.restored)
			}
			// The new store is whole: fluxsched would take it.
			if rep, err := store.CheckFile(path, true); err != nil || !rep.OK() {
				t.Errorf("the recovered store: %v %v", rep, err)
			}
		})
	}
}

// TestStoreHeld: check and recover refuse while the store is held.
func TestStoreHeld(t *testing.T) {
	dir, _ := stored(t, 1)
	st, err := store.Open(filepath.Join(dir, state.StoreFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var held *daemon.HeldError
	if _, err := daemon.CheckStore(dir); !errors.As(err, &held) || !errors.Is(err, store.ErrBusy) {
		t.Errorf("CheckStore = %v, want the store held", err)
	}
	if _, err := daemon.RecoverStore(dir, 0, time.Now()); !errors.As(err, &held) {
		t.Errorf("RecoverStore = %v, want the store held", err)
	}
}

// TestBackupAtStop: a clean stop leaves a backup with every job.
func TestBackupAtStop(t *testing.T) {
	opts := options(t, twoCores)
	d, err := daemon.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ids := submit(t, d, 2, "true")
	waitInactive(t, d, ids)
	d.Stop()
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	res, err := daemon.CheckStore(opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Backup == nil || !res.Backup.OK() || res.Backup.Jobs != 2 {
		t.Fatalf("after a clean stop: store %+v, backup %+v", res.Report, res.Backup)
	}
}
