package shell

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
)

// Mustache tags as flux-shell expands them in output paths.
func TestRender(t *testing.T) {
	id := fluid.ID(5002)
	node := &RankTasks{NodeID: 1, Rank: 3, Hostname: "node3", Cores: idset.MustParse("0-3"), GPUs: idset.MustParse("1"), NTasks: 2}
	job := tmplData{id: id, name: "sleep", nnodes: 2, ntasks: 4}
	task := job
	task.node, task.task = node, &taskID{rank: 3, local: 1}
	ascii := job
	ascii.ascii = true
	tests := []struct {
		tmpl string
		d    tmplData
		want string
	}{
		{"out", job, "out"},
		{"{{id}}.out", job, id.String() + ".out"},
		{"{{jobid}}", job, id.String()},
		{"{{id.f58}}", ascii, "f" + strings.TrimPrefix(id.String(), "ƒ")},
		{"{{id}}", ascii, "f" + strings.TrimPrefix(id.String(), "ƒ")},
		{"{{id.f58plain}}", job, "f" + strings.TrimPrefix(id.String(), "ƒ")},
		{"{{id.dec}}-{{jobid.hex}}", job, "5002-0x138a"},
		{"{{id.dothex}}", job, "0000.0000.0000.138a"},
		{"{{name}}/{{nnodes}}/{{ntasks}}/{{size}}", job, "sleep/2/4/4"},
		{"{{taskid}}.{{task.rank}}.{{task.index}}.{{task.localid}}", task, "3.3.1.1"},
		{"{{node.id}} {{node.name}} {{node.broker_rank}} {{node.ntasks}} {{node.cores}} {{node.ncores}} {{node.gpus}}", task, "1 node3 3 2 0-3 4 1"},
		// Task and node tags mean nothing outside a task: left as written.
		{"{{taskid}}-{{node.id}}", job, "{{taskid}}-{{node.id}}"},
		{"{{nosuch}}", job, "{{nosuch}}"},
		{"{{id.kvs}}", job, "{{id.kvs}}"},
		{"{{idx}}", job, "{{idx}}"},
		// An unterminated tag ends the expansion; the rest is kept.
		{"a-{{id}}-{{name", job, "a-" + id.String() + "-{{name"},
	}
	for _, tc := range tests {
		if got := render(tc.tmpl, tc.d); got != tc.want {
			t.Errorf("render(%q) = %q, want %q", tc.tmpl, got, tc.want)
		}
	}
}

func TestJobName(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		want    string
	}{
		{"given", []string{"/bin/true"}, "given"},
		{"", []string{"/usr/bin/sleep", "1"}, "sleep"},
		{"", nil, "unknown"},
	}
	for _, tc := range tests {
		if got := jobName(tc.name, tc.command); got != tc.want {
			t.Errorf("jobName(%q, %q) = %q, want %q", tc.name, tc.command, got, tc.want)
		}
	}
}

// Commands are found in the task's PATH as execvp finds them.
func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "prog"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "data"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(bin, "adir"), 0o755)
	tests := []struct {
		name, file, path, cwd string
		want                  string
		err                   error
	}{
		{"found", "prog", "/nonexistent:" + bin, "", bin + "/prog", nil},
		{"relative entry", "prog", "bin", dir, "bin/prog", nil},
		{"empty entry is cwd", "prog", ":/nonexistent", bin, "./prog", nil},
		{"with a slash: not searched", "./x/y", "", "", "./x/y", nil},
		{"not found", "nosuch", bin, "", "", unix.ENOENT},
		{"not executable", "data", bin, "", "", unix.EACCES},
		{"a directory", "adir", bin, "", "", unix.EACCES},
		{"empty", "", bin, "", "", unix.ENOENT},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lookPath(tc.file, tc.path, tc.cwd)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("lookPath = %q, want %q", got, tc.want)
			}
		})
	}
}

// flux-shell: 126 for permission errors, 127 for command not found.
func TestStartExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
		msg  string
	}{
		{unix.ENOENT, 127, "No such file or directory"},
		{&os.PathError{Op: "fork/exec", Path: "/x", Err: unix.EACCES}, 126, "Permission denied"},
		{unix.EPERM, 126, "Operation not permitted"},
		{unix.ENOEXEC, 1, "Exec format error"},
	}
	for _, tc := range tests {
		if got := startExitCode(tc.err); got != tc.want {
			t.Errorf("startExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
		if got := strerror(tc.err); got != tc.msg {
			t.Errorf("strerror(%v) = %q, want %q", tc.err, got, tc.msg)
		}
	}
}

// GPUs and cores per task, as flux-shell's affinity plugins share them.
func TestShare(t *testing.T) {
	ids := []uint{0, 1, 2, 3, 4}
	tests := []struct {
		name          string
		ntasks, local int
		overlap       bool
		want          []uint
	}{
		{"one task gets all", 1, 0, false, []uint{0, 1, 2, 3, 4}},
		{"two tasks, remainder unused", 2, 1, false, []uint{2, 3}},
		{"more tasks than ids", 6, 5, false, nil},
		{"more tasks than ids, overlapping", 7, 6, true, []uint{1}},
		{"out of range", 2, 2, false, nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, share(ids, tc.ntasks, tc.local, tc.overlap)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestCPUSet(t *testing.T) {
	var allowed unix.CPUSet
	allowed.Set(0)
	allowed.Set(1)
	allowed.Set(2)
	allowed.Set(3)
	set := func(ids ...int) *unix.CPUSet {
		var s unix.CPUSet
		for _, id := range ids {
			s.Set(id)
		}
		return &s
	}
	tests := []struct {
		name          string
		cores         string
		perTask       bool
		ntasks, local int
		want          *unix.CPUSet
	}{
		{"rank's cores", "1-2", false, 2, 1, set(1, 2)},
		{"per task", "0-3", true, 2, 1, set(2, 3)},
		{"a core this machine lacks: unbound", "3-4", false, 1, 0, nil},
		{"beyond any CPU set: unbound", "0,5000", false, 1, 0, nil},
		{"no cores: unbound", "", false, 1, 0, nil},
	}
	for _, tc := range tests {
		got := cpuSet(idset.MustParse(tc.cores), &allowed, tc.perTask, tc.ntasks, tc.local)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: cpuSet = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEnvHelpers(t *testing.T) {
	if got := flatten(nil); got == nil || len(got) != 0 {
		t.Errorf("flatten(nil) = %#v, want an empty, non-nil slice", got)
	}
	if diff := cmp.Diff([]string{"A=1", "B=x=y"}, flatten(map[string]string{"B": "x=y", "A": "1"})); diff != "" {
		t.Errorf("flatten (-want +got):\n%s", diff)
	}
	if got := joinIDs([]uint{0, 1, 3}); got != "0,1,3" {
		t.Errorf("joinIDs = %q", got)
	}
	if _, err := idList(idset.MustParse("0-1000000"), 10); err == nil {
		t.Error("idList expanded a million ids")
	}
}
