package rset

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/fluxq/fluxq/internal/idset"
)

var fuzzSeeds = []string{
	`{"version":1,"execution":{"R_lite":[]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"core":"0-7","gpu":"0-1"}}],"nodelist":["n[0-3]"],"properties":{"a":"0-1","b@gpu":"3"},"starttime":1.5,"expiration":2.5,"nslots":4},"scheduling":{"graph":{"nodes":[],"edges":[]}}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}},{"rank":"1","children":{"core":"1"}},{"rank":"0","children":{"core":"1","fpga":"0"}}],"nodelist":["a","b"]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"5,2","children":{"core":"0"}}]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"[0-1023]","children":{"core":"0-3"}}],"nodelist":["foo[0-1023]"]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"","gpu":"0"}}]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0-4000000000","children":{"core":"0"}}]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-4294967294"}}],"nodelist":["node[0-9999999999]"]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"properties":{"p":"0-4294967294"}}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}},{"rank":"1","children":{"core":"3-4"}}]}}`,
	`{"version":1,"execution":{"R_lite":[],"starttime":10,"expiration":5}}`,
	`{"version":2,"execution":{"R_lite":[]}}`,
	`{"version":1.0}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["a,b"]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"":"0"}}]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"properties":{"a^b":"0","":"0"}}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0","<&>":"1"}}],"nodelist":["h\u00e9"]}}`,
	`{"version":1,"execution":{"R_lite":[{"children":{"core":"0-1"},"memory":4294967296,"rank":"0-1"},{"children":{},"memory":7,"rank":"2"}],"nodelist":["n[0-2]"]}}`,
	`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":1.5},{"rank":"0","children":{"core":"1"},"memory":-1}]}}`,
	`[]`, `null`, `nope`, ``,
}

