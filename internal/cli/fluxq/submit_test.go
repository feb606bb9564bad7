package fluxq

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/state"
)

func TestJobEnvironment(t *testing.T) {
	environ := []string{"HOME=/home/a", "PATH=/bin", "LANG=C", "LC_ALL=C", "FOO=foo", "EMPTY="}
	tests := []struct {
		name  string
		rules []string
		want  map[string]string
		err   string
	}{
		// flux submit: the job gets the submitter's environment by default.
		{name: "default", want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "LANG": "C", "LC_ALL": "C", "FOO": "foo", "EMPTY": ""}},
		{name: "remove glob", rules: []string{"-L*"}, want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "FOO": "foo", "EMPTY": ""}},
		{name: "remove regex", rules: []string{"-/^(LANG|LC_)/"}, want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "FOO": "foo", "EMPTY": ""}},
		{name: "start empty, then copy", rules: []string{"-*", "L*", "HOME"}, want: map[string]string{"HOME": "/home/a", "LANG": "C", "LC_ALL": "C"}},
		{name: "set", rules: []string{"-*", "X=1"}, want: map[string]string{"X": "1"}},
		// Values expand from the job's environment first, then the
		// submitter's (ChainMap(environ, os.environ)).
		{name: "expand", rules: []string{"-*", "PATH=/opt", "P=${PATH}:$HOME", "D=$$FOO"}, want: map[string]string{"PATH": "/opt", "P": "/opt:/home/a", "D": "$FOO"}},
		{name: "copy does not overwrite", rules: []string{"FOO=mine", "FOO"}, want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "LANG": "C", "LC_ALL": "C", "FOO": "mine", "EMPTY": ""}},
		{name: "order matters", rules: []string{"X=1", "-X"}, want: map[string]string{"HOME": "/home/a", "PATH": "/bin", "LANG": "C", "LC_ALL": "C", "FOO": "foo", "EMPTY": ""}},
		{name: "character class", rules: []string{"-*", "[FH]*", "-[!F]*"}, want: map[string]string{"FOO": "foo"}},
		{name: "unknown variable", rules: []string{"X=$NOPE"}, err: "--env: Variable 'NOPE' not found in X=$NOPE"},
		{name: "bad placeholder", rules: []string{"X=$(ls)"}, err: "--env: invalid placeholder at position 0 in X=$(ls)"},
		{name: "bad regex", rules: []string{"-/(/"}, err: "--env: invalid pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jobEnvironment(environ, tt.rules)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env")
	writeFile(t, path, "-*\n\nA=1\nB=$A$A\n")
	got, err := jobEnvironment([]string{"X=1"}, []string{"^" + path})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"A": "1", "B": "11"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReplaceCC(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{cc}", "7"},
		{"out.{cc}.{{id}}", "out.7.{{id}}"},
		// flux's Xcmd keeps mustache templates whole.
		{"{{cc}}", "{{cc}}"},
		{"none", "none"},
	}
	for _, tt := range tests {
		if got := replaceCC(tt.in, "7"); got != tt.want {
			t.Errorf("replaceCC(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseBeginTime(t *testing.T) {
	now := time.Date(2024, 5, 6, 12, 0, 0, 0, time.UTC)
	ts := func(t time.Time) float64 { return state.Timestamp(t) }
	tests := []struct {
		in   string
		want float64
		err  bool
	}{
		{"+1h", ts(now.Add(time.Hour)), false},
		{"+30", ts(now.Add(30 * time.Second)), false},
		{"2024-05-07T08:00:00Z", ts(time.Date(2024, 5, 7, 8, 0, 0, 0, time.UTC)), false},
		{"2024-05-07 08:30", ts(time.Date(2024, 5, 7, 8, 30, 0, 0, time.UTC)), false},
		// A time of day alone is its next occurrence.
		{"13:00", ts(time.Date(2024, 5, 6, 13, 0, 0, 0, time.UTC)), false},
		{"11:00", ts(time.Date(2024, 5, 7, 11, 0, 0, 0, time.UTC)), false},
		{"3pm", ts(time.Date(2024, 5, 6, 15, 0, 0, 0, time.UTC)), false},
		{"+1x", 0, true},
		{"soon", 0, true},
		// The time bound (fsd.LatestTime): up to 9000-01-01, and no
		// duration from now beyond 100 years. Past 2262, where UnixNano
		// overflows, a date is still seen for what it is.
		{"9000-01-01T00:00:00Z", 221845392000, false},
		{"2500-01-01", float64(time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC).Unix()), false},
		{"+36525d", ts(now) + 36525*86400, false},
		{"9000-01-01T00:00:01Z", 0, true},
		{"9999-12-31", 0, true},
		{"+36526d", 0, true},
		{"+1e9d", 0, true},
		{"+1e308s", 0, true},
	}
	for _, tt := range tests {
		got, err := parseBeginTime(tt.in, now)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseBeginTime(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// decodeJob parses a submitted jobspec.
func decodeJob(t *testing.T, b []byte) *jobspec.Jobspec {
	t.Helper()
	js, err := jobspec.Parse(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return js
}

// docs/cli.md and the issue: `fluxq submit --cc 1-10000 true` is ONE Submit
// call with 10,000 jobs, each with its FLUXQ_JOB_CC.
func TestSubmitCCIsOneCall(t *testing.T) {
	fc := &fakeClient{}
	got := runFluxq(t, fc, "", "submit", "--cc", "1-10000", "true")
	if got.Code != 0 || got.Stderr != "" {
		t.Fatalf("%+v", got)
	}
	if len(fc.submits) != 1 || len(fc.submits[0]) != 10000 {
		t.Fatalf("%d submit calls, want 1 with 10000 jobs", len(fc.submits))
	}
	if n := strings.Count(got.Stdout, "\n"); n != 10000 {
		t.Errorf("%d IDs printed, want 10000", n)
	}
	for i, j := range fc.submits[0] {
		if i%997 != 0 {
			continue
		}
		js := decodeJob(t, j.Jobspec)
		if cc := js.Attributes.System.Environment[EnvJobCC]; cc != fmt.Sprint(i+1) {
			t.Errorf("job %d: %s=%q", i, EnvJobCC, cc)
		}
		if j.Urgency != 16 {
			t.Errorf("job %d: urgency %d", i, j.Urgency)
		}
	}
}

// {cc} in the command and the options flux replaces it in; in the time
// limit it changes what is parsed, so each copy is built on its own.
func TestSubmitCCSubstitution(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, cc int, js *jobspec.Jobspec)
	}{
		{"command and name", []string{"--cc", "2-3", "--job-name", "n{cc}", "--output", "o{cc}.{{id}}", "echo", "{cc}"}, func(t *testing.T, cc int, js *jobspec.Jobspec) {
			want := []any{[]string{"echo", fmt.Sprint(cc)}, fmt.Sprintf("n%d", cc), map[string]any{"path": fmt.Sprintf("o%d.{{id}}", cc)}}
			out := js.Attributes.System.Shell.Options["output"].(map[string]any)["stdout"]
			if diff := cmp.Diff(want, []any{js.Tasks[0].Command, js.Attributes.System.Job.Name, out}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}},
		{"time limit", []string{"--cc", "2-3", "-t", "{cc}m", "true"}, func(t *testing.T, cc int, js *jobspec.Jobspec) {
			if d := js.Attributes.System.Duration; d != float64(60*cc) {
				t.Errorf("duration %v, want %d", d, 60*cc)
			}
		}},
		{"env value", []string{"--cc", "2-3", "--env", "WHO=copy{cc}", "true"}, func(t *testing.T, cc int, js *jobspec.Jobspec) {
			if v := js.Attributes.System.Environment["WHO"]; v != fmt.Sprintf("copy%d", cc) {
				t.Errorf("WHO=%q", v)
			}
		}},
		{"bcc", []string{"--bcc", "2-3", "echo", "{cc}"}, func(t *testing.T, cc int, js *jobspec.Jobspec) {
			if _, ok := js.Attributes.System.Environment[EnvJobCC]; ok {
				t.Errorf("--bcc set %s", EnvJobCC)
			}
			if js.Tasks[0].Command[1] != fmt.Sprint(cc) {
				t.Errorf("command %q", js.Tasks[0].Command)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeClient{}
			got := runFluxq(t, fc, "", append([]string{"submit", "--quiet"}, tt.args...)...)
			if got.Code != 0 || got.Stdout != "" {
				t.Fatalf("%+v", got)
			}
			if len(fc.submits) != 1 || len(fc.submits[0]) != 2 {
				t.Fatalf("submits: %d", len(fc.submits))
			}
			for i, j := range fc.submits[0] {
				tt.check(t, i+2, decodeJob(t, j.Jobspec))
			}
		})
	}
}

func TestSubmitJobspecStdin(t *testing.T) {
	fc := &fakeClient{}
	spec := `{"version":1,"resources":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}],` +
		`"tasks":[{"command":["true"],"slot":"task","count":{"per_slot":1}}],"attributes":{"system":{"duration":0}}}`
	got := runFluxq(t, fc, spec, "submit", "--jobspec", "-", "--urgency", "expedite", "--cc", "1-2")
	if got.Code != 0 {
		t.Fatalf("%+v", got)
	}
	if len(fc.submits) != 1 || len(fc.submits[0]) != 2 {
		t.Fatalf("submits %v", fc.submits)
	}
	for i, j := range fc.submits[0] {
		js := decodeJob(t, j.Jobspec)
		if j.Urgency != 31 || js.Attributes.System.Environment[EnvJobCC] != fmt.Sprint(i+1) {
			t.Errorf("job %d: urgency %d, env %v", i, j.Urgency, js.Attributes.System.Environment)
		}
	}
	// An invalid jobspec is a failed request (exit 1); nothing is sent.
	fc = &fakeClient{}
	got = runFluxq(t, fc, `{"version":1}`, "submit", "--jobspec", "-")
	if got.Code != 1 || !strings.HasPrefix(got.Stderr, "fluxq: submit: -: ") || len(fc.submits) != 0 {
		t.Errorf("invalid jobspec: %+v, %d submits", got, len(fc.submits))
	}
}

func TestSubmitDefaults(t *testing.T) {
	fc := &fakeClient{}
	got := runFluxq(t, fc, "", "submit", "sleep", "1")
	if diff := cmp.Diff(result{Stdout: "ƒJF\n"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	js := decodeJob(t, fc.submits[0][0].Jobspec)
	sys := js.Attributes.System
	// The job runs where it was submitted, with the submitter's
	// environment (as flux submit).
	want := []any{"/work", map[string]string{"HOME": "/home/alice", "PATH": "/bin:/usr/bin", "LANG": "C"}, 0.0, 16}
	if diff := cmp.Diff(want, []any{sys.Cwd, sys.Environment, sys.Duration, fc.submits[0][0].Urgency}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSubmitErrors(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"submit"}, 2, "fluxq: submit: job command and arguments are missing\n"},
		{[]string{"submit", "-n", "x", "true"}, 2, "fluxq: submit: invalid value \"x\" for flag -n: parse error\n"},
		{[]string{"submit", "-g", "-1", "true"}, 2, "fluxq: submit: --gpus-per-task: gpus per task must be an integer >= 0\n"},
		{[]string{"submit", "-x", "true"}, 2, "fluxq: submit: exclusive can only be set with a node count\n"},
		{[]string{"submit", "--mem", "4Q", "true"}, 2, "fluxq: submit: --mem: invalid memory size \"4Q\" (want a size such as 512M, 4G or 1.5T)\n"},
		{[]string{"submit", "--mem", "1G", "--mem-per-cpu", "1G", "true"}, 2, "fluxq: submit: --mem and --mem-per-cpu are mutually exclusive\n"},
		{[]string{"submit", "--mem-per-cpu", "1000P", "-c", "2", "true"}, 2, "fluxq: submit: --mem-per-cpu: 1000P per core x 2 cores is over the largest allowed, 1E\n"},
		{[]string{"submit", "--urgency", "99", "true"}, 1, "fluxq: submit: urgency value is out of range\n"},
		{[]string{"submit", "--requires", "host:", "true"}, 1, "fluxq: submit: --requires='host:': "},
		{[]string{"submit", "--dependency", "1bad:x", "true"}, 2, "fluxq: submit: invalid dependency URI \"1bad:x\"\n"},
		{[]string{"submit", "--jobspec", "x.json", "true"}, 2, "fluxq: submit: --jobspec takes no COMMAND\n"},
	}
	for _, tt := range tests {
		fc := &fakeClient{}
		got := runFluxq(t, fc, "", tt.args...)
		if got.Code != tt.code || !strings.HasPrefix(got.Stderr, tt.stderr) || got.Stdout != "" || len(fc.submits) != 0 {
			t.Errorf("fluxq %v = %+v, %d submits; want exit %d, stderr %q", tt.args, got, len(fc.submits), tt.code, tt.stderr)
		}
	}
}

func TestDryRun(t *testing.T) {
	fc := &fakeClient{}
	got := runFluxq(t, fc, "", "submit", "--dry-run", "-N", "2", "--env-remove", "*", "hostname")
	if got.Code != 0 || len(fc.submits) != 0 {
		t.Fatalf("%+v", got)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(got.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	res := doc["resources"].([]any)[0].(map[string]any)
	if res["type"] != "node" || res["count"] != 2.0 || res["exclusive"] != true {
		t.Errorf("-N 2 gave %v", res)
	}
}

// -o, --setopt as flux submit: dots nest, VAL is JSON when it parses
// whole (numbers as written), else a string, and a bare KEY is 1.
func TestSetShellOption(t *testing.T) {
	for _, tc := range []struct {
		opts []string
		want string
		err  string
	}{
		{[]string{"output.limit=1M"}, `{"output":{"limit":"1M"}}`, ""},
		{[]string{"output.limit=4096"}, `{"output":{"limit":4096}}`, ""},
		{[]string{"verbose"}, `{"verbose":1}`, ""},
		{[]string{"a=[1,2]", "b={\"c\":true}"}, `{"a":[1,2],"b":{"c":true}}`, ""},
		{[]string{"a=1 2"}, `{"a":"1 2"}`, ""},
		{[]string{"a=1", "a.b=2"}, `{"a":{"b":2}}`, ""},
		{[]string{"output.mode=append", "output.limit=1k"}, `{"output":{"limit":"1k","mode":"append"}}`, ""},
		{[]string{"=1"}, "", "a key is missing"},
		{[]string{"a..b=1"}, "", "a key is missing"},
	} {
		opts := map[string]any{}
		var err error
		for _, o := range tc.opts {
			if err = setShellOption(opts, o); err != nil {
				break
			}
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.opts, err, tc.err)
			}
			continue
		}
		got, _ := json.Marshal(opts)
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: %s, %v; want %s", tc.opts, got, err, tc.want)
		}
	}
}
