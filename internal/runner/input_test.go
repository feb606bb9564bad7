package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/shell"
)

func withInput(o jobspec.Options, path string) jobspec.Options {
	o.Extra = map[string]any{"shell": map[string]any{"options": map[string]any{"input": shell.InputOptions(path)}}}
	return o
}

// flux-shell: each task opens the input file and reads it whole; a path
// is relative to the job's working directory; without one, stdin is
// /dev/null.
func TestInputFile(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "in.txt"), []byte("a\nb\n"), 0o644)
	o := jobspec.Options{Command: sh(`echo "$FLUXQ_TASK_RANK $(wc -l)"`), Cwd: cwd, NTasks: 2}
	h.launch(spec(t, 800, withInput(o, "in.txt"), 2, "0"))
	none := o
	none.NTasks = 1
	h.launch(spec(t, 801, none, 1, "0"))
	for _, id := range []fluid.ID{800, 801} {
		if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(id))); diff != "" {
			t.Errorf("job %d: events (-want +got):\n%s", id, diff)
		}
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(h.dir(800), shell.StdoutFile))), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	if !seen["0 2"] || !seen["1 2"] || len(lines) != 2 {
		t.Errorf("with an input file, stdout %q, want each task to read 2 lines", lines)
	}
	if got := readFile(t, filepath.Join(h.dir(801), shell.StdoutFile)); got != "0 0\n" {
		t.Errorf("without, stdout %q, want /dev/null read", got)
	}
}

// An input file that cannot be opened fails the job before its tasks
// start, in flux-shell's words; a FIFO with no writer opens at once and
// reads as ended.
func TestInputErrors(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	cwd := t.TempDir()
	fifo := filepath.Join(cwd, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	h.launch(spec(t, 810, withInput(jobspec.Options{Command: []string{"cat"}, Cwd: cwd}, "nosuch"), 1, "0"))
	h.launch(spec(t, 811, withInput(jobspec.Options{Command: []string{"cat"}, Cwd: cwd}, fifo), 1, "0"))
	note := "error opening input file '" + filepath.Join(cwd, "nosuch") + "': No such file or directory"
	want := []summary{{Exc: "exec: " + note}, {Status: fjob.WaitStatusExited(1), Known: true}}
	if diff := cmp.Diff(want, summarize(h.wait(810))); diff != "" {
		t.Errorf("missing file: events (-want +got):\n%s", diff)
	}
	if got, want := readFile(t, filepath.Join(h.dir(810), shell.StderrFile)), shell.Name+"[0]: FATAL: "+note+"\n"; got != want {
		t.Errorf("missing file: stderr %q, want %q", got, want)
	}
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(811))); diff != "" {
		t.Errorf("FIFO: events (-want +got):\n%s", diff)
	}
}

// A stream (a FIFO, as fluxq run gives) goes whole to every task, as
// flux-shell broadcasts stdin, and its end reaches them all.
func TestInputStreamBroadcast(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	cwd := t.TempDir()
	fifo := filepath.Join(cwd, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := strings.Repeat("x", 100<<10) + "\n" // more than a pipe holds
	written := make(chan error, 1)
	go func() { _, err := w.WriteString(data); written <- err }()
	o := jobspec.Options{Command: sh(`echo "$FLUXQ_TASK_RANK $(wc -c)"`), Cwd: cwd, NTasks: 3}
	h.launch(spec(t, 820, withInput(o, fifo), 1, "0"))
	// Launch has opened the FIFO: once all is written, its end is the
	// tasks'.
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	w.Close()
	if diff := cmp.Diff([]summary{{Known: true}}, summarize(h.wait(820))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(h.dir(820), shell.StdoutFile))), "\n")
	slices.Sort(lines)
	want := []string{"0 102401", "1 102401", "2 102401"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("what each task read (-want +got):\n%s", diff)
	}
}
