package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/shell"
)

// withOutput is o with shell options output.KEY = V.
func withOutput(o jobspec.Options, kv map[string]any) jobspec.Options {
	o.Extra = map[string]any{"shell": map[string]any{"options": map[string]any{"output": kv}}}
	return o
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// output.limit (flux-shell-options(7)): the files of the job folder keep
// that much of the job's output; the rest is dropped with one non-fatal
// note per file, and the job ends as its tasks did. The owner's jobs keep
// everything by default; a file the job names is not capped.
func TestOutputLimit(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	write := "head -c 300000 /dev/zero; head -c 5000 /dev/zero >&2; exit 3"
	for _, tc := range []struct {
		name     string
		id       fluid.ID
		opts     map[string]any
		out, err int64
		notes    []summary
	}{
		{"default: none", 1400, nil, 300000, 5000, nil},
		{"1k", 1401, map[string]any{"limit": "1k"}, 1024, 1024, []summary{
			{Exc: "output: stdout: output.limit of 1k reached: the rest of the job's stdout is dropped"},
			{Exc: "output: stderr: output.limit of 1k reached: the rest of the job's stderr is dropped"},
		}},
		{"in bytes, over stderr", 1402, map[string]any{"limit": float64(100000)}, 100000, 5000, []summary{
			{Exc: "output: stdout: output.limit of 100000 reached: the rest of the job's stdout is dropped"},
		}},
		{"0 keeps nothing", 1403, map[string]any{"limit": "0"}, 0, 0, []summary{
			{Exc: "output: stdout: output.limit of 0 reached: the rest of the job's stdout is dropped"},
			{Exc: "output: stderr: output.limit of 0 reached: the rest of the job's stderr is dropped"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := jobspec.Options{Command: sh(write)}
			if tc.opts != nil {
				o = withOutput(o, tc.opts)
			}
			h.launch(spec(t, tc.id, o, 1, "0"))
			evs := summarize(h.wait(tc.id))
			want := append(append([]summary(nil), tc.notes...), summary{Status: fjob.WaitStatusExited(3), Known: true})
			// The two streams' notes come in the order their pipes filled.
			if diff := cmp.Diff(want, evs, sortNotes); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for _, f := range []struct {
				name string
				want int64
			}{{shell.StdoutFile, tc.out}, {shell.StderrFile, tc.err}} {
				path := filepath.Join(h.dir(tc.id), f.name)
				if _, err := os.Stat(path); os.IsNotExist(err) && f.want == 0 {
					continue // nothing written: no file
				}
				if got := fileSize(t, path); got != f.want {
					t.Errorf("%s holds %d bytes, want %d", f.name, got, f.want)
				}
			}
		})
	}

	// A file of the job's own is not stored output: not capped.
	out := filepath.Join(t.TempDir(), "mine")
	h.launch(spec(t, 1404, withOutput(jobspec.Options{Command: sh("head -c 300000 /dev/zero")},
		map[string]any{"limit": "1k", "stdout": map[string]any{"path": out}}), 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(1404))); diff != "" {
		t.Errorf("own file: events (-want +got):\n%s", diff)
	}
	if got := fileSize(t, out); got != 300000 {
		t.Errorf("own file holds %d bytes, want 300000", got)
	}
}

// sortNotes compares event lists with their notes in either order.
var sortNotes = cmp.Transformer("sortNotes", func(in []summary) []summary {
	out := append([]summary(nil), in...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Exc != "" && out[j-1].Exc != "" && out[j].Exc < out[j-1].Exc; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
})

// A guest's job keeps 10M of output by default, and no more whatever its
// jobspec asks; it may ask for less.
func TestGuestOutputLimit(t *testing.T) {
	guest := nobody(t)
	dir := guestTree(t)
	h := newHarness(t, "auto")
	h.t = t
	h.jobs = filepath.Join(dir, "jobs")
	h.r.opts.JobsDir = h.jobs
	for _, tc := range []struct {
		name string
		id   fluid.ID
		opts map[string]any
		want int64
	}{
		{"default", 1410, nil, jobspec.GuestOutputLimit},
		{"raised", 1411, map[string]any{"limit": "1G"}, jobspec.GuestOutputLimit},
		{"lowered", 1412, map[string]any{"limit": "64k"}, 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := jobspec.Options{Command: sh("head -c 12000000 /dev/zero"), Cwd: filepath.Join(dir, "work")}
			if tc.opts != nil {
				o = withOutput(o, tc.opts)
			}
			s := spec(t, tc.id, o, 1, "0")
			s.UserID = guest.Uid
			h.launch(s)
			want := []summary{
				{Exc: "output: stdout: output.limit of " + jobspec.FormatSize(uint64(tc.want)) + " reached: the rest of the job's stdout is dropped"},
				{Known: true},
			}
			if diff := cmp.Diff(want, summarize(h.wait(tc.id))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := fileSize(t, filepath.Join(h.dir(tc.id), shell.StdoutFile)); got != tc.want {
				t.Errorf("stdout holds %d bytes, want %d", got, tc.want)
			}
		})
	}
}

// A guest's output never takes the last 5% of its filesystem, which the
// agent's root rights could otherwise use: it is dropped there with a
// note, and the job ends as its tasks did, not FAILED for a full disk.
func TestGuestOutputReserve(t *testing.T) {
	guest := nobody(t)
	dir := guestTree(t)
	jobs := filepath.Join(dir, "jobs")
	h := tmpfsHarness(t, jobs, "size=4m,mode=0711")
	s := spec(t, 1420, jobspec.Options{Command: sh("head -c 8000000 /dev/zero; exit 2"), Cwd: filepath.Join(dir, "work")}, 1, "0")
	s.UserID = guest.Uid
	h.launch(s)
	var st syscall.Statfs_t
	if err := syscall.Statfs(jobs, &st); err != nil {
		t.Fatal(err)
	}
	reserve := uint64(st.Blocks) * uint64(st.Bsize) * 5 / 100 &^ 1023 // diskspace.Reserve, worked out
	want := []summary{
		{Exc: "output: stdout: the filesystem of the job's output keeps " + jobspec.FormatSize(reserve) + " free for the instance: the rest of the job's stdout is dropped"},
		{Status: fjob.WaitStatusExited(2), Known: true},
	}
	if diff := cmp.Diff(want, summarize(h.wait(1420))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if free := uint64(st.Bavail) * uint64(st.Bsize); free < reserve {
		t.Errorf("%d bytes left free, want at least the reserve, %d", free, reserve)
	}
}

// Past the reserve, a guest's job is not launched, and nothing of it is
// made: its folder would be written with the runner's rights.
func TestGuestFolderReserve(t *testing.T) {
	guest := nobody(t)
	dir := guestTree(t)
	jobs := filepath.Join(dir, "jobs")
	h := tmpfsHarness(t, jobs, "size=4m,mode=0711")
	// Leave 100k free: under the reserve of 5% of 4m.
	var st syscall.Statfs_t
	if err := syscall.Statfs(jobs, &st); err != nil {
		t.Fatal(err)
	}
	fill := int64(st.Bavail)*int64(st.Bsize) - 100<<10
	if err := os.WriteFile(filepath.Join(jobs, "filler"), make([]byte, fill), 0o600); err != nil {
		t.Fatal(err)
	}
	s := spec(t, 1430, jobspec.Options{Command: []string{"true"}, Cwd: filepath.Join(dir, "work")}, 1, "0")
	s.UserID = guest.Uid
	_, err := h.r.Prepare(s)
	want := "cannot launch the job shell: the filesystem of the job folders keeps 204k free for the instance: no room for a guest's job"
	if err == nil || err.Error() != want {
		t.Fatalf("Prepare err = %v, want %q", err, want)
	}
	if _, err := os.Stat(h.dir(1430)); err == nil {
		t.Errorf("a refused guest job left a folder")
	}
	// The owner's jobs still run.
	h.launch(spec(t, 1431, jobspec.Options{Command: sh("echo ok")}, 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(1431))); diff != "" {
		t.Errorf("owner's job: events (-want +got):\n%s", diff)
	}
}
