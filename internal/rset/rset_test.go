package rset

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/idset"
)

// rc builds a one-entry R document the way flux-core's test/rlist.c
// R_create does; an empty gpus, hosts or props leaves that key out.
func rc(ranks, cores, gpus, hosts, props string) string {
	kids := map[string]string{"core": cores}
	if gpus != "" {
		kids["gpu"] = gpus
	}
	exec := map[string]any{
		"R_lite": []any{map[string]any{"rank": ranks, "children": kids}},
	}
	if hosts != "" {
		exec["nodelist"] = []string{hosts}
	}
	if props != "" {
		exec["properties"] = json.RawMessage(props)
	}
	b, err := json.Marshal(map[string]any{"version": 1, "execution": exec})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func mustParse(t testing.TB, s string) *R {
	t.Helper()
	r, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return r
}

func mustMarshal(t testing.TB, r *R) string {
	t.Helper()
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	return string(b)
}

// roundTrip checks the canonical-form property: Parse(Marshal(r)) equals r
// and marshals to the same bytes.
func roundTrip(t testing.TB, r *R) {
	t.Helper()
	s1 := mustMarshal(t, r)
	r2 := mustParse(t, s1)
	if !r.Equal(r2) {
		t.Errorf("Parse(Marshal(r)) != r\nr:  %v\nr2: %v\njson: %s", r, r2, s1)
	}
	if s2 := mustMarshal(t, r2); s2 != s1 {
		t.Errorf("re-marshal differs:\n%s\n%s", s1, s2)
	}
}

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRFCExamples(t *testing.T) {
	tests := []struct {
		name      string
		data      []byte
		wantNodes []Node
		wantStart float64
		wantExp   float64
		wantSlots int
		wantJSON  string
	}{
		{
			// RFC 20 "Example R": ranks 19 through 22 are node186 through
			// node189, each with 48 cores (0-47) and 8 gpus (0-7), valid for
			// about 30 minutes on February 16, 2023.
			name: "example1",
			data: readExample(t, "example1.json"),
			wantNodes: []Node{
				{Rank: 19, Hostname: "node186", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
				{Rank: 20, Hostname: "node187", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
				{Rank: 21, Hostname: "node188", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
				{Rank: 22, Hostname: "node189", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
			},
			wantStart: 1676560542,
			wantExp:   1676562342,
			wantSlots: 32,
			wantJSON:  `{"execution":{"R_lite":[{"children":{"core":"0-47","gpu":"0-7"},"rank":"19-22"}],"expiration":1676562342,"nodelist":["node[186-189]"],"nslots":32,"starttime":1676560542},"version":1}`,
		},
		{
			// RFC 20 example1.json as first published (commit a440dda1),
			// before nslots was added.
			name: "example1 without nslots",
			data: []byte(`{"version": 1, "execution": {"R_lite": [{"rank": "19-22",
				"children": {"core": "0-47", "gpu": "0-7"}}],
				"nodelist": ["node[186-189]"],
				"starttime": 1676560542, "expiration": 1676562342}}`),
			wantNodes: []Node{
				{Rank: 19, Hostname: "node186", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
				{Rank: 20, Hostname: "node187", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
				{Rank: 21, Hostname: "node188", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
				{Rank: 22, Hostname: "node189", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")},
			},
			wantStart: 1676560542,
			wantExp:   1676562342,
			wantJSON:  `{"execution":{"R_lite":[{"children":{"core":"0-47","gpu":"0-7"},"rank":"19-22"}],"expiration":1676562342,"nodelist":["node[186-189]"],"starttime":1676560542},"version":1}`,
		},
		{
			// RFC 20 data/spec_20/example2.json: two R_lite entries with
			// per-entry "slots", which are ignored as flux-core ignores them.
			name: "example2",
			data: readExample(t, "example2.json"),
			wantNodes: []Node{
				{Rank: 0, Hostname: "host0", Cores: idset.MustParse("0-7"), GPUs: idset.MustParse("0")},
				{Rank: 1, Hostname: "host1", Cores: idset.MustParse("0-7"), GPUs: idset.MustParse("0")},
				{Rank: 2, Hostname: "host2", Cores: idset.MustParse("0-3")},
				{Rank: 3, Hostname: "host3", Cores: idset.MustParse("0-3")},
			},
			wantStart: 1790596800,
			wantExp:   1790598600,
			wantSlots: 6,
			wantJSON:  `{"execution":{"R_lite":[{"children":{"core":"0-7","gpu":"0"},"rank":"0-1"},{"children":{"core":"0-3"},"rank":"2-3"}],"expiration":1790598600,"nodelist":["host[0-3]"],"nslots":6,"starttime":1790596800},"version":1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse(tt.data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.wantNodes, r.Nodes()); diff != "" {
				t.Errorf("Nodes() (-want +got):\n%s", diff)
			}
			got := []any{r.StartTime(), r.Expiration(), r.NSlots()}
			if diff := cmp.Diff([]any{tt.wantStart, tt.wantExp, tt.wantSlots}, got); diff != "" {
				t.Errorf("times, nslots (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantJSON, mustMarshal(t, r)); diff != "" {
				t.Errorf("MarshalJSON (-want +got):\n%s", diff)
			}
			roundTrip(t, r)
		})
	}
}

func TestExample1Accessors(t *testing.T) {
	r := mustParse(t, string(readExample(t, "example1.json")))
	nnodes, ncores, ngpus := r.Counts()
	if diff := cmp.Diff([]int{4, 192, 32}, []int{nnodes, ncores, ngpus}); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("19-22", r.Ranks().String()); diff != "" {
		t.Errorf("Ranks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("node[186-189]", r.Nodelist().String()); diff != "" {
		t.Errorf("Nodelist (-want +got):\n%s", diff)
	}
	n, ok := r.Node(21)
	want := Node{Rank: 21, Hostname: "node188", Cores: idset.MustParse("0-47"), GPUs: idset.MustParse("0-7")}
	if diff := cmp.Diff(want, n); !ok || diff != "" {
		t.Errorf("Node(21) ok=%v (-want +got):\n%s", ok, diff)
	}
	if _, ok := r.Node(23); ok {
		t.Errorf("Node(23) found a rank R does not hold")
	}
	if diff := cmp.Diff("rank[19-22]/core[0-47],gpu[0-7]", r.String()); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // String(), flux-core's rlist_dumps form
	}{
		// flux-core test/rlist.c test_issue2202: one entry per rank.
		{"issue2202", `{"version":1,"execution":{"R_lite":[
			{"rank":"0","children":{"core":"0"}},{"rank":"1","children":{"core":"1"}},
			{"rank":"2","children":{"core":"2"}},{"rank":"3","children":{"core":"3"}}]}}`,
			"rank0/core0 rank1/core1 rank2/core2 rank3/core3"},
		// flux-core test/rlist.c test_issue2202 part B.
		{"issue2202b", `{"version":1,"execution":{"R_lite":[
			{"rank":"0","children":{"core":"0-1"}},{"rank":"1","children":{"core":"0,2"}},
			{"rank":"2","children":{"core":"0,3"}},{"rank":"3","children":{"core":"3-4"}}]}}`,
			"rank0/core[0-1] rank1/core[0,2] rank2/core[0,3] rank3/core[3-4]"},
		// flux-core test/rlist.c test_issue2473.
		{"issue2473", `{"version":1,"execution":{"R_lite":[
			{"rank":"0","children":{"core":"0-3"}},{"rank":"1-2","children":{"core":"0-1"}}]}}`,
			"rank0/core[0-3] rank[1-2]/core[0-1]"},
		// flux-core test/rlist.c test_dumps: long result.
		{"dumps long", `{"version":1,"execution":{"R_lite":[
			{"rank":"0","children":{"core":"0-3"}},{"rank":"1","children":{"core":"0-7"}},
			{"rank":"1234567","children":{"core":"0-12345"}},{"rank":"1234568","children":{"core":"0-12346"}}]}}`,
			"rank0/core[0-3] rank1/core[0-7] rank1234567/core[0-12345] rank1234568/core[0-12346]"},
		// flux-core test/rlist.c remap_tests input.
		{"sparse ranks with gpus", rc("1,7,9,53", "1,5,7,9", "1,3", "", ""),
			"rank[1,7,9,53]/core[1,5,7,9],gpu[1,3]"},
		// flux-core test/rlist.c append_tests: a bracketed rank idset.
		{"bracketed rank idset", rc("[0-3]", "0-3", "", "", ""), "rank[0-3]/core[0-3]"},
		{"same rank in two entries is merged", `{"version":1,"execution":{"R_lite":[
			{"rank":"0-1","children":{"core":"0-3"}},{"rank":"0","children":{"core":"4-7","gpu":"0"}}]}}`,
			"rank0/core[0-7],gpu0 rank1/core[0-3]"},
		{"entries out of rank order", `{"version":1,"execution":{"R_lite":[
			{"rank":"5","children":{"core":"0"}},{"rank":"2","children":{"core":"0"}}]}}`,
			"rank[2,5]/core0"},
		{"gpu-only rank", rc("0", "", "0", "", ""), "rank0/gpu0"},
		{"empty entry for a rank another entry fills", `{"version":1,"execution":{"R_lite":[
			{"rank":"0-1","children":{"core":""}},{"rank":"0-1","children":{"core":"0"}}]}}`, "rank[0-1]/core0"},
		{"extra child kinds are carried", `{"version":1,"execution":{"R_lite":[
			{"rank":"0","children":{"core":"0","fpga":"0-1"}}]}}`, "rank0/core0,fpga[0-1]"},
		{"unknown keys ignored", `{"version":1,"attributes":{"system":{}},"execution":{"future":1,
			"R_lite":[{"rank":"0","children":{"core":"0"},"slots":{}}]}}`, "rank0/core0"},
		{"empty R_lite", `{"version":1,"execution":{"R_lite":[]}}`, ""},
		{"empty rank idset adds nothing", `{"version":1,"execution":{"R_lite":[
			{"rank":"","children":{"core":"0"}},{"rank":"1","children":{"core":"0"}}]}}`, "rank1/core0"},
		{"huge core idset stays a range", rc("0", "0-4000000000", "", "", ""), "rank0/core[0-4000000000]"},
		{"null scheduling is absent", `{"version":1,"scheduling":null,"execution":{"R_lite":[]}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, tt.input)
			if diff := cmp.Diff(tt.want, r.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			roundTrip(t, r)
		})
	}
}

func TestParseErrors(t *testing.T) {
	const v1 = `{"version":1,"execution":`
	tests := []struct {
		name   string
		input  string
		want   string
		prefix bool // want is only the start of the message
	}{
		{"not JSON", `nope`, "invalid JSON: ", true},
		{"trailing garbage", `{"version":1} x`, "invalid JSON: ", true},
		{"not an object", `[]`, "R: expected object, got array", false},
		{"null", `null`, "R: expected object, got null", false},
		{"no version", `{}`, "object item not found: version", false},
		{"version string", `{"version":"1"}`, "version: expected integer, got string", false},
		{"version real", `{"version":1.0}`, "version: expected integer, got real", false},
		// RFC 20: the version key SHALL contain 1; flux-core's wording.
		{"version 2", `{"version":2,"execution":{"R_lite":[]}}`, "invalid version=2", false},
		{"version huge", `{"version":99999999999999999999}`, "invalid version=99999999999999999999", false},
		{"no execution", `{"version":1}`, "object item not found: execution", false},
		{"only scheduling", `{"version":1,"scheduling":{}}`, "object item not found: execution", false},
		{"execution array", v1 + `[]}`, "execution: expected object, got array", false},
		// RFC 20: execution SHALL contain R_lite.
		{"no R_lite", v1 + `{}}`, "execution: object item not found: R_lite", false},
		{"R_lite object", v1 + `{"R_lite":{}}}`, "execution.R_lite: expected array, got object", false},
		{"R_lite null", v1 + `{"R_lite":null}}`, "execution.R_lite: expected array, got null", false},
		{"entry not object", v1 + `{"R_lite":[1]}}`, "execution.R_lite[0]: expected object, got integer", false},
		// RFC 20: each R_lite entry SHALL contain rank and children.
		{"no rank", v1 + `{"R_lite":[{"children":{"core":"0"}}]}}`,
			"execution.R_lite[0]: object item not found: rank", false},
		{"rank integer", v1 + `{"R_lite":[{"rank":0,"children":{"core":"0"}}]}}`,
			"execution.R_lite[0].rank: expected string, got integer", false},
		{"rank bad idset", v1 + `{"R_lite":[{"rank":"x","children":{"core":"0"}}]}}`,
			`execution.R_lite[0].rank: invalid idset "x": `, true},
		{"no children", v1 + `{"R_lite":[{"rank":"0"}]}}`,
			"execution.R_lite[0]: object item not found: children", false},
		{"children array", v1 + `{"R_lite":[{"rank":"0","children":[]}]}}`,
			"execution.R_lite[0].children: expected object, got array", false},
		{"core integer", v1 + `{"R_lite":[{"rank":"0","children":{"core":0}}]}}`,
			"execution.R_lite[0].children.core: expected string, got integer", false},
		{"core bad idset", v1 + `{"R_lite":[{"rank":"0","children":{"core":"3-1"}}]}}`,
			`execution.R_lite[0].children.core: invalid idset "3-1": `, true},
		{"gpu bad idset", v1 + `{"R_lite":[{"rank":"0","children":{"core":"0","gpu":"a"}}]}}`,
			`execution.R_lite[0].children.gpu: invalid idset "a": `, true},
		{"odd child name quoted", v1 + `{"R_lite":[{"rank":"0","children":{"a b":1}}]}}`,
			`execution.R_lite[0].children["a b"]: expected string, got integer`, false},
		{"empty child name", v1 + `{"R_lite":[{"rank":"0","children":{"":"0"}}]}}`,
			`execution.R_lite[0].children[""]: empty resource name`, false},
		{"no resources", v1 + `{"R_lite":[{"rank":"0","children":{}}]}}`,
			"execution.R_lite: rank 0 has no resources", false},
		{"empty core only", v1 + `{"R_lite":[{"rank":"3","children":{"core":""}}]}}`,
			"execution.R_lite: rank 3 has no resources", false},
		{"same core twice", v1 + `{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}},{"rank":"1","children":{"core":"3-4"}}]}}`,
			"execution.R_lite: rank 1 lists core 3 more than once", false},
		{"huge rank idset", v1 + `{"R_lite":[{"rank":"0-4000000000","children":{"core":"0"}}]}}`,
			"execution.R_lite: more than 1000000 ranks", false},
		{"too many ranks in total", v1 + `{"R_lite":[{"rank":"0-599999","children":{"core":"0"}},{"rank":"0-599999","children":{"gpu":"0"}}]}}`,
			"execution.R_lite: more than 1000000 ranks", false},
		{"nodelist string", v1 + `{"R_lite":[],"nodelist":"foo"}}`,
			"execution.nodelist: expected array, got string", false},
		{"nodelist integer", v1 + `{"R_lite":[],"nodelist":[1]}}`,
			"execution.nodelist[0]: expected string, got integer", false},
		// RFC 20: nodelist entries correspond to the R_lite ranks.
		{"nodelist short", rc("0-3", "0", "", "foo[0-2]", ""), "execution.nodelist: 3 hosts for 4 ranks", false},
		{"nodelist long", rc("0-3", "0", "", "foo[0-4]", ""), "execution.nodelist: 5 hosts for 4 ranks", false},
		{"nodelist bad hostlist", rc("0", "0", "", "foo[0-", ""), `execution.nodelist[0]: invalid hostlist "foo[0-": `, true},
		// flux-core test/rlist.c property_tests.
		{"properties string", rc("1-10", "0-1", "", "foo[1-10]", `"foo"`), "properties must be an object", false},
		{"properties value integer", rc("1-10", "0-1", "", "foo[1-10]", `{"foo": 1}`),
			"properties value '1' not a string", false},
		{"properties unknown ranks", rc("1-10", "0-1", "", "foo[1-10]", `{"foo": "1-30"}`),
			"ranks 11-30 not found in target resource list", false},
		{"properties unknown rank", rc("1-10", "0-1", "", "foo[1-10]", `{"foo": "0"}`),
			"rank 0 not found in target resource list", false},
		{"properties bad character", rc("1-10", "0-1", "", "foo[1-10]", `{"fo^o": "1-30"}`),
			`invalid character '^' in property "fo^o"`, false},
		{"properties bad idset", rc("1-10", "0-1", "", "foo[1-10]", `{"foo": "x-y"}`),
			`invalid idset 'x-y' specified for property "foo"`, false},
		// RFC 20: property names MUST NOT contain ! & ' " ^ ` | ( ).
		{"properties bang", rc("0", "0", "", "", `{"a!b": "0"}`), `invalid character '!' in property "a!b"`, false},
		{"properties paren", rc("0", "0", "", "", `{"a(b": "0"}`), `invalid character '(' in property "a(b"`, false},
		{"properties empty name", rc("0", "0", "", "", `{"": "0"}`), "empty property name", false},
		{"properties nested value", rc("0", "0", "", "", `{"a": { "b" : [1, 2] }}`),
			`properties value '{"b":[1,2]}' not a string`, false},
		{"starttime string", v1 + `{"R_lite":[],"starttime":"1"}}`, "execution.starttime: expected number, got string", false},
		{"starttime negative", v1 + `{"R_lite":[],"starttime":-1}}`, "execution.starttime: -1 is not a time since the epoch", false},
		{"expiration overflow", v1 + `{"R_lite":[],"expiration":1e999}}`, "execution.expiration: number 1e999 out of range", false},
		// RFC 20: if starttime is also set, expiration MUST be greater.
		{"expiration before start", v1 + `{"R_lite":[],"starttime":10,"expiration":5}}`,
			"execution: expiration 5 must be greater than starttime 10", false},
		{"expiration equals start", v1 + `{"R_lite":[],"starttime":10,"expiration":10}}`,
			"execution: expiration 10 must be greater than starttime 10", false},
		{"nslots string", v1 + `{"R_lite":[],"nslots":"3"}}`, "execution.nslots: expected integer, got string", false},
		{"nslots negative", v1 + `{"R_lite":[],"nslots":-1}}`, "execution.nslots: invalid value -1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse([]byte(tt.input))
			if err == nil {
				t.Fatalf("Parse succeeded: %v", r)
			}
			got := err.Error()
			if tt.prefix && strings.HasPrefix(got, tt.want) {
				got = tt.want
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// Huge counts must be refused by counting, never by expanding.
func TestParseHugeNodelist(t *testing.T) {
	_, err := Parse([]byte(rc("0", "0", "", "node[0-9999999999]", "")))
	if err == nil {
		t.Fatal("Parse accepted 10^10 hosts for one rank")
	}
	_, err = Parse([]byte(rc("0", "0", "", "", `{"p": "0-4294967294"}`)))
	if diff := cmp.Diff("ranks 1-4294967294 not found in target resource list", err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestMarshalCanonical(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"empty", `{"version":1,"execution":{"R_lite":[]}}`,
			`{"execution":{"R_lite":[],"expiration":0,"nodelist":[],"starttime":0},"version":1}`},
		{"no nodelist stays without one", rc("0-1", "0-3", "", "", ""),
			`{"execution":{"R_lite":[{"children":{"core":"0-3"},"rank":"0-1"}],"expiration":0,"starttime":0},"version":1}`},
		// Entries merge by identical children and are ordered by first rank.
		{"compressed by children", `{"version":1,"execution":{"R_lite":[
			{"rank":"3","children":{"core":"0-1"}},{"rank":"1","children":{"gpu":"0","core":"0-3"}},
			{"rank":"0,2","children":{"core":"0-1"}}]}}`,
			`{"execution":{"R_lite":[{"children":{"core":"0-1"},"rank":"0,2-3"},{"children":{"core":"0-3","gpu":"0"},"rank":"1"}],"expiration":0,"starttime":0},"version":1}`},
		{"split entries rejoined", `{"version":1,"execution":{"R_lite":[
			{"rank":"0-1","children":{"core":"0-1"}},{"rank":"0-1","children":{"core":"2-3"}}]}}`,
			`{"execution":{"R_lite":[{"children":{"core":"0-3"},"rank":"0-1"}],"expiration":0,"starttime":0},"version":1}`},
		{"properties sorted", rc("0-3", "0", "", "n[0-3]", `{"zeta":"3","alpha":"0-1","amd-mi50@gpu":"2"}`),
			`{"execution":{"R_lite":[{"children":{"core":"0"},"rank":"0-3"}],"expiration":0,"nodelist":["n[0-3]"],"properties":{"alpha":"0-1","amd-mi50@gpu":"2","zeta":"3"},"starttime":0},"version":1}`},
		{"property on no rank dropped", rc("0", "0", "", "", `{"none":""}`),
			`{"execution":{"R_lite":[{"children":{"core":"0"},"rank":"0"}],"expiration":0,"starttime":0},"version":1}`},
		{"fractional times", `{"version":1,"execution":{"R_lite":[],"starttime":1.5,"expiration":2.000001}}`,
			`{"execution":{"R_lite":[],"expiration":2.000001,"nodelist":[],"starttime":1.5},"version":1}`},
		// RFC 20: scheduling rides along, opaque; only whitespace changes.
		{"scheduling compacted", `{"version":1,"execution":{"R_lite":[]},
			"scheduling": {"graph": {"nodes": [ ], "edges": [{"b":1, "a":2}]}}}`,
			`{"execution":{"R_lite":[],"expiration":0,"nodelist":[],"starttime":0},"scheduling":{"graph":{"nodes":[],"edges":[{"b":1,"a":2}]}},"version":1}`},
		{"extra children sorted with core and gpu", `{"version":1,"execution":{"R_lite":[
			{"rank":"0","children":{"gpu":"0","core":"0","aaa":"1","zzz":"2"}}]}}`,
			`{"execution":{"R_lite":[{"children":{"aaa":"1","core":"0","gpu":"0","zzz":"2"},"rank":"0"}],"expiration":0,"starttime":0},"version":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, tt.input)
			if diff := cmp.Diff(tt.want, mustMarshal(t, r)); diff != "" {
				t.Errorf("MarshalJSON (-want +got):\n%s", diff)
			}
			roundTrip(t, r)
		})
	}
}

func TestMarshalErrors(t *testing.T) {
	base := New([]Node{
		{Rank: 0, Hostname: "a", Cores: idset.MustParse("0")},
		{Rank: 1, Hostname: "b", Cores: idset.MustParse("0")},
	})
	tests := []struct {
		name string
		r    *R
		want string
	}{
		{"some hostnames missing", New([]Node{
			{Rank: 0, Hostname: "a", Cores: idset.MustParse("0")},
			{Rank: 1, Cores: idset.MustParse("0")},
		}), "nodelist: rank 1 has no hostname while others do"},
		{"hostname that is a hostlist", New([]Node{
			{Rank: 0, Hostname: "a,b", Cores: idset.MustParse("0")},
		}), `nodelist: rank 0: invalid hostname "a,b"`},
		{"bad property", New([]Node{
			{Rank: 0, Cores: idset.MustParse("0"), Properties: []string{"a|b"}},
		}), `invalid character '|' in property "a|b"`},
		{"empty property", New([]Node{
			{Rank: 0, Cores: idset.MustParse("0"), Properties: []string{""}},
		}), "empty property name"},
		{"empty child name", New([]Node{
			{Rank: 0, Extra: map[string]idset.Set{"": idset.MustParse("0")}},
		}), "rank 0: empty resource name"},
		{"expiration before start", base.WithTimes(20, 10), "execution: expiration 10 must be greater than starttime 20"},
		{"negative start", base.WithTimes(-1, 0), "execution.starttime: -1 is not a time since the epoch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.r.MarshalJSON()
			if err == nil {
				t.Fatalf("MarshalJSON succeeded: %s", b)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name  string
		nodes []Node
		want  []Node
	}{
		{"sorted by rank, properties sorted", []Node{
			{Rank: 2, Hostname: "n2", Cores: idset.MustParse("0-1"), Properties: []string{"b", "a"}},
			{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1"), GPUs: idset.MustParse("0")},
		}, []Node{
			{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1"), GPUs: idset.MustParse("0")},
			{Rank: 2, Hostname: "n2", Cores: idset.MustParse("0-1"), Properties: []string{"a", "b"}},
		}},
		{"duplicate rank merged, first hostname wins", []Node{
			{Rank: 1, Hostname: "x", Cores: idset.MustParse("0-1"), Properties: []string{"p"}},
			{Rank: 1, Hostname: "y", Cores: idset.MustParse("2"), GPUs: idset.MustParse("1"), Properties: []string{"q"}},
		}, []Node{
			{Rank: 1, Hostname: "x", Cores: idset.MustParse("0-2"), GPUs: idset.MustParse("1"), Properties: []string{"p", "q"}},
		}},
		{"empty node dropped", []Node{
			{Rank: 0, Hostname: "n0"},
			{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0")},
		}, []Node{
			{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0")},
		}},
		{"rank above idset.MaxID dropped", []Node{
			{Rank: idset.MaxID + 1, Cores: idset.MustParse("0")},
		}, []Node{}},
		{"extra core and gpu keys fold in", []Node{
			{Rank: 0, Cores: idset.MustParse("0"), Extra: map[string]idset.Set{
				"core": idset.MustParse("1"), "gpu": idset.MustParse("0"), "nic": idset.MustParse("0"), "ssd": {}}},
		}, []Node{
			{Rank: 0, Cores: idset.MustParse("0-1"), GPUs: idset.MustParse("0"), Extra: map[string]idset.Set{"nic": idset.MustParse("0")}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(tt.nodes)
			if diff := cmp.Diff(tt.want, r.Nodes()); diff != "" {
				t.Errorf("Nodes (-want +got):\n%s", diff)
			}
			roundTrip(t, r)
			if diff := cmp.Diff(r.Nodes(), New(r.Nodes()).Nodes()); diff != "" {
				t.Errorf("New(r.Nodes()) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnmarshalJSONInStruct(t *testing.T) {
	var msg struct {
		ID int `json:"id"`
		R  *R  `json:"R"`
	}
	in := `{"id":7,"R":` + rc("0-1", "0-3", "0", "n[0-1]", "") + `}`
	if err := json.Unmarshal([]byte(in), &msg); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("rank[0-1]/core[0-3],gpu0", msg.R.String()); diff != "" {
		t.Errorf("R (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":7,"R":{"execution":{"R_lite":[{"children":{"core":"0-3","gpu":"0"},"rank":"0-1"}],"expiration":0,"nodelist":["n[0-1]"],"starttime":0},"version":1}}`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("json.Marshal (-want +got):\n%s", diff)
	}
	err = json.Unmarshal([]byte(`{"R":{"version":2}}`), &msg)
	if err == nil || err.Error() != "invalid version=2" {
		t.Errorf("Unmarshal of bad R: %v", err)
	}
}

func TestNilAndZero(t *testing.T) {
	var nilR *R
	for name, r := range map[string]*R{"nil": nilR, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			n, c, g := r.Counts()
			got := []any{r.IsEmpty(), n, c, g, r.String(), r.Ranks().String(), r.StartTime(),
				r.HasProperty("x"), len(r.Nodes()), r.Nodelist().Count()}
			want := []any{true, 0, 0, 0, "", "", 0.0, false, 0, 0}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !r.Equal(&R{}) || !r.Copy().Equal(nilR) {
				t.Errorf("empty R not Equal to another empty R")
			}
			roundTrip(t, r.Copy())
		})
	}
}

func TestWithers(t *testing.T) {
	r := mustParse(t, rc("0", "0", "", "n0", ""))
	r2 := r.WithTimes(1234, 2345).WithNSlots(3)
	// flux-core test/rlist.c test_timelimits: times survive encode/decode.
	back := mustParse(t, mustMarshal(t, r2))
	got := []any{back.StartTime(), back.Expiration(), back.NSlots(), r.StartTime(), r.NSlots()}
	if diff := cmp.Diff([]any{1234.0, 2345.0, 3, 0.0, 0}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	r3, err := r.WithScheduling(json.RawMessage(`{ "graph": {} }`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"graph":{}}`, string(r3.Scheduling())); diff != "" {
		t.Errorf("Scheduling (-want +got):\n%s", diff)
	}
	if r.Scheduling() != nil || r.Equal(r3) {
		t.Errorf("WithScheduling changed its receiver")
	}
	if _, err := r.WithScheduling(json.RawMessage(`{`)); err == nil {
		t.Errorf("WithScheduling accepted invalid JSON")
	}
	r4, _ := r3.WithScheduling(nil)
	if !r4.Equal(r) {
		t.Errorf("WithScheduling(nil) did not remove the key")
	}
}

// A short document must not make every rank carry a long core list.
func TestParseMaxRanges(t *testing.T) {
	var cores []string
	for i := range 2000 {
		cores = append(cores, strconv.Itoa(2*i))
	}
	_, err := Parse([]byte(rc("0-499999", strings.Join(cores, ","), "", "", "")))
	want := "execution.R_lite: more than 10000000 child idset ranges over all ranks"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// MaxRanks ranks are accepted and round-trip.
func TestParseMaxRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("a million ranks")
	}
	r := mustParse(t, rc("0-999999", "0-3", "0", "n[0-999999]", `{"p":"0-999999"}`))
	n, c, g := r.Counts()
	if diff := cmp.Diff([]int{1000000, 4000000, 1000000}, []int{n, c, g}); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
	want := `{"execution":{"R_lite":[{"children":{"core":"0-3","gpu":"0"},"rank":"0-999999"}],"expiration":0,"nodelist":["n[0-999999]"],"properties":{"p":"0-999999"},"starttime":0},"version":1}`
	if diff := cmp.Diff(want, mustMarshal(t, r)); diff != "" {
		t.Errorf("MarshalJSON (-want +got):\n%s", diff)
	}
}

// TestGroupsManyKinds holds groups' one-by-one search and its keyed one
// (past linearGroups kinds of node) to the same entries: ranks of a
// kind, interleaved with others, end in one entry, and the R reads back.
func TestGroupsManyKinds(t *testing.T) {
	for _, kinds := range []int{1, 3, linearGroups, linearGroups + 1, 3 * linearGroups} {
		var views []Node
		for rank := range uint(4 * kinds) {
			k := rank % uint(kinds)
			views = append(views, Node{Rank: rank, Cores: idset.Of(0, k+1), Memory: uint64(1+rank%2) << 30})
		}
		r := New(views)
		for _, withMem := range []bool{false, true} {
			gs := r.groups(withMem)
			want := kinds
			if withMem && kinds%2 == 1 {
				want = 2 * kinds // memory alternates by rank, kind by rank % kinds
			}
			if len(gs) != want {
				t.Errorf("%d kinds, memory %v: %d groups, want %d", kinds, withMem, len(gs), want)
			}
		}
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equal(r) {
			t.Errorf("%d kinds: %s reads back as %s", kinds, b, back)
		}
	}
}

// TestStringSharedKids holds String's one-group shortcut (every rank
// holding one shared children slice, as New gives like views) to the
// grouped form, and New to sharing the children only of like views.
func TestStringSharedKids(t *testing.T) {
	one := func(ids ...uint) idset.Set { return idset.Of(ids...) }
	for _, tc := range []struct {
		name  string
		views []Node
		want  string
	}{
		{"like", []Node{{Rank: 0, Cores: one(0)}, {Rank: 1, Cores: one(0)}, {Rank: 3, Cores: one(0)}, {Rank: 4, Cores: one(0)}}, "rank[0-1,3-4]/core0"},
		{"one", []Node{{Rank: 7, Cores: one(1, 2)}}, "rank7/core[1-2]"},
		{"gpus", []Node{{Rank: 0, Cores: one(0), GPUs: one(1)}, {Rank: 1, Cores: one(0), GPUs: one(1)}}, "rank[0-1]/core0,gpu1"},
		{"unlike", []Node{{Rank: 0, Cores: one(0)}, {Rank: 1, Cores: one(1)}, {Rank: 2, Cores: one(0)}}, "rank[0,2]/core0 rank1/core1"},
		{"gpu differs", []Node{{Rank: 0, Cores: one(0)}, {Rank: 1, Cores: one(0), GPUs: one(0)}}, "rank0/core0 rank1/core0,gpu0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.views)
			if got := r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := r.groupsString(); got != tc.want {
				t.Errorf("groupsString() = %q, want %q", got, tc.want)
			}
			for i, v := range tc.views {
				if got := r.PartAt(i); got.Rank != v.Rank || !got.Cores.Equal(v.Cores) || !got.GPUs.Equal(v.GPUs) {
					t.Errorf("PartAt(%d) = %+v, want the view %+v", i, got, v)
				}
			}
		})
	}
}
