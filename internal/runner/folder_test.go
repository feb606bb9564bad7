package runner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/shell"
)

// A job of the runner's own user gets its folder, mode 0700, at its first
// write, with only the files written; spec.json and status are no more.
func TestFolderLazy(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	id := fluid.ID(1300)
	h.launch(spec(t, id, jobspec.Options{Command: sh("echo hi")}, 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(id))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(h.dir(id))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != fs.ModeDir|0o700 {
		t.Errorf("folder mode %v, want drwx------", fi.Mode())
	}
	if got := readFile(t, filepath.Join(h.dir(id), shell.StdoutFile)); got != "hi\n" {
		t.Errorf("stdout = %q", got)
	}
	ents, err := os.ReadDir(h.dir(id))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{shell.StdoutFile}, names); diff != "" {
		t.Errorf("folder holds (-want +got):\n%s", diff)
	}
}

// A folder left by a launch that died before its fork is made afresh
// when the job first writes.
func TestFolderLeftover(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	id := fluid.ID(1301)
	if err := os.MkdirAll(h.dir(id), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.dir(id), "spec.json"), []byte("{}\n"), 0o600)
	os.WriteFile(filepath.Join(h.dir(id), shell.StdoutFile), []byte("stale\n"), 0o600)
	h.launch(spec(t, id, jobspec.Options{Command: sh("echo hi >&2")}, 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(id))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(h.dir(id), shell.StderrFile)); got != "hi\n" {
		t.Errorf("stderr = %q", got)
	}
	for _, name := range []string{"spec.json", shell.StdoutFile} {
		if _, err := os.Lstat(filepath.Join(h.dir(id), name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left from before (%v)", name, err)
		}
	}
}

// A job that names its own folder, as its working directory or in an
// output path, finds it there, as when every folder was made before the
// launch.
func TestFolderNamed(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	id := fluid.ID(1302)
	dir := h.dir(id)
	output := map[string]any{"stderr": map[string]any{"path": filepath.Join(dir, "err.log")}}
	h.launch(spec(t, id, jobspec.Options{Command: sh("pwd; echo oops >&2"), Cwd: dir,
		Extra: map[string]any{"shell": map[string]any{"options": map[string]any{"output": output}}}}, 1, "0"))
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(id))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(dir, shell.StdoutFile)); got != dir+"\n" {
		t.Errorf("stdout = %q, want the folder as working directory", got)
	}
	if got := readFile(t, filepath.Join(dir, "err.log")); got != "oops\n" {
		t.Errorf("err.log = %q", got)
	}
}
