package fluxsched

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// fourJobs is an SWF trace: three one-core jobs of 10 s, then one of
// 4,000 s, a second apart.
const fourJobs = `1 1 -1 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1
2 2 -1 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1
3 3 -1 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1
4 4 -1 4000 1 -1 -1 1 4000 -1 -1 -1 -1 -1 -1 -1 -1 -1
`

// fluxsched sim on two cores: the summary, the schedule (one JSON line
// per job, times from the first submission) and the plot, as the user
// reads them. fcfs: job 3 waits for job 1's core, job 4 for job 2's.
func TestSimOutputs(t *testing.T) {
	work := t.TempDir()
	trace := filepath.Join(work, "t.swf")
	if err := os.WriteFile(trace, []byte(fourJobs), 0o600); err != nil {
		t.Fatal(err)
	}
	sched, plot := filepath.Join(work, "s.jsonl"), filepath.Join(work, "u.svg")
	code, out, errs := fluxsched("sim", "--trace", trace, "--nodes", "1", "--cores-per-node", "2", "--schedule-out", sched, "--plot", plot)
	want := `policy:                fcfs
machine:               1 node, 2 cores (--nodes 1 --cores-per-node 2)
trace:                 ` + trace + `, 4 jobs read
jobs:                  4 started, 0 skipped, 0 denied
makespan:              4011 s (1.1h)
utilization:           50.2%
mean wait:             4 s (4s)
max wait:              8 s (8s)
mean bounded slowdown: 1.20
mean turnaround:       1012 s (16.9m)
`
	if code != 0 || out != want || errs != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errs, out, want)
	}
	b, err := os.ReadFile(sched)
	if err != nil {
		t.Fatal(err)
	}
	wantSched := `{"id":1,"submit":0,"start":0,"end":10,"cores":1}
{"id":2,"submit":1,"start":1,"end":11,"cores":1}
{"id":3,"submit":2,"start":10,"end":20,"cores":1}
{"id":4,"submit":3,"start":11,"end":4011,"cores":1}
`
	if string(b) != wantSched {
		t.Errorf("schedule:\n%s\nwant:\n%s", b, wantSched)
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("plot: %v, %.40q", err, b)
	}

	// A file that cannot be written is named in the error, exit 1.
	code, _, errs = fluxsched("sim", "--trace", trace, "--nodes", "1", "--cores-per-node", "2", "--schedule-out", filepath.Join(work, "no", "s.jsonl"))
	if code != 1 || !strings.Contains(errs, filepath.Join(work, "no", "s.jsonl")) {
		t.Errorf("unwritable schedule: exit %d, stderr %q", code, errs)
	}
}

// The machine comes from --nodes and --cores-per-node, or a config; a
// bad combination is a usage error.
func TestSimMachine(t *testing.T) {
	work := t.TempDir()
	trace := filepath.Join(work, "t.swf")
	config := filepath.Join(work, "two.toml")
	os.WriteFile(trace, []byte(fourJobs), 0o600)
	os.WriteFile(config, []byte(twoCoresTOML), 0o600)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string // a line of stdout
		wantErr  string
	}{
		{"config", []string{"--config", config}, 0, "makespan:              4011 s (1.1h)", ""},
		{"config and size", []string{"--config", config, "--nodes", "1"}, exitcode.Usage, "", "fluxsched: give --nodes and --cores-per-node, or --config, not both"},
		{"no machine", []string{"--nodes", "1"}, exitcode.Usage, "", "fluxsched: sim needs --nodes N and --cores-per-node C, or --config FILE"},
		{"no nodes", []string{"--nodes", "0", "--cores-per-node", "2"}, exitcode.Usage, "", "fluxsched: --nodes: must be from 1 to 1048576, not 0"},
		{"no cores", []string{"--nodes", "1", "--cores-per-node", "0"}, exitcode.Usage, "", "fluxsched: --cores-per-node: must be from 1 to 65536, not 0"},
		{"bad config", []string{"--config", filepath.Join(work, "none.toml")}, 1, "", "fluxsched: "},
		{"bad policy", []string{"--nodes", "1", "--cores-per-node", "2", "--policy", "lifo"}, exitcode.Usage, "", "fluxsched: --policy: "},
		{"easy", []string{"--nodes", "1", "--cores-per-node", "2", "--policy", "easy", "--queue-depth", "4"}, 0, "jobs:                  4 started, 0 skipped, 0 denied", ""},
		{"memory", []string{"--nodes", "1", "--cores-per-node", "2", "--memory", "4G"}, 0, "machine:               1 node, 2 cores, 4G of memory (--nodes 1 --cores-per-node 2 --memory 4G)", ""},
		{"memory and config", []string{"--config", config, "--memory", "4G"}, exitcode.Usage, "", `fluxsched: --memory goes with --nodes and --cores-per-node; a config gives its hosts' memory (memory = "64G" in [[resource.config]])`},
		{"bad memory", []string{"--nodes", "1", "--cores-per-node", "2", "--memory", "lots"}, exitcode.Usage, "", `fluxsched: --memory: invalid memory size "lots"`},
		{"memory over 1E in all", []string{"--nodes", "2", "--cores-per-node", "2", "--memory", "1024P"}, exitcode.Usage, "", "fluxsched: --memory: 2 nodes of 1024P is more than 1E in all"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := fluxsched(append([]string{"sim", "--trace", trace}, tc.args...)...)
			if code != tc.wantCode || !strings.Contains(out, tc.wantOut) || !strings.HasPrefix(errs, tc.wantErr) || (tc.wantErr == "") != (errs == "") {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, a line %q, stderr starting %q", code, out, errs, tc.wantCode, tc.wantOut, tc.wantErr)
			}
		})
	}
}

// Durations read as Flux prints them.
func TestHuman(t *testing.T) {
	for sec, want := range map[float64]string{0: "0s", 59: "59s", 90: "1.5m", 5400: "1.5h", 172800: "2.0d"} {
		if got := human(sec); got != want {
			t.Errorf("human(%v) = %q, want %q", sec, got, want)
		}
	}
}
