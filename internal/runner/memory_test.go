package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
)

func TestOOMKillCount(t *testing.T) {
	tests := []struct {
		name, file string
		want       uint64
	}{
		{"v1 none", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", 0},
		{"v1 one", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", 1},
		{"v2", "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n", 2},
		{"v2 oom_group_kill is not oom_kill", "oom_group_kill 5\n", 0},
		{"old kernel without the line", "oom_kill_disable 0\nunder_oom 0\n", 0},
		{"empty", "", 0},
		{"garbage", "oom_kill lots\n", 0},
		{"no newline", "oom_kill 7", 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := oomKillCount([]byte(tc.file)); got != tc.want {
				t.Errorf("oomKillCount(%q) = %d, want %d", tc.file, got, tc.want)
			}
		})
	}
}

func FuzzOOMKillCount(f *testing.F) {
	f.Add([]byte("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"))
	f.Add([]byte("oom 1\noom_kill 18446744073709551615\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		oomKillCount(b) // never panics
	})
}

func TestOOMNote(t *testing.T) {
	tests := []struct {
		limit, kills uint64
		want         string
	}{
		{64 << 20, 1, "memory limit 64M exceeded: the kernel's OOM killer ended 1 process of the job"},
		{3 << 30, 2, "memory limit 3G exceeded: the kernel's OOM killer ended 2 processes of the job"},
	}
	for _, tc := range tests {
		if got := oomNote(tc.limit, tc.kills); got != tc.want {
			t.Errorf("oomNote(%d, %d) = %q, want %q", tc.limit, tc.kills, got, tc.want)
		}
	}
}

// memModes are the containments of modes(t) under which this machine
// enforces memory limits.
func memModes(t *testing.T) []string {
	var out []string
	for _, m := range modes(t) {
		h := newHarness(t, m)
		if how, why := h.r.Memory(); how != "" {
			out = append(out, m)
		} else {
			t.Logf("%s: memory limits not enforced: %s", m, why)
		}
	}
	if len(out) == 0 {
		t.Skip("no cgroup memory controller here")
	}
	return out
}

// A job over its limit ends with exception oom, once its processes are
// gone, with the status its tasks had; one under it, and one with no
// limit, end as they would anywhere; their memory cgroups go with them.
func TestMemoryLimit(t *testing.T) {
	const limit = 64 << 20
	hog := sh("head -c 400000000 /dev/zero | tail")
	small := sh("head -c 1000000 /dev/zero | tail | wc -c >/dev/null")
	for _, mode := range memModes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			tests := []struct {
				name    string
				command []string
				memory  uint64
				want    []summary
			}{
				{"over the limit", hog, limit, []summary{
					{Exc: TypeOOM + ": " + oomNote(limit, 1)},
					{Status: fjob.WaitStatusExited(137), Known: true}}},
				{"under the limit", small, limit, []summary{{Status: 0, Known: true}}},
				{"no limit", small, 0, []summary{{Status: 0, Known: true}}},
			}
			for i, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					h.t = t
					s := spec(t, fluid.ID(7100+i), jobspec.Options{Command: tc.command}, 1, "0")
					s.Memory = tc.memory
					rec := h.launch(s)
					if (rec.MemCgroup != "") != (tc.memory > 0 && !h.r.mem.v2) {
						t.Errorf("memory cgroup %q for a limit of %d", rec.MemCgroup, tc.memory)
					}
					if diff := cmp.Diff(tc.want, summarize(h.wait(s.ID))); diff != "" {
						t.Errorf("events (-want +got):\n%s", diff)
					}
					if rec.MemCgroup != "" {
						if _, err := os.Stat(rec.MemCgroup); !os.IsNotExist(err) {
							t.Errorf("memory cgroup %s left behind: %v", rec.MemCgroup, err)
						}
					}
				})
			}
		})
	}
}

// A memory cgroup made in Prepare goes with Discard.
func TestMemoryLimitDiscard(t *testing.T) {
	for _, mode := range memModes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			s := spec(t, 7200, jobspec.Options{Command: []string{"true"}}, 1, "0")
			s.Memory = 32 << 20
			rec, err := h.r.Prepare(s)
			if err != nil {
				t.Fatal(err)
			}
			h.r.Discard(s.ID)
			for _, d := range append(rec.Cgroup, rec.MemCgroup) {
				if d == "" || isSlot(d) {
					continue
				}
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("%s left behind: %v", d, err)
				}
			}
			if rec.MemCgroup != "" {
				if b, err := os.ReadFile(filepath.Join(filepath.Dir(rec.MemCgroup), "tasks")); err != nil || len(b) != 0 {
					t.Errorf("the parent memory cgroup holds tasks %q (%v)", b, err)
				}
			}
		})
	}
}

