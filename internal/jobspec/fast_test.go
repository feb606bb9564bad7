package jobspec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkFast is parseFast's promise on data: it declines, or it returns
// what parseFull returns, field for field, written the same and counted
// the same; and Parse answers as parseFull does. It reports whether
// parseFast accepted data.
func checkFast(t *testing.T, data []byte) bool {
	t.Helper()
	fast := parseFast(data)
	full, err := parseFull(data)
	got, gerr := Parse(data)
	if (gerr == nil) != (err == nil) || gerr != nil && gerr.Error() != err.Error() {
		t.Fatalf("Parse error %v, parseFull error %v, for\n%s", gerr, err, data)
	}
	if fast == nil {
		return false
	}
	if err != nil {
		t.Fatalf("parseFast accepted what parseFull refuses (%v):\n%s", err, data)
	}
	if diff := cmp.Diff(full, fast); diff != "" || !reflect.DeepEqual(fast, full) || !reflect.DeepEqual(got, full) {
		t.Fatalf("parseFast != parseFull (-full +fast):\n%s\nfor\n%s", diff, data)
	}
	bf, errf := fast.MarshalJSON()
	bs, errs := full.MarshalJSON()
	if string(bf) != string(bs) || (errf == nil) != (errs == nil) {
		t.Fatalf("MarshalJSON differs for\n%s\nfast: %s (%v)\nfull: %s (%v)", data, bf, errf, bs, errs)
	}
	if fast.Counts() != full.Counts() {
		t.Fatalf("Counts differ: fast %+v, full %+v", fast.Counts(), full.Counts())
	}
	return true
}

// submitted is a jobspec as fluxq submit writes it (MarshalJSON, keys
// sorted), its environment shortened.
const submitted = `{"attributes":{"system":{"cwd":"/tmp","duration":0.0,"environment":{"HOME":"/root","LANG":"C.UTF-8",` +
	`"PATH":"/usr/local/bin:/usr/bin:/bin","SHELL":"/bin/bash","_":"/usr/bin/fluxq"}}},` +
	`"resources":[{"count":1,"label":"task","type":"slot","with":[{"count":1,"type":"core"}]}],` +
	`"tasks":[{"command":["true"],"count":{"per_slot":1},"slot":"task"}],"version":1}`

