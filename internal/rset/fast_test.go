package rset

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
)

// checkFast is parseFast's promise on data: it declines, or it returns
// what parseFull returns, field for field and by every accessor. It
// reports whether parseFast accepted data.
func checkFast(t *testing.T, data []byte) bool {
	t.Helper()
	fast, ok := parseFast(data)
	full, err := parseFull(data)
	if !ok {
		if fast != nil {
			t.Fatalf("parseFast declined but returned %v", fast)
		}
		return false
	}
	if err != nil {
		t.Fatalf("parseFast accepted what parseFull refuses (%v):\n%s", err, data)
	}
	if !reflect.DeepEqual(fast, full) {
		t.Fatalf("parseFast != parseFull for\n%s\nfast: %#v\nfull: %#v", data, fast, full)
	}
	jf, errf := fast.MarshalJSON()
	js, errs := full.MarshalJSON()
	if !bytes.Equal(jf, js) || (errf == nil) != (errs == nil) {
		t.Fatalf("MarshalJSON differs for\n%s\nfast: %s (%v)\nfull: %s (%v)", data, jf, errf, js, errs)
	}
	type view struct {
		Nodes                []Node
		Ranks, Nodelist      string
		N, Cores, GPUs       int
		Start, Exp           float64
		NSlots               int
		Props                []string
		Sched                []byte
		Empty                bool
		FirstNode, FirstSeen any
	}
	look := func(r *R) view {
		v := view{Nodes: r.Nodes(), Ranks: r.Ranks().String(), Nodelist: r.Nodelist().String(),
			Start: r.StartTime(), Exp: r.Expiration(), NSlots: r.NSlots(), Props: r.Properties(),
			Sched: r.Scheduling(), Empty: r.IsEmpty()}
		v.N, v.Cores, v.GPUs = r.Counts()
		if first, ok := r.Ranks().First(); ok {
			v.FirstNode, v.FirstSeen = r.Node(first)
		}
		return v
	}
	if a, b := look(fast), look(full); !reflect.DeepEqual(a, b) {
		t.Fatalf("accessors differ for\n%s\nfast: %+v\nfull: %+v", data, a, b)
	}
	return true
}