// FuzzParseR checks that Parse never panics and that what it accepts
// round-trips canonically: Parse(Marshal(r)) equals r and marshals to the
// same bytes.
func FuzzParseR(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, name := range []string{"example1.json", "example2.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkParsed(t, data) })
}

// FuzzParseRFields fuzzes the values inside a well-formed R document, where
// byte-level mutation of JSON rarely reaches: two R_lite entries, a
// nodelist, a property and the times.
func FuzzParseRFields(f *testing.F) {
	f.Add("0-3", "0-7", "0-1", "4", "0", "", "n[0-4]", "p", "0-1", 1.5, 2.5)
	f.Add("0-1", "0-3", "", "1", "3-4", "0", "", "amd@gpu", "1", 0.0, 0.0)
	f.Add("[0-1023]", "0-3", "", "[1000-1024]", "4-7", "", "foo[0-1024]", "", "", 0.0, 0.0)
	f.Add("1,7,9,53", "1,5,7,9", "1,3", "", "", "", "foo[1,7,9,53]", "x", "53", 10.0, 5.0)
	f.Add("0", "", "0", "0", "0", "", "a,a", "p!", "0", -1.0, 0.0)
	f.Add("0-4000000000", "0", "", "7", "0-4294967294", "", "n[0-9999999999]", "all", "0-4294967294", 0.0, 1e300)
	f.Fuzz(func(t *testing.T, rank1, core1, gpu1, rank2, core2, gpu2, nodelist, prop, propRanks string, start, exp float64) {
		// Parse of up to MaxRanks ranks is correct but takes a second, and
		// the fuzzer would spend its time minimizing such inputs: leave them
		// to TestParseMaxRanks. Counts past MaxRanks are refused at once.
		c1, _ := idset.Parse(rank1)
		c2, _ := idset.Parse(rank2)
		if n := c1.Count() + c2.Count(); n > 10000 && n <= MaxRanks {
			return
		}
		entry := func(rank, core, gpu string) map[string]any {
			kids := map[string]string{"core": core}
			if gpu != "" {
				kids["gpu"] = gpu
			}
			return map[string]any{"rank": rank, "children": kids}
		}
		exec := map[string]any{
			"R_lite":    []any{entry(rank1, core1, gpu1), entry(rank2, core2, gpu2)},
			"starttime": start, "expiration": exp,
		}
		if nodelist != "" {
			exec["nodelist"] = []string{nodelist}
		}
		if prop != "" {
			exec["properties"] = map[string]string{prop: propRanks}
		}
		data, err := json.Marshal(map[string]any{"version": 1, "execution": exec})
		if err != nil {
			return // NaN or infinite times cannot be written as JSON
		}
		checkParsed(t, data)
		checkAlgebra(t, entry(rank1, core1, gpu1), entry(rank2, core2, gpu2))
	})
}

// checkAlgebra checks set identities on the one-entry Rs of e1 and e2.
func checkAlgebra(t *testing.T, e1, e2 map[string]any) {
	build := func(e map[string]any) *R {
		data, _ := json.Marshal(map[string]any{"version": 1, "execution": map[string]any{"R_lite": []any{e}}})
		r, err := Parse(data)
		if err != nil || r.Ranks().Count() > 2000 {
			return nil
		}
		return r
	}
	a, b := build(e1), build(e2)
	if a == nil || b == nil {
		return
	}
	u, err := a.Union(b)
	if err != nil {
		t.Fatalf("a U b: %v", err)
	}
	back, err := a.Difference(b).Union(a.Intersection(b))
	if err != nil || !back.Equal(a) {
		t.Fatalf("(a-b) U (a∩b) = %v (%v), want a = %v", back, err, a)
	}
	if !u.Difference(b).Equal(a.Difference(b)) {
		t.Fatalf("(a U b) - b != a - b")
	}
	if x, y := a.Intersection(b), b.Intersection(a); x.String() != y.String() {
		t.Fatalf("a ∩ b = %v, b ∩ a = %v", x, y)
	}
	if !u.Intersection(a).Equal(a) {
		t.Fatalf("(a U b) ∩ a != a")
	}
	checkParsed(t, mustJSON(t, u))
}

func mustJSON(t *testing.T, r *R) []byte {
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	return b
}

// checkParsed is the fuzz property: Parse never panics, and what it accepts
// round-trips canonically, Parse(Marshal(r)) equal to r and marshalling to
// the same bytes; set algebra of r with itself gives r back; the fast path
// declines data or agrees with the full parser.
func checkParsed(t *testing.T, data []byte) {
	checkFast(t, data)
	r, err := Parse(data)
	if err != nil {
		return
	}
	s1, err := r.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON of a parsed R: %v", err)
	}
	r2, err := Parse(s1)
	if err != nil {
		t.Fatalf("Parse(MarshalJSON(r)): %v\n%s", err, s1)
	}
	if !r.Equal(r2) {
		t.Fatalf("Parse(MarshalJSON(r)) != r\n%s", s1)
	}
	s2, err := r2.MarshalJSON()
	if err != nil || !bytes.Equal(s1, s2) {
		t.Fatalf("re-marshal differs (%v):\n%s\n%s", err, s1, s2)
	}
	nnodes, _, _ := r.Counts()
	if r.Ranks().Count() != nnodes {
		t.Fatalf("Ranks() has %d ranks, Counts %d", r.Ranks().Count(), nnodes)
	}
	// Set algebra of r with itself, on inputs small enough to be quick.
	if nnodes > 2000 {
		return
	}
	same := r.WithNSlots(0)
	if r.IsEmpty() {
		same, _ = same.WithScheduling(nil)
	}
	// Memory is a quantity, not ids: r U r holds r's memory twice, and is
	// otherwise r.
	u, err := r.Union(r)
	if err != nil || r.Memory() == 0 && !u.Equal(same) || u.Memory() != addMem(r.Memory(), r.Memory()) || !u.Intersection(r).Equal(same) {
		t.Fatalf("r U r is not r with its memory doubled (%v): %v", err, u)
	}
	if i := r.Intersection(r); !i.Equal(same) {
		t.Fatalf("r ∩ r != r: %v", i)
	}
	if d := r.Difference(r); !d.IsEmpty() {
		t.Fatalf("r - r not empty: %v", d)
	}
	if nnodes*len(r.Properties()) > 100000 {
		return
	}
	rebuilt := New(r.Nodes()).WithTimes(r.StartTime(), r.Expiration())
	want, _ := same.WithScheduling(nil)
	if !rebuilt.Equal(want) {
		t.Fatalf("New(r.Nodes()) != r: %v", rebuilt)
	}
}
