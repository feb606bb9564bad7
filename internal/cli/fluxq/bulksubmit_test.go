package fluxq

import (
	"strings"
	"testing"
)

// Each job bulksubmit sends is the jobspec submit builds from the same
// options with the fields replaced: one builder for both (jobsFrom), so
// every option means in bulksubmit what it means in submit.
func TestBulksubmitJobsAreSubmits(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  [][]string // the submit command line of each job, in order
	}{
		{name: "product in Flux's order", args: []string{"echo", "{1}", "{0}", ":::", "1", "2", ":::", "3", "4"},
			want: [][]string{{"echo", "3", "1"}, {"echo", "4", "1"}, {"echo", "3", "2"}, {"echo", "4", "2"}}},
		{name: "linked", args: []string{"echo", "{0}{1}", ":::", "a", "b", ":::+", "x", "y"},
			want: [][]string{{"echo", "ax"}, {"echo", "by"}}},
		{name: "stdin, no command", stdin: "true\nfalse\n", args: nil,
			want: [][]string{{"true"}, {"false"}}},
		{name: "counts and sizes", args: []string{"-n", "{}", "-c", "{seq1}", "--mem", "{}G", "-N", "1", "hostname", ":::", "1", "2"},
			want: [][]string{{"-n", "1", "-c", "1", "--mem", "1G", "-N", "1", "hostname"}, {"-n", "2", "-c", "2", "--mem", "2G", "-N", "1", "hostname"}}},
		{name: "strings and lists", args: []string{"-t", "{seq1}m", "-q", "q{seq}", "--job-name", "{./%}", "--env", "IN={}", "--requires", "host:{0./}",
			"--output", "{.%}.{{id}}", "-o", "k={seq}", "--urgency", "1{seq}", "cat", "{}", ":::", "d/a.txt", "d/b.txt"},
			want: [][]string{
				{"-t", "1m", "-q", "q0", "--job-name", "a", "--env", "IN=d/a.txt", "--requires", "host:a.txt", "--output", "d/a.{{id}}", "-o", "k=0", "--urgency", "10", "cat", "d/a.txt"},
				{"-t", "2m", "-q", "q1", "--job-name", "b", "--env", "IN=d/b.txt", "--requires", "host:b.txt", "--output", "d/b.{{id}}", "-o", "k=1", "--urgency", "11", "cat", "d/b.txt"},
			}},
		{name: "cc copies each job, {cc} after the fields", args: []string{"--cc", "{}-3", "echo", "{}", "{cc}", ":::", "1", "2"},
			want: [][]string{{"--cc", "1-3", "echo", "1", "{cc}"}, {"--cc", "2-3", "echo", "2", "{cc}"}}},
		{name: "define", args: []string{"--define", "stem=out/{x./%}", "--output", "{.stem}.log", "run", "{}", ":::", "a/b.c"},
			want: [][]string{{"--output", "out/b.log", "run", "a/b.c"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeClient{}
			r := runFluxq(t, fc, tt.stdin, append([]string{"bulksubmit"}, tt.args...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			if len(fc.submits) != 1 {
				t.Fatalf("%d requests, want one for the whole set", len(fc.submits))
			}
			var wantSpecs []string
			for _, line := range tt.want {
				w := runFluxq(t, &fakeClient{}, "", append([]string{"submit", "--dry-run"}, line...)...)
				if w.Code != 0 {
					t.Fatalf("submit %q: exit %d: %s", line, w.Code, w.Stderr)
				}
				wantSpecs = append(wantSpecs, strings.Split(strings.TrimSuffix(w.Stdout, "\n"), "\n")...)
			}
			got := fc.submits[0]
			if len(got) != len(wantSpecs) {
				t.Fatalf("%d jobs, want %d", len(got), len(wantSpecs))
			}
			for i := range got {
				if string(got[i].Jobspec) != wantSpecs[i] {
					t.Errorf("job %d:\n got %s\nwant %s", i, got[i].Jobspec, wantSpecs[i])
				}
			}
		})
	}
}

// A bad job anywhere in the set, or a bad field, refuses the whole set
// before anything is sent: one line, the usage exit code for usage.
func TestBulksubmitRefusals(t *testing.T) {
	tests := []struct {
		args  []string
		stdin string
		code  int
		err   string
	}{
		{args: []string{"-n", "{}", "true", ":::", "1", "0"}, code: 2, err: "fluxq: bulksubmit: job 2 (-n0 true): --ntasks: task count must be an integer >= 1\n"},
		{args: []string{"-t", "{}", "true", ":::", "1m", "soon"}, code: 2, err: "fluxq: bulksubmit: job 2 (-tsoon true): --time-limit: "},
		{args: []string{"--requires", "{}", "true", ":::", "gpu", "gpu or"}, code: 1, err: "fluxq: bulksubmit: job 2 (--requires=gpu or true): --requires='gpu or': "},
		{args: []string{"--cc", "{}", "true", ":::", "1", "x-y"}, code: 2, err: "fluxq: bulksubmit: job 2 (--cc=x-y true): --cc: invalid IDSET"},
		{args: []string{"-N", "{}", "true", ":::", "x"}, code: 2, err: `--nodes: invalid value "x": want an integer`},
		{args: []string{"echo", "{1}", ":::", "a"}, code: 2, err: "fluxq: bulksubmit: {1}: there is only 1 input list\n"},
		{args: []string{"--output", "{nope}", "echo", ":::", "a"}, code: 2, err: `fluxq: bulksubmit: --output: {nope} in "{nope}": unknown name "nope"`},
		{args: []string{"--env", "A={", "echo", ":::", "a"}, code: 2, err: `fluxq: bulksubmit: --env: '{' not closed in "A={"`},
		{args: []string{"--define", "bad", "echo", ":::", "a"}, code: 2, err: `--define "bad": want NAME=TEMPLATE`},
		{args: []string{"echo", "{}"}, stdin: "\n\n", code: 1, err: "no inputs: stdin is empty"},
		{args: []string{"--sep", "none", "echo", "{}"}, stdin: " \t\n", code: 1, err: "no inputs: stdin is empty"},
	}
	for _, tt := range tests {
		fc := &fakeClient{}
		r := runFluxq(t, fc, tt.stdin, append([]string{"bulksubmit"}, tt.args...)...)
		if r.Code != tt.code || !strings.Contains(r.Stderr, tt.err) {
			t.Errorf("bulksubmit %q: exit %d, %q; want %d, %q", tt.args, r.Code, r.Stderr, tt.code, tt.err)
		}
		if len(fc.submits) != 0 {
			t.Errorf("bulksubmit %q sent %d requests, want none", tt.args, len(fc.submits))
		}
	}
}

// --dry-run sends nothing and prints each job as flux bulksubmit does;
// --sep splits stdin; --shuffle keeps each job's {seq}.
func TestBulksubmitDryRun(t *testing.T) {
	fc := &fakeClient{}
	r := runFluxq(t, fc, "a,b", "bulksubmit", "--dry-run", "--progress", "--sep", ",", "--job-name", "j{seq}", "echo", "{}")
	if r.Code != 0 || len(fc.submits) != 0 {
		t.Fatalf("exit %d (%s), %d requests", r.Code, r.Stderr, len(fc.submits))
	}
	want := "bulksubmit: submitting a total of 2 jobs\nbulksubmit: submit --job-name=j0 echo a\nbulksubmit: submit --job-name=j1 echo b\n"
	if r.Stdout != want {
		t.Errorf("stdout %q, want %q", r.Stdout, want)
	}
	r = runFluxq(t, fc, "", "bulksubmit", "--dry-run", "--shuffle", "echo", "{}", "{seq}", ":::", "0", "1", "2", "3", "4", "5", "6", "7")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines: %q", len(lines), r.Stdout)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if f[len(f)-1] != f[len(f)-2] {
			t.Errorf("shuffled %q: {seq} is not its combination's", l)
		}
	}
}