// TestParseFastSameAsFull: parseFast takes the common shapes, declines
// the others, and what it takes is parseFull's R.
func TestParseFastSameAsFull(t *testing.T) {
	tests := []struct {
		name string
		in   string
		fast bool // parseFast must accept it
	}{
		{"fluxsched's one-core R", smallR, true},
		{"keys in other orders", `{"version":1,"execution":{"starttime":5,"nslots":1,"nodelist":["vm"],"R_lite":[{"rank":"0","children":{"core":"0"}}],"expiration":0}}`, true},
		{"pretty printed", "{\n \"execution\" : {\r\n\t\"R_lite\" : [ { \"children\" : { \"core\" : \"0-3\" } , \"rank\" : \"0\" } ]\n }, \"version\" : 1 }\n", true},
		{"compressed big R with properties", bigR(false), true},
		{"an entry per rank", bigR(true), true},
		{"ranks merged across entries", `{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}},{"rank":"1","children":{"core":"1","fpga":"0"}}],"nodelist":["a","b"]}}`, true},
		{"gpu and other children", `{"version":1,"execution":{"R_lite":[{"rank":"0-3","children":{"gpu":"0-1","core":"0-7","nic":"0"}}],"nodelist":["n[0-1]","n2,n3"]}}`, true},
		{"empty child set", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"","gpu":"0"}}]}}`, true},
		{"empty R", `{"version":1,"execution":{"R_lite":[]}}`, true},
		{"empty nodelist and properties", `{"version":1,"execution":{"R_lite":[],"nodelist":[],"properties":{}}}`, true},
		{"bracketed rank idset", `{"version":1,"execution":{"R_lite":[{"rank":"[0-1023]","children":{"core":"0-3"}}],"nodelist":["foo[0-1023]"]}}`, true},
		{"property with @", `{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],"properties":{"amd@gpu":"1","z":"0-1"}}}`, true},
		{"times as exponents", `{"version":1,"execution":{"R_lite":[],"starttime":1.6e9,"expiration":1.7E+9}}`, true},
		{"negative zero time", `{"version":1,"execution":{"R_lite":[],"starttime":-0,"expiration":-0.0}}`, true},
		{"zero nslots", `{"version":1,"execution":{"R_lite":[],"nslots":0}}`, true},
		{"memory", `{"version":1,"execution":{"R_lite":[{"children":{"core":"0-1"},"memory":4294967296,"rank":"0-1"}],"nodelist":["n[0-1]"]}}`, true},
		{"memory joining another entry's children", `{"version":1,"execution":{"R_lite":[{"children":{"core":"0"},"rank":"0"},{"children":{},"memory":1024,"rank":"0"}]}}`, true},
		{"memory summed across entries", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":1},{"rank":"0","children":{"core":"1"},"memory":2}]}}`, true},
		{"zero memory", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":0}]}}`, true},

		{"duplicate version", `{"version":1,"version":1,"execution":{"R_lite":[]}}`, false},
		{"duplicate execution", `{"version":1,"execution":{"R_lite":[]},"execution":{"R_lite":[]}}`, false},
		{"duplicate R_lite", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"R_lite":[]}}`, false},
		{"duplicate starttime", `{"version":1,"execution":{"R_lite":[],"starttime":1,"starttime":2}}`, false},
		{"duplicate rank key", `{"version":1,"execution":{"R_lite":[{"rank":"0","rank":"1","children":{"core":"0"}}]}}`, false},
		{"duplicate child", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0","core":"1"}}]}}`, false},
		{"duplicate property", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"properties":{"a":"0","a":""}}}`, false},
		{"null nodelist", `{"version":1,"execution":{"R_lite":[],"nodelist":null}}`, false},
		{"null time", `{"version":1,"execution":{"R_lite":[],"starttime":null}}`, false},
		{"null scheduling", `{"version":1,"execution":{"R_lite":[]},"scheduling":null}`, false},
		{"null top", `null`, false},
		{"scheduling", `{"version":1,"execution":{"R_lite":[]},"scheduling":{"graph":{}}}`, false},
		{"version as string", `{"version":"1","execution":{"R_lite":[]}}`, false},
		{"version as real", `{"version":1.0,"execution":{"R_lite":[]}}`, false},
		{"version 2", `{"version":2,"execution":{"R_lite":[]}}`, false},
		{"Version capitalized", `{"Version":1,"execution":{"R_lite":[]}}`, false},
		{"time as string", `{"version":1,"execution":{"R_lite":[],"starttime":"5"}}`, false},
		{"nslots as string", `{"version":1,"execution":{"R_lite":[],"nslots":"1"}}`, false},
		{"nslots as real", `{"version":1,"execution":{"R_lite":[],"nslots":1.0}}`, false},
		{"nslots too big", `{"version":1,"execution":{"R_lite":[],"nslots":2147483648}}`, false},
		{"negative nslots", `{"version":1,"execution":{"R_lite":[],"nslots":-1}}`, false},
		{"rank as number", `{"version":1,"execution":{"R_lite":[{"rank":0,"children":{"core":"0"}}]}}`, false},
		{"child as number", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":0}}]}}`, false},
		{"unicode escape in hostname", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["h\u00e9"]}}`, false},
		{"UTF-8 hostname", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["hé"]}}`, false},
		{"escaped key", `{"version":1,"execution":{"R_lite":[{"\u0072ank":"0","children":{"core":"0"}}]}}`, false},
		{"escaped slash in value", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["a\/b"]}}`, false},
		{"entry slots key", `{"version":1,"execution":{"R_lite":[{"rank":"0","slots":1,"children":{"core":"0"}}]}}`, false},
		{"unknown execution key", `{"version":1,"execution":{"R_lite":[],"x":1}}`, false},
		{"unknown top key", `{"version":1,"execution":{"R_lite":[]},"x":1}`, false},
		{"no R_lite", `{"version":1,"execution":{}}`, false},
		{"no version", `{"execution":{"R_lite":[]}}`, false},
		{"memory as real", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":1.5}]}}`, false},
		{"memory as string", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":"4G"}]}}`, false},
		{"negative memory", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":-1}]}}`, false},
		{"memory too large", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":1152921504606846977}]}}`, false},
		{"memory sum too large", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":1152921504606846976},{"rank":"0","children":{"core":"1"},"memory":1}]}}`, false},
		{"duplicate memory", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":1,"memory":2}]}}`, false},
		{"memory alone", `{"version":1,"execution":{"R_lite":[{"children":{},"memory":1024,"rank":"0"}]}}`, false},
		{"memory only, zero", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{},"memory":0}]}}`, false},
		{"no children", `{"version":1,"execution":{"R_lite":[{"rank":"0"}]}}`, false},
		{"trailing garbage", `{"version":1,"execution":{"R_lite":[]}}x`, false},
		{"two documents", `{"version":1,"execution":{"R_lite":[]}} {}`, false},
		{"trailing comma", `{"version":1,"execution":{"R_lite":[],}}`, false},
		{"unterminated", `{"version":1,"execution":{"R_lite":[]`, false},
		{"leading zero", `{"version":1,"execution":{"R_lite":[],"starttime":01}}`, false},
		{"bare minus", `{"version":1,"execution":{"R_lite":[],"starttime":-}}`, false},
		{"dot without digits", `{"version":1,"execution":{"R_lite":[],"starttime":1.}}`, false},
		{"time out of range", `{"version":1,"execution":{"R_lite":[],"starttime":1e400}}`, false},
		{"negative time", `{"version":1,"execution":{"R_lite":[],"starttime":-1}}`, false},
		{"expiration before start", `{"version":1,"execution":{"R_lite":[],"starttime":10,"expiration":5}}`, false},
		{"bad rank idset", `{"version":1,"execution":{"R_lite":[{"rank":"1-0","children":{"core":"0"}}]}}`, false},
		{"empty child name", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"":"0"}}]}}`, false},
		{"rank without resources", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{}}]}}`, false},
		{"child listed twice for a rank", `{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}},{"rank":"1","children":{"core":"3-4"}}]}}`, false},
		{"too many ranks", `{"version":1,"execution":{"R_lite":[{"rank":"0-4000000000","children":{"core":"0"}}]}}`, false},
		{"nodelist too short", `{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],"nodelist":["a"]}}`, false},
		{"bad hostlist", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["a["]}}`, false},
		{"bad property name", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"properties":{"a^b":"0"}}}`, false},
		{"property of an unknown rank", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"properties":{"a":"1"}}}`, false},
		{"property as number", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"properties":{"a":0}}}`, false},
		{"not an object", `[]`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkFast(t, []byte(tt.in)); got != tt.fast {
				_, err := parseFull([]byte(tt.in))
				t.Fatalf("parseFast accepted = %v, want %v (parseFull: %v)", got, tt.fast, err)
			}
			// Parse answers as parseFull does, accepted or not.
			r, err := Parse([]byte(tt.in))
			full, ferr := parseFull([]byte(tt.in))
			if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() || !reflect.DeepEqual(r, full) {
				t.Fatalf("Parse = %v, %v; parseFull = %v, %v", r, err, full, ferr)
			}
		})
	}
}

// TestParseFastTestdata runs checkFast on the RFC examples; the fuzz
// corpora reach it through checkParsed.
func TestParseFastTestdata(t *testing.T) {
	for _, name := range []string{"example1.json", "example2.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		checkFast(t, b)
	}
}

// FuzzParseFast: for any input, parseFast declines or agrees with
// parseFull. The seeds include shapes it accepts, so mutations explore both
// sides of each decline.
func FuzzParseFast(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(smallR))
	f.Add([]byte(strings.Replace(smallR, `"nodelist":["vm"]`, `"nodelist":["vm"],"properties":{"p":"0"}`, 1)))
	f.Add([]byte(`{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0","gpu":"1"}},{"rank":"1","children":{"core":"1"}}],"nodelist":["a","b"],"starttime":-0,"expiration":1e9}}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkFast(t, data) })
}