// A guest's job under a limit can neither lift it nor see another job's
// memory cgroup: it runs as the guest, and the cgroups are root's, the
// jobs' private (v1: the parent passable, not listable).
func TestGuestMemoryLimit(t *testing.T) {
	guest := nobody(t)
	dir := guestTree(t)
	h := newHarness(t, "auto")
	h.t = t
	if h.r.mem == nil || h.r.mem.v2 {
		t.Skip("no v1 memory cgroups here")
	}
	h.jobs = filepath.Join(dir, "jobs")
	h.r.opts.JobsDir = h.jobs
	other := spec(t, 7300, jobspec.Options{Command: []string{"sleep", "300"}}, 1, "0")
	other.Memory = 128 << 20
	orec := h.launch(other)
	// The guest's own memory cgroup, from /proc/self/cgroup and the
	// memory hierarchy's mount: the same path the runner made.
	script := `set -u
mine=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5 }' /proc/self/mountinfo)
echo "mine $mnt$mine"
echo 1073741824 > "$mnt$mine/memory.limit_in_bytes" && echo lifted
ls "$mnt$(dirname "$mine")" && echo listed
cat "$1/memory.usage_in_bytes" && echo seen
true`
	s := spec(t, 7301, jobspec.Options{Command: []string{"sh", "-c", script, "sh", orec.MemCgroup}, Cwd: filepath.Join(dir, "work")}, 1, "0")
	s.UserID = guest.Uid
	s.Memory = 64 << 20
	rec := h.launch(s)
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(s.ID))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	out := readFile(t, filepath.Join(h.dir(s.ID), "stdout"))
	if want := "mine " + rec.MemCgroup + "\n"; out != want {
		t.Errorf("stdout %q, want %q alone", out, want)
	}
	errs := readFile(t, filepath.Join(h.dir(s.ID), "stderr"))
	if n := strings.Count(errs, "ermission denied"); n != 3 {
		t.Errorf("stderr %q: want 3 refusals", errs)
	}
	h.r.Terminate(other.ID)
	h.wait(other.ID)
}

// The v2 files, on a directory that stands for a cgroup (this machine's
// v2 tree has no memory controller): the limit and swap.max 0 set, then
// lifted; the oom_kill count read from memory.events.
func TestMemoryV2Files(t *testing.T) {
	tests := []struct {
		name     string
		swap     bool
		limit    uint64
		max, swp string
	}{
		{"limit", true, 64 << 20, "67108864", "0"},
		{"lifted", true, 0, "max", "max"},
		{"no swap accounting", false, 1 << 30, "1073741824", "untouched"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"memory.max", "memory.swap.max"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("untouched"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m := &memLimits{v2: true, selfTasks: -1, swap: tc.swap}
			if err := m.limitV2(dir, tc.limit); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, "memory.max")); !strings.HasPrefix(got, tc.max) {
				t.Errorf("memory.max = %q, want %q", got, tc.max)
			}
			if got := readFile(t, filepath.Join(dir, "memory.swap.max")); !strings.HasPrefix(got, tc.swp) {
				t.Errorf("memory.swap.max = %q, want %q", got, tc.swp)
			}
		})
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memory.events"), []byte("low 0\nhigh 0\nmax 40\noom 2\noom_kill 2\noom_group_kill 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := oomKills(dir, true); n != 2 {
		t.Errorf("oomKills = %d, want 2", n)
	}
	if n := oomKills(dir, false); n != 0 {
		t.Errorf("oomKills of a v1 file that is not there = %d, want 0", n)
	}
	if err := (&memLimits{v2: true}).limitV2(filepath.Join(dir, "gone"), 1); err == nil {
		t.Error("limitV2 of a cgroup that is not there: no error")
	}
}

// A job adopted from a dead runner's record, which the OOM killer reaches
// after the adoption, ends with exception oom before its end, whose
// status is lost; its memory cgroup goes with it.
func TestMemoryLimitAdopted(t *testing.T) {
	const limit = 64 << 20
	for _, mode := range memModes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode)
			h.t = t
			cwd := t.TempDir()
			s := spec(t, 7400, jobspec.Options{Command: sh(`echo up > up; while [ ! -e go ]; do sleep 0.05; done; head -c 400000000 /dev/zero | tail`), Cwd: cwd}, 1, "0")
			s.Memory = limit
			rec := h.launch(s)
			if rec.Memory != limit {
				t.Errorf("record's memory %d, want %d", rec.Memory, limit)
			}
			waitFile(t, filepath.Join(cwd, "up"))
			h.r.Close()

			h2 := newHarness(t, mode)
			h2.t = t
			h2.r.Adopt(*rec)
			if err := os.WriteFile(filepath.Join(cwd, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			want := []summary{{Exc: TypeOOM + ": " + oomNote(limit, 1)}, {Known: false}}
			if diff := cmp.Diff(want, summarize(h2.wait(s.ID))); diff != "" {
				t.Errorf("adopted: events (-want +got):\n%s", diff)
			}
			for _, d := range append(slices.Clone(rec.Cgroup), rec.MemCgroup) {
				if d == "" || isSlot(d) {
					continue
				}
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("%s left behind: %v", d, err)
				}
			}
		})
	}
}

// An empty v1 memory cgroup a dead runner left (its record lost) goes
// when the next runner starts.
func TestMemoryLeftoverSwept(t *testing.T) {
	h := newHarness(t, "auto")
	if h.r.mem == nil || h.r.mem.v2 {
		t.Skip("no v1 memory cgroups here")
	}
	left := filepath.Join(h.r.mem.parent, "7500")
	if err := os.Mkdir(left, 0o700); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, "auto")
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("%s left behind by %s: %v", left, h2.r.mem.parent, err)
	}
}
