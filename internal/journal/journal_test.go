package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
)

func open(t *testing.T, path string) *Journal {
	t.Helper()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close(false) })
	return j
}

func launch(id fluid.ID, v string) Entry {
	return Entry{Op: OpLaunch, ID: id, Data: json.RawMessage(fmt.Sprintf(`{"v":%q}`, v))}
}

func end(id fluid.ID, status int) Entry {
	return Entry{Op: OpEnd, ID: id, Data: json.RawMessage(fmt.Sprintf(`{"status":%d}`, status))}
}

func ack(id fluid.ID) Entry { return Entry{Op: OpAck, ID: id} }

// state renders Jobs for comparison: id -> "launch|end".
func state(j *Journal) map[fluid.ID]string {
	out := map[fluid.ID]string{}
	for _, job := range j.Jobs() {
		out[job.ID] = string(job.Launch) + "|" + string(job.End)
	}
	return out
}

func TestReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.journal")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Commit(launch(1, "a"), launch(2, "b"), launch(3, "c")); err != nil {
		t.Fatal(err)
	}
	if err := j.Commit(end(1, 0), launch(2, "b2"), end(3, 256)); err != nil {
		t.Fatal(err)
	}
	j.Append([]Entry{ack(3), ack(99)}, false, nil) // an ack costs no sync; 99 is unknown
	want := map[fluid.ID]string{1: `{"v":"a"}|{"status":0}`, 2: `{"v":"b2"}|`}
	if err := j.Close(true); err != nil { // live jobs: the file stays
		t.Fatal(err)
	}
	j = open(t, path)
	if diff := cmp.Diff(want, state(j)); diff != "" {
		t.Errorf("replayed (-want +got):\n%s", diff)
	}
}

// The last entry of an agent that died inside a write is dropped, and the
// next entry is not glued to it.
func TestTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.journal")
	j, _ := Open(path)
	j.Commit(launch(1, "a"), launch(2, "b"))
	j.Close(false)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"op":"end","id":1,"da`)
	f.Close()

	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[fluid.ID]string{1: `{"v":"a"}|`, 2: `{"v":"b"}|`}, state(j)); diff != "" {
		t.Errorf("after a torn tail (-want +got):\n%s", diff)
	}
	j.Commit(end(2, 9))
	j.Close(false)
	j = open(t, path)
	if diff := cmp.Diff(map[fluid.ID]string{1: `{"v":"a"}|`, 2: `{"v":"b"}|{"status":9}`}, state(j)); diff != "" {
		t.Errorf("appended after a torn tail (-want +got):\n%s", diff)
	}
}

// Appends made while a write is under way share the next write and sync.
func TestGroupCommit(t *testing.T) {
	j := open(t, filepath.Join(t.TempDir(), "b.journal"))
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	j.mu.Lock()
	j.hookWrite = func() {
		select {
		case entered <- struct{}{}:
			<-gate // hold the first write until the burst is queued
		default:
		}
	}
	j.mu.Unlock()
	first := make(chan error)
	go func() { first <- j.Commit(launch(1, "first")) }()
	<-entered
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := j.Commit(launch(fluid.ID(i+2), "x")); err != nil {
				t.Error(err)
			}
		})
	}
	// Every Commit of the burst has queued once pending holds n lines.
	for {
		j.mu.Lock()
		k := len(j.entries)
		j.mu.Unlock()
		if k == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	entered <- struct{}{} // later writes do not wait
	close(gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	j.mu.Lock()
	syncs := j.syncs
	j.mu.Unlock()
	if syncs != 2 {
		t.Errorf("%d appends in a burst took %d syncs, want 2 (the first, then one for the burst)", n+1, syncs)
	}
	if got := j.Len(); got != n+1 {
		t.Errorf("%d live jobs, want %d", got, n+1)
	}
}

func TestCompaction(t *testing.T) {
	defer func(old int64) { compactMin = old }(compactMin)
	compactMin = 4 << 10
	path := filepath.Join(t.TempDir(), "b.journal")
	j, _ := Open(path)
	j.Commit(launch(1, "long-running"))
	for i := fluid.ID(2); i < 500; i++ {
		j.Commit(launch(i, "short"), end(i, 0))
		j.Append([]Entry{ack(i)}, false, nil)
	}
	j.Commit(end(1, 15))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The room reserved past the entries reads as zeros: not entries.
	if n := int64(len(bytes.TrimRight(b, "\x00"))); n > 2*compactMin {
		t.Errorf("journal holds %d bytes of entries after 500 jobs, want it compacted below %d", n, 2*compactMin)
	}
	j.Close(false)
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("compaction left its temporary file: %v", err)
	}
	j = open(t, path)
	if diff := cmp.Diff(map[fluid.ID]string{1: `{"v":"long-running"}|{"status":15}`}, state(j)); diff != "" {
		t.Errorf("after compaction (-want +got):\n%s", diff)
	}
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.journal")
	open(t, path)
	if _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open = %v, want ErrLocked", err)
	}
}