// TestParseFastSameAsFull: parseFast takes the common shapes, declines
// the others, and what it takes is parseFull's Jobspec.
func TestParseFastSameAsFull(t *testing.T) {
	tests := []struct {
		name string
		in   string
		fast bool // parseFast must accept it
	}{
		{"minimal", minimal, true},
		{"flux submit's", typicalJobspec, true},
		{"fluxq submit's", submitted, true},
		{"pretty printed", " \n" + strings.ReplaceAll(strings.ReplaceAll(minimal, ",", " ,\n\t"), ":", " : ") + "\r\n", true},
		{"keys in other orders", `{"attributes":{"system":{"duration":0}},"tasks":[{"count":{"per_slot":1},"slot":"task","command":["app"]}],` +
			`"resources":[{"with":[{"count":1,"type":"core"}],"label":"task","count":1,"type":"slot"}],"version":1}`, true},
		{"node, exclusive, unit, gpu", edit(`[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}]`,
			`[{"type":"node","count":2,"unit":"","exclusive":true,"with":[{"type":"slot","count":1,"label":"task","exclusive":false,`+
				`"with":[{"type":"core","count":4},{"type":"gpu","count":0}]}]}]`), true},
		{"total count", edit(`"per_slot":1`, `"total":3`), true},
		{"every attribute", edit(`"system":{"duration":0}`, `"system":{"duration":3600,"cwd":"/w","queue":"batch","job":{"name":"x","y":"z"},`+
			`"constraints":{"properties":["amd"]},"dependencies":[{"scheme":"afterok","value":"1","x":[1]}],`+
			`"shell":{"options":{"rlimit":{"cpu":-1}},"other":1},"environment":{"A":"1"},"note":[1.50,null,true]},"user":{"k":{"v":1e3}}`), true},
		{"environment not all strings", edit(`"duration":0`, `"duration":0,"environment":{"A":"1","B":2}`), false},
		{"escapes in strings", edit(`["app"]`, `["\u00e9\ud83d\ude00","a\"b\\c\/d\n"]`), true},
		{"UTF-8 in strings", edit(`["app"]`, `["héllo"]`), true},
		{"duration real", edit(`"duration":0`, `"duration":1.5e3`), true},
		{"count with exponent", edit(`"count":1,"label"`, `"count":1e0,"label"`), false},
		{"count as string", edit(`"count":1,"label"`, `"count":"1","label"`), false},
		{"count null", edit(`"count":1,"label"`, `"count":null,"label"`), false},
		{"count negative", edit(`"count":1,"label"`, `"count":-1,"label"`), false},
		{"count zero", edit(`"count":1,"label"`, `"count":0,"label"`), false},
		{"count out of range", edit(`"count":1,"label"`, `"count":4294967296,"label"`), false},
		{"count past int64", edit(`"count":1,"label"`, `"count":99999999999999999999,"label"`), false},
		{"count leading zero", edit(`"count":1,"label"`, `"count":01,"label"`), false},
		{"label null", edit(`"label":"task"`, `"label":null`), false},
		{"exclusive null", edit(`"label":"task"`, `"label":"task","exclusive":null`), false},
		{"exclusive string", edit(`"label":"task"`, `"label":"task","exclusive":"true"`), false},
		{"resource id", edit(`"label":"task"`, `"label":"task","id":1`), false},
		{"resource unknown key", edit(`"label":"task"`, `"label":"task","x":1`), false},
		{"resource without type", edit(`{"type":"core","count":1}`, `{"count":1}`), false},
		{"resource without count", edit(`{"type":"core","count":1}`, `{"type":"core"}`), false},
		{"with not an array", edit(`"with":[{"type":"core","count":1}]`, `"with":{"type":"core","count":1}`), false},
		{"duplicate top key", edit(`"version":1,`, `"version":1,"version":1,`), false},
		{"duplicate resource key", edit(`"label":"task"`, `"label":"task","label":"task"`), false},
		{"duplicate task key", edit(`"slot":"task"`, `"slot":"task","slot":"task"`), false},
		{"duplicate count key", edit(`"per_slot":1`, `"per_slot":1,"per_slot":1`), false},
		{"duplicate attribute key", edit(`"duration":0`, `"duration":0,"duration":0`), false},
		{"two task counts", edit(`"per_slot":1`, `"per_slot":1,"total":1`), false},
		{"per_resource", edit(`"per_slot":1`, `"per_resource":1`), false},
		{"per_slot zero", edit(`"per_slot":1`, `"per_slot":0`), false},
		{"per_slot 2", edit(`"per_slot":1`, `"per_slot":2`), false},
		{"empty count", edit(`{"per_slot":1}`, `{}`), false},
		{"task attributes", edit(`"slot":"task"`, `"slot":"task","attributes":{}`), false},
		{"task without slot", edit(`"slot":"task",`, ``), false},
		{"command not strings", edit(`["app"]`, `["app",1]`), false},
		{"empty command", edit(`["app"]`, `[]`), false},
		{"NUL in command", edit(`["app"]`, `["a\u0000b"]`), false},
		{"version as string", edit(`"version":1`, `"version":"1"`), false},
		{"version real", edit(`"version":1`, `"version":1.0`), false},
		{"version 2", edit(`"version":1`, `"version":2`), false},
		{"version 0", edit(`"version":1`, `"version":0`), false},
		{"no version", edit(`"version":1,`, ``), false},
		{"unknown top key", edit(`"version":1,`, `"version":1,"x":1,`), false},
		{"no resources", edit(`"resources":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}],`, ``), false},
		{"empty resources", edit(`[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}]`, `[]`), false},
		{"two tasks", edit(`"tasks":[{"command":["app"],"slot":"task","count":{"per_slot":1}}]`,
			`"tasks":[{"command":["app"],"slot":"task","count":{"per_slot":1}},{"command":["app"],"slot":"task","count":{"per_slot":1}}]`), false},
		{"empty user", edit(`"system":{"duration":0}`, `"system":{"duration":0},"user":{}`), false},
		{"no duration", edit(`"duration":0`, `"cwd":"/"`), false},
		{"relative cwd", edit(`"duration":0`, `"duration":0,"cwd":"rel"`), false},
		{"trailing garbage", minimal + "x", false},
		{"two documents", minimal + minimal, false},
		{"trailing comma", edit(`"version":1,`, `"version":1,,`), false},
		{"truncated", minimal[:len(minimal)-1], false},
		{"invalid UTF-8", edit(`["app"]`, "[\"a\xffb\"]"), false},
		{"YAML flow mapping", `{version: 1}`, false},
		{"YAML", "version: 1\n", false},
		{"null", `null`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkFast(t, []byte(tt.in)); got != tt.fast {
				_, err := parseFull([]byte(tt.in))
				t.Fatalf("parseFast accepted = %v, want %v (parseFull: %v)", got, tt.fast, err)
			}
		})
	}
}

// TestParseFastVectors: on every RFC and flux-core vector, as written and
// as JSON, parseFast declines or agrees with parseFull, and it takes the
// canonical JSON of every vector the full path accepts.
func TestParseFastVectors(t *testing.T) {
	var files []string
	for _, glob := range []string{"testdata/rfc/*/*.yaml", fluxCoreVectors + "/*/*.yaml"} {
		m, _ := filepath.Glob(glob)
		if len(m) == 0 {
			t.Fatalf("no file matches %s", glob)
		}
		files = append(files, m...)
	}
	accepted := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkFast(t, data)
		// The vector as JSON, before any decoding: the defects of the
		// invalid ones reach parseFast too.
		if tree, err := parseYAML(data); err == nil {
			if b, err := appendValue(nil, tree, 0); err == nil {
				checkFast(t, b)
			}
		}
		if j, err := parseFull(data); err == nil {
			b, err := j.MarshalJSON()
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if !checkFast(t, b) {
				t.Errorf("%s: parseFast declined its canonical JSON\n%s", file, b)
			}
			accepted++
		}
	}
	if accepted == 0 {
		t.Fatal("no vector accepted")
	}
}

// FuzzParseFast: for any input, parseFast declines or agrees with
// parseFull. The seeds include shapes it accepts, so mutations explore both
// sides of each decline. FuzzParseJobspec checks the same property.
func FuzzParseFast(f *testing.F) {
	for _, s := range []string{minimal, typicalJobspec, submitted,
		edit(`"per_slot":1`, `"total":3`),
		edit(`"label":"task"`, `"label":"task","exclusive":true,"unit":"x"`),
		edit(`"system":{"duration":0}`, `"system":{"duration":1.5,"job":{"name":"n"}},"user":{"a":[1,"b"]}`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFast(t, data) })
}
