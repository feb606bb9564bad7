package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/shell"
)

// nobody is the guest of these tests, when they run as root.
func nobody(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	cred, err := lookupUser(65534)
	if err != nil {
		t.Skip(err)
	}
	return cred
}

// guestTree makes a directory another user may pass through but not list,
// as the state directory of an instance open to guests is, with jobs/ and
// work/ in it.
func guestTree(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fluxq-guest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"", "jobs", "work"} {
		if err := os.Chmod(filepath.Join(dir, d), 0o711); err != nil && d == "" {
			t.Fatal(err)
		}
		if d != "" {
			if err := os.Mkdir(filepath.Join(dir, d), 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func owner(t *testing.T, path string) [2]uint32 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return [2]uint32{st.Uid, st.Gid}
}

// docs/architecture.md: a root agent runs a guest's job with the guest's uid
// and groups, in a folder that is the guest's; its output files are opened
// with the guest's rights alone.
func TestGuestJob(t *testing.T) {
	guest := nobody(t)
	dir := guestTree(t)
	h := newHarness(t, "auto")
	h.t = t
	h.jobs = filepath.Join(dir, "jobs")
	h.r.opts.JobsDir = h.jobs
	s := spec(t, 800, jobspec.Options{Command: sh("id -u; id -G"), Cwd: filepath.Join(dir, "work")}, 1, "0")
	s.UserID = guest.Uid
	rec := h.launch(s)
	if rec.UserID != guest.Uid || rec.GID != guest.Gid {
		t.Errorf("record %+v, want the guest's ids", rec)
	}
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(800))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	folder := h.dir(800)
	out := strings.SplitN(readFile(t, filepath.Join(folder, shell.StdoutFile)), "\n", 2)
	if len(out) != 2 || out[0] != strconv.FormatUint(uint64(guest.Uid), 10) {
		t.Fatalf("stdout %q, want the guest's uid first", out)
	}
	wantGroups := append([]string{strconv.FormatUint(uint64(guest.Gid), 10)}, func() []string {
		var g []string
		for _, id := range guest.Groups {
			g = append(g, strconv.FormatUint(uint64(id), 10))
		}
		return g
	}()...)
	slices.Sort(wantGroups)
	gotGroups := strings.Fields(out[1])
	slices.Sort(gotGroups)
	if diff := cmp.Diff(slices.Compact(wantGroups), slices.Compact(gotGroups)); diff != "" {
		t.Errorf("id -G (-want +got):\n%s", diff)
	}
	want := [2]uint32{guest.Uid, guest.Gid}
	for _, name := range []string{".", shell.StdoutFile, shell.StderrFile} {
		if got := owner(t, filepath.Join(folder, name)); got != want {
			t.Errorf("%s is owned by %v, want the guest's %v", name, got, want)
		}
	}

	// An output path the guest may not write is not written for it.
	forbidden := filepath.Join(dir, "root-only")
	output := map[string]any{"stdout": map[string]any{"path": forbidden}}
	s = spec(t, 801, jobspec.Options{Command: sh("echo hi"), Cwd: filepath.Join(dir, "work"),
		Extra: map[string]any{"shell": map[string]any{"options": map[string]any{"output": output}}}}, 1, "0")
	s.UserID = guest.Uid
	h.launch(s)
	wantEvs := []summary{{Exc: "exec: error opening output file: open " + forbidden + ": permission denied"},
		{Status: fjob.WaitStatusExited(1), Known: true}}
	if diff := cmp.Diff(wantEvs, summarize(h.wait(801))); diff != "" {
		t.Errorf("forbidden output: events (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(forbidden); err == nil {
		t.Errorf("%s was created", forbidden)
	}
}

// A job of a uid that is no user, or of another user when not root, runs
// nothing and leaves nothing.
func TestGuestRefused(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	s := spec(t, 802, jobspec.Options{Command: []string{"true"}}, 1, "0")
	s.UserID = 4000000000
	_, err := h.r.Prepare(s)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot run") {
		t.Errorf("prepare: %v, want a refusal", err)
	}
	if _, err := os.Stat(h.dir(802)); err == nil {
		t.Errorf("a refused job left a folder")
	}
}

// flux-shell: output that cannot be written (a full filesystem) ends the
// job with an exec exception saying so; the tasks' status is kept.
func TestOutputNoSpace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	h := tmpfsHarness(t, t.TempDir(), "size=256k")
	h.launch(spec(t, 900, jobspec.Options{Command: sh("head -c 1000000 /dev/zero; exit 3")}, 1, "0"))
	note := "exec: error writing output file: write " + filepath.Join(h.dir(900), shell.StdoutFile) + ": no space left on device"
	want := []summary{{Exc: note}, {Status: fjob.WaitStatusExited(3), Known: true}}
	if diff := cmp.Diff(want, summarize(h.wait(900))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// tmpfsHarness is a harness whose job folders are in jobs, a tmpfs of
// opts mounted for the test: for the tests of a full filesystem.
func tmpfsHarness(t *testing.T, jobs, opts string) *harness {
	t.Helper()
	if err := syscall.Mount("tmpfs", jobs, "tmpfs", 0, opts); err != nil {
		t.Skipf("mount: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(jobs, syscall.MNT_DETACH) })
	h := newHarness(t, "auto")
	h.t = t
	h.jobs = jobs
	h.r.opts.JobsDir = jobs
	return h
}