func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, "old.journal")
	d, _ := Open(dead)
	d.Commit(launch(7, "running"), launch(8, "ended"), end(8, 0), launch(9, "acked"), end(9, 0))
	d.Append([]Entry{ack(9)}, false, nil)
	d.Close(true)
	sock := filepath.Join(dir, "old.sock")
	os.WriteFile(sock, nil, 0o600)

	j := open(t, filepath.Join(dir, "new.journal"))
	j.Commit(launch(1, "mine"))
	got, err := j.Adopt(dead, sock)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b Job) int { return int(a.ID) - int(b.ID) })
	if len(got) != 2 || got[0].ID != 7 || got[0].End != nil || got[1].ID != 8 || string(got[1].End) != `{"status":0}` {
		t.Errorf("adopted %+v, want 7 running and 8 ended", got)
	}
	for _, p := range []string{dead, sock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after the adoption: %v", p, err)
		}
	}
	want := map[fluid.ID]string{1: `{"v":"mine"}|`, 7: `{"v":"running"}|`, 8: `{"v":"ended"}|{"status":0}`}
	if diff := cmp.Diff(want, state(j)); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}

	// A live agent's journal is left alone.
	live := open(t, filepath.Join(dir, "live.journal"))
	live.Commit(launch(20, "x"))
	if _, err := j.Adopt(filepath.Join(dir, "live.journal")); !errors.Is(err, ErrLocked) {
		t.Errorf("adopting a locked journal = %v, want ErrLocked", err)
	}
	if _, ok := state(j)[20]; ok {
		t.Error("a live agent's job was merged")
	}
}

// smallDisk mounts a small tmpfs for a test (root only).
func smallDisk(t *testing.T) string {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fillDisk fills dir's filesystem; removing the file it returns frees it.
func fillDisk(t *testing.T, dir string) string {
	fill := filepath.Join(dir, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	return fill
}

// Room reserved in the journal keeps jobs launching and ending for a
// while on a full disk (fault_fullstate.txtar: a job launched just as the
// state directory fills up still runs and ends).
func TestFullDiskReserve(t *testing.T) {
	dir := smallDisk(t)
	path := filepath.Join(dir, "b.journal")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fill := fillDisk(t, dir)
	defer func() {
		os.Remove(fill) // so that a commit still waiting ends, and Close with it
		j.Close(false)
	}()
	done := make(chan error, 1)
	go func() {
		for i := fluid.ID(1); i <= 50; i++ {
			if err := j.Commit(launch(i, "on a full disk"), end(i, 0)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("50 launches and ends on a full disk still wait after 5 s: no room was reserved")
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("journal after the commits: %v, %v", st, err)
	}
}

// A full disk holds a commit back, silently, until space is freed; then
// the entry is in the file, whole.
func TestFullDiskRetried(t *testing.T) {
	defer func(a, b time.Duration, r int64) { retryMin, retryMax, reserveSize = a, b, r }(retryMin, retryMax, reserveSize)
	retryMin, retryMax = time.Millisecond, 20*time.Millisecond
	reserveSize = 4096 // less than the entry below
	dir := smallDisk(t)
	path := filepath.Join(dir, "b.journal")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close(false)
	fill := fillDisk(t, dir)
	big := Entry{Op: OpLaunch, ID: 1, Data: json.RawMessage(fmt.Sprintf(`{"v":"%08000d"}`, 1))}
	done := make(chan error, 1)
	go func() { done <- j.Commit(big) }()
	select {
	case err := <-done:
		t.Fatalf("commit on a full disk returned %v, want it to wait", err)
	case <-time.After(200 * time.Millisecond):
	}
	os.Remove(fill)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("commit still waiting 5 s after space was freed")
	}
	j.Close(false)
	j = open(t, path)
	if got := j.Jobs(); len(got) != 1 || string(got[0].Launch) != string(big.Data) {
		t.Errorf("after the retry the journal holds %d jobs, want the one entry whole", len(got))
	}
}
