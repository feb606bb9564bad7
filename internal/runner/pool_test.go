package runner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// poolHarness is a runner whose jobs run in slots of a pool (cgroup v2
// with user xattrs), or skips the test.
func poolHarness(t *testing.T) *harness {
	t.Helper()
	if !slices.Contains(modes(t), "cgroup2") {
		t.Skip("no usable cgroup v2")
	}
	h := newHarness(t, "cgroup2")
	h.t = t
	if !h.r.cg.pool {
		t.Skip("no user xattrs on cgroupfs: no pool")
	}
	return h
}

func mark(t *testing.T, dir string) string {
	t.Helper()
	var buf [64]byte
	n, err := unix.Getxattr(dir, jobAttr, buf[:])
	if err != nil {
		t.Fatalf("mark of %s: %v", dir, err)
	}
	return string(buf[:n])
}

func (h *harness) run(id fluid.ID, cmd []string) *Record {
	h.t.Helper()
	rec := h.launch(spec(h.t, id, jobspec.Options{Command: cmd}, 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(id))); diff != "" {
		h.t.Errorf("job %d: events (-want +got):\n%s", id, diff)
	}
	return rec
}

// A job's cgroup is a slot of the pool, marked with its id while it runs
// and free once it is empty, and reused by the next job: no cgroup is
// made or removed per job.
func TestPoolReuse(t *testing.T) {
	h := poolHarness(t)
	a := h.run(1400, sh(`exit 0`))
	if len(a.Cgroup) != 1 || !isSlot(a.Cgroup[0]) {
		t.Fatalf("cgroup %v, want a slot", a.Cgroup)
	}
	if got := mark(t, a.Cgroup[0]); got != freeMark {
		t.Errorf("after the job, the slot is marked %q", got)
	}
	b := h.run(1401, []string{"true"})
	if !slices.Equal(a.Cgroup, b.Cgroup) {
		t.Errorf("second job in %v, first in %v: the slot was not reused", b.Cgroup, a.Cgroup)
	}
}

