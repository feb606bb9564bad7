package jobspec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseJobspec: Parse never panics; whatever it accepts marshals to
// canonical JSON that parses back to an equal value and marshals to the
// same bytes. Inputs are capped (MaxSize, MaxDepth, the YAML node budget)
// so no input can make Parse allocate without bound. The fast path declines
// or agrees with the full one.
func FuzzParseJobspec(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(typicalJobspec))
	// The seeds are part of the repository: none missing goes unnoticed.
	for _, glob := range []string{"testdata/rfc/*/*.yaml", fluxCoreVectors + "/*/*.yaml"} {
		files, _ := filepath.Glob(glob)
		if len(files) == 0 {
			f.Fatalf("no seed matches %s", glob)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range []string{
		"",
		"a: &a [*a]",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b, *b]\n",
		"{version: 1}",
		`{"version":1,"version":1}`,
		`{"a":"\ud83d\ude00\u00e9\u0000"}`,
		edit(`"duration":0`, `"duration":1e400`),
		edit(`"duration":0`, `"duration":-0.0,"x":[1.5e-7,12345678901234567890]`),
		edit(`"count":1,"label"`, `"count":4294967296,"label"`),
		edit(`"per_slot":1`, `"total":3`),
		"version: 1\nresources: !!binary aGVsbG8=\n",
		"--- |\n  text\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data)
		j, err := Parse(data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		b1, err := j.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of an accepted jobspec: %v", err)
		}
		j2, err := Parse(b1)
		if err != nil {
			t.Fatalf("Parse(MarshalJSON) = %v\n%s", err, b1)
		}
		if diff := cmp.Diff(j, j2); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		b2, err := j2.MarshalJSON()
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("not canonical (%v):\n%s\n%s", err, b1, b2)
		}
		c := j.Counts()
		if c.NSlots < 1 || c.NCores < c.NSlots || c.NTasks < 1 || c.NTasks > MaxCount || c.NCores > MaxCount || c.NGPUs > MaxCount {
			t.Fatalf("Counts of a valid jobspec out of range: %+v", c)
		}
	})
}

// FuzzFromOptions: FromOptions never panics, and what it builds is valid,
// canonical, and asks for what the options said.
func FuzzFromOptions(f *testing.F) {
	f.Add(0, 0, 0, 0, false, 0.0, "hostname", "/tmp", "name", "afterok:123")
	f.Add(3, 2, 1, 2, true, 3600.0, "a\x00b", "rel", "", "bad uri")
	f.Add(-1, -1, -1, -1, true, -1.0, "", "", "", "")
	f.Add(1<<30, 4, 0, 7, false, 1e300, "x", "/", "ƒ", "x:1?a=b&a=2")
	f.Fuzz(func(t *testing.T, n, c, g, nodes int, x bool, dur float64, arg, cwd, name, dep string) {
		o := Options{
			NTasks: n, CoresPerTask: c, GPUsPerTask: g, Nodes: nodes, Exclusive: x,
			Duration: dur, Command: []string{arg}, Cwd: cwd, Name: name,
			Dependencies: []string{dep},
			Environment:  map[string]string{"K": name},
			Extra:        map[string]any{"note": fmt.Sprint(n)},
		}
		j, err := FromOptions(o)
		if err != nil {
			return
		}
		if err := j.Validate(); err != nil {
			t.Fatalf("FromOptions built an invalid jobspec: %v", err)
		}
		checkRoundTrip(t, j)
		want := n
		if want == 0 {
			want = max(nodes, 1)
		}
		if got := j.Counts(); got.NTasks != want || (nodes > 0 && got.NNodes != nodes) {
			t.Fatalf("Counts = %+v for %+v", got, o)
		}
	})
}

// typicalJobspec is what `flux submit -N1 -n2 -c2 -t 1h sleep 60` writes
// (Python json.dumps layout), with an environment of 30 variables and the
// rlimit shell options flux submit adds.
var typicalJobspec = func() string {
	env := []string{
		`"SHELL": "/bin/bash"`, `"HOME": "/home/alice"`, `"USER": "alice"`, `"LOGNAME": "alice"`,
		`"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/home/alice/.local/bin"`,
		`"LANG": "en_US.UTF-8"`, `"TERM": "xterm-256color"`, `"PWD": "/home/alice/work"`,
		`"OLDPWD": "/home/alice"`, `"EDITOR": "vim"`, `"PAGER": "less"`, `"LESS": "-R"`,
		`"MAIL": "/var/mail/alice"`, `"HOSTNAME": "login1"`, `"SHLVL": "2"`,
		`"XDG_RUNTIME_DIR": "/run/user/1000"`, `"XDG_SESSION_ID": "42"`,
		`"SSH_CONNECTION": "10.0.0.2 51234 10.0.0.1 22"`, `"SSH_TTY": "/dev/pts/3"`,
		`"LD_LIBRARY_PATH": "/opt/mpi/lib:/opt/cuda/lib64"`, `"MANPATH": "/usr/share/man:/opt/mpi/share/man"`,
		`"MODULEPATH": "/etc/modulefiles:/usr/share/modulefiles"`, `"LOADEDMODULES": "gcc/12.2:openmpi/4.1"`,
		`"OMP_NUM_THREADS": "2"`, `"PYTHONPATH": "/home/alice/lib/python"`, `"TZ": "UTC"`,
		`"HISTSIZE": "10000"`, `"COLORTERM": "truecolor"`, `"FLUX_URI": "local:///run/flux/local"`,
		`"_": "/usr/bin/flux"`,
	}
	return `{"resources": [{"type": "node", "count": 1, "with": [{"type": "slot", "count": 2, ` +
		`"with": [{"type": "core", "count": 2}], "label": "task"}]}], ` +
		`"tasks": [{"command": ["sleep", "60"], "slot": "task", "count": {"per_slot": 1}}], ` +
		`"attributes": {"system": {"duration": 3600.0, "cwd": "/home/alice/work", ` +
		`"shell": {"options": {"rlimit": {"cpu": -1, "fsize": -1, "data": -1, "stack": 8388608, ` +
		`"core": 0, "nproc": 127431, "as": -1}}}, "environment": {` + strings.Join(env, ", ") + `}}}, ` +
		`"version": 1}`
}()

// BenchmarkParse is parse+validate of a typical flux submit jobspec.
func BenchmarkParse(b *testing.B) {
	data := []byte(typicalJobspec)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal is writing the same jobspec canonically.
func BenchmarkMarshal(b *testing.B) {
	j, err := Parse([]byte(typicalJobspec))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseYAML is the YAML path, for comparison: the RFC example.
func BenchmarkParseYAML(b *testing.B) {
	data, err := os.ReadFile("testdata/rfc/spec_25/example1.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