// A slot killed through cgroup.kill is removed, not reused, and the jobs
// after it run.
func TestPoolKilled(t *testing.T) {
	h := poolHarness(t)
	rec := h.launch(spec(t, 1410, jobspec.Options{Command: sh(`exec sleep 30`)}, 1, "0"))
	h.r.Signal(1410, syscall.SIGKILL)
	want := []summary{{Status: fjob.WaitStatusSignaled(9), Known: true}}
	if diff := cmp.Diff(want, summarize(h.wait(1410))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(rec.Cgroup[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("killed slot %s left: %v", rec.Cgroup[0], err)
	}
	for i := range 3 {
		if b := h.run(fluid.ID(1411+i), []string{"true"}); slices.Equal(b.Cgroup, rec.Cgroup) {
			t.Errorf("job %d runs in the killed slot", 1411+i)
		}
	}
}

// A runner that starts takes into its pool the free, empty slots a dead
// runner left, never a slot another live runner holds, nor one that
// names a job, which the job's adopter removes once empty.
func TestPoolLeftovers(t *testing.T) {
	h := poolHarness(t)
	busy := h.launch(spec(t, 1420, jobspec.Options{Command: sh(`exec sleep 30`)}, 1, "0"))
	free := h.run(1421, []string{"true"})

	// A live runner's free slot is its own.
	live := newHarness(t, "cgroup2")
	live.t = t
	if n := len(live.r.cg.free); n != 0 {
		t.Errorf("a new runner took %d slots of a live one", n)
	}

	// The first runner dies: its locks go with its descriptors.
	h.r.cg.mu.Lock()
	dead := h.r.cg.free
	h.r.cg.free = nil
	h.r.cg.mu.Unlock()
	for _, s := range dead {
		s.close()
	}
	h.r.job(1420).slot.close()
	h.r.Close()

	h2 := newHarness(t, "cgroup2")
	h2.t = t
	var got []string
	for _, s := range h2.r.cg.free {
		got = append(got, s.dir)
	}
	if !slices.Contains(got, free.Cgroup[0]) || slices.Contains(got, busy.Cgroup[0]) {
		t.Errorf("pool %v, want %s and not %s", got, free.Cgroup[0], busy.Cgroup[0])
	}
	if b := h2.run(1422, []string{"true"}); !slices.Equal(b.Cgroup, free.Cgroup) {
		t.Errorf("job in %v, want the leftover %v", b.Cgroup, free.Cgroup)
	}

	// The busy slot's job, adopted, ends when killed; its slot goes.
	h2.r.Adopt(*busy)
	h2.r.Signal(1420, syscall.SIGKILL)
	if diff := cmp.Diff([]summary{{Known: false}}, summarize(h2.wait(1420))); diff != "" {
		t.Errorf("adopted: events (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(busy.Cgroup[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("adopted job's slot %s left: %v", busy.Cgroup[0], err)
	}
}

// A job whose runner died and whose record was lost is found by its
// slot: Strays returns it while its processes run (not when held, not
// twice, not when empty), and once adopted it ends when they are gone.
func TestStrays(t *testing.T) {
	h := poolHarness(t)
	cwd := t.TempDir()
	rec := h.launch(spec(t, 700, jobspec.Options{Command: sh(`echo up > up; exec sleep 30`), Cwd: cwd}, 1, "0"))
	waitFile(t, filepath.Join(cwd, "up"))
	h.run(701, []string{"true"}) // an empty slot, marked free
	j := h.r.job(700)
	h.r.Close()
	// As its agent's death leaves it: the slot's lock goes with the
	// process, here with the descriptor.
	j.mu.Lock()
	j.slot.close()
	j.mu.Unlock()

	h2 := newHarness(t, "cgroup2")
	h2.t = t
	none := func(fluid.ID) bool { return false }
	for _, tc := range []struct {
		name string
		held func(fluid.ID) bool
		want []fluid.ID
	}{
		{"held", func(id fluid.ID) bool { return id == 700 }, nil},
		{"stray", none, []fluid.ID{700}},
		{"locked by this runner already", none, nil},
	} {
		var got []fluid.ID
		for _, r := range h2.r.Strays(tc.held, true) {
			got = append(got, r.ID)
			if !r.Recovered || !slices.Equal(r.Cgroup, rec.Cgroup) {
				t.Errorf("%s: record %+v, want recovered, cgroup %v", tc.name, r, rec.Cgroup)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: strays %v, want %v", tc.name, got, tc.want)
		}
	}
	// Another runner (another agent) does not take it while it is held.
	h3 := newHarness(t, "cgroup2")
	if got := h3.r.Strays(none, true); len(got) != 0 {
		t.Errorf("a second runner found %+v", got)
	}
	h2.r.Adopt(Record{ID: 700, Cgroup: rec.Cgroup, Recovered: true})
	time.Sleep(300 * time.Millisecond)
	if got := h2.r.Running(); !slices.Equal(got, []fluid.ID{700}) {
		t.Errorf("running %v while its process runs", got)
	}
	// Its reattach names its limit: without R's times, none is taken;
	// with them, it is, once, and it ends the job.
	sp := spec(t, 700, jobspec.Options{Command: []string{"true"}}, 1, "0")
	if _, ok := h2.r.Limit(700, sp); ok {
		t.Error("a limit taken from an R without times")
	}
	now := time.Now()
	sp = withTimes(t, sp, now.Add(-time.Minute), now.Add(200*time.Millisecond))
	got, ok := h2.r.Limit(700, sp)
	if !ok || got.Expiration.Sub(now.Add(200*time.Millisecond)).Abs() > time.Millisecond || got.KillGrace != sp.KillGrace {
		t.Errorf("limit: %+v, %v", got, ok)
	}
	if _, ok := h2.r.Limit(700, sp); ok {
		t.Error("a second limit taken")
	}
	want := []summary{{Exc: "timeout: " + NoteTimeout}, {Known: false}}
	if diff := cmp.Diff(want, summarize(h2.wait(700))); diff != "" {
		t.Errorf("stray: events (-want +got):\n%s", diff)
	}
	if got := h3.r.Strays(none, true); len(got) != 0 {
		t.Errorf("after its end, strays %+v", got)
	}
}
