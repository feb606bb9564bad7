package idset

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseString(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      string // String()
		bracketed string
		count     int
	}{
		// RFC 22: "1,2,3,5,6,42" is an idset string in ascending order.
		{"rfc22 list", "1,2,3,5,6,42", "1-3,5-6,42", "[1-3,5-6,42]", 6},
		// RFC 22: consecutive ids MAY be compressed: "1-3,5-6,42".
		{"rfc22 ranges", "1-3,5-6,42", "1-3,5-6,42", "[1-3,5-6,42]", 6},
		// RFC 22: an idset string MAY be surrounded by brackets: "[1-3,5-6,42]".
		{"rfc22 brackets", "[1-3,5-6,42]", "1-3,5-6,42", "[1-3,5-6,42]", 6},
		// flux-core libidset test vectors.
		{"single", "2", "2", "2", 1},
		{"range", "7-9", "7-9", "[7-9]", 3},
		{"mixed", "1,7-9", "1,7-9", "[1,7-9]", 4},
		{"mixed2", "1,7-9,16", "1,7-9,16", "[1,7-9,16]", 5},
		{"mixed3", "1,7-9,14,16", "1,7-9,14,16", "[1,7-9,14,16]", 6},
		{"mixed4", "1-3,7-9,14,16", "1-3,7-9,14,16", "[1-3,7-9,14,16]", 8},
		{"adjacent singles merge", "2,3,4,5", "2-5", "[2-5]", 4},
		{"empty", "", "", "", 0},
		{"large id", "1048576", "1048576", "1048576", 1},
		{"bracketed single", "[2]", "2", "2", 1},
		{"bracketed range", "[7-9]", "7-9", "[7-9]", 3},
		{"bracketed list", "[2,3,4,5]", "2-5", "[2-5]", 4},
		{"bracketed zero", "[0]", "0", "0", 1},
		{"bracketed empty", "[]", "", "", 0},
		{"adjacent ranges merge", "0-3,4-7", "0-7", "[0-7]", 8},
		{"empty elements skipped as flux-core does", "1,,3,", "1,3", "[1,3]", 2},
		{"max id", "4294967294", "4294967294", "4294967294", 1},
		{"whole range", "0-4294967294", "0-4294967294", "[0-4294967294]", 4294967295},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, s.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.bracketed, s.Bracketed()); diff != "" {
				t.Errorf("Bracketed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.count, s.Count()); diff != "" {
				t.Errorf("Count (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		// flux-core libidset expected failures.
		{"decimal point", "4.2", `error parsing range "4.2": unexpected character "."`},
		{"letter", "x", `error parsing range "x": unexpected character "x"`},
		{"trailing junk", "1-2x", `error parsing range "1-2x": unexpected character "x"`},
		// RFC 22: ids SHALL NOT include leading zeroes.
		{"leading zero", "01,2", `error parsing range "01": leading zero`},
		{"double zero", "00", `error parsing range "00": leading zero`},
		// RFC 22: ids SHALL be in ascending order.
		{"descending", "3,2", `range "2" is out of order`},
		{"reversed range", "3-0", `error parsing range "3-0": range end must be greater than its start`},
		{"one-id range", "3-3", `error parsing range "3-3": range end must be greater than its start`},
		{"repeated", "2,2,2,2", `range "2" is out of order`},
		{"overlap", "1-5,3-7", `range "3-7" is out of order`},
		{"open bracket", "[0", `mismatched or nested brackets`},
		{"close bracket", "0]", `mismatched or nested brackets`},
		{"nested", "[[0]]", `mismatched or nested brackets`},
		{"nested open", "[[0,2]", `mismatched or nested brackets`},
		{"nested close", "[0,2]]", `mismatched or nested brackets`},
		{"inner open", "0,[2", `mismatched or nested brackets`},
		{"inner close", "0]2", `mismatched or nested brackets`},
		{"open range", "0-", `error parsing range "0-": missing id`},
		{"bracketed open range", "[0-]", `error parsing range "0-": missing id`},
		{"negative", "-5", `error parsing range "-5": missing id`},
		{"bracketed negative", "[-5]", `error parsing range "-5": missing id`},
		// RFC 22 allows only digits, comma, hyphen and brackets.
		{"space", "1, 2", `error parsing range " 2": unexpected character " "`},
		{"plus", "+1", `error parsing range "+1": unexpected character "+"`},
		{"invalid id", "4294967295", `error parsing range "4294967295": id exceeds the maximum 4294967294`},
		{"huge", "0-99999999999999999999999", `error parsing range "0-99999999999999999999999": id exceeds the maximum 4294967294`},
		{"double hyphen", "1--2", `error parsing range "1--2": unexpected character "-"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.in, s)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name string
		got  Set
		want string
	}{
		{"zero value", Set{}, ""},
		{"Of unordered with duplicates", Of(5, 1, 3, 2, 5), "1-3,5"},
		{"Of drops invalid id", Of(1, uint(MaxID)+1), "1"},
		{"Of nothing", Of(), ""},
		{"FromRange", FromRange(3, 7), "3-7"},
		{"FromRange one", FromRange(3, 3), "3"},
		{"FromRange empty", FromRange(7, 3), ""},
		{"FromRange clamps", FromRange(MaxID-1, MaxID+5), "4294967293-4294967294"},
		{"FromRange above max", FromRange(MaxID+1, MaxID+5), ""},
		{"FromRanges normalises", FromRanges([]Range{{8, 9}, {1, 3}, {2, 5}, {7, 6}, {6, 6}}), "1-6,8-9"},
		{"MustParse", MustParse("[0-3,5]"), "0-3,5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse(\"x\") did not panic")
		}
	}()
	MustParse("x")
}

func TestSetOps(t *testing.T) {
	tests := []struct {
		name                string
		a, b                string
		union, inter, diffs string
	}{
		{"disjoint", "1-3", "5-7", "1-3,5-7", "", "1-3"},
		{"adjacent", "1-3", "4-7", "1-7", "", "1-3"},
		{"overlap", "1-5", "3-7", "1-7", "3-5", "1-2"},
		{"contained", "0-10", "3-4,6", "0-10", "3-4,6", "0-2,5,7-10"},
		{"container", "3-4,6", "0-10", "0-10", "3-4,6", ""},
		{"empty left", "", "1-3", "1-3", "", ""},
		{"empty right", "1-3", "", "1-3", "", "1-3"},
		{"equal", "1-3,8", "1-3,8", "1-3,8", "1-3,8", ""},
		{"interleaved", "0,2,4,6,8", "1-2,5-6,9", "0-2,4-6,8-9", "2,6", "0,4,8"},
		{"cut ends", "0-4294967294", "0,4294967294", "0-4294967294", "0,4294967294", "1-4294967293"},
		{"many cuts", "0-20", "1,3,5-6,19-30", "0-30", "1,3,5-6,19-20", "0,2,4,7-18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := MustParse(tt.a), MustParse(tt.b)
			if diff := cmp.Diff(tt.union, a.Union(b).String()); diff != "" {
				t.Errorf("Union (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.inter, a.Intersection(b).String()); diff != "" {
				t.Errorf("Intersection (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.diffs, a.Difference(b).String()); diff != "" {
				t.Errorf("Difference (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.a, a.String()); diff != "" {
				t.Errorf("operand mutated (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetOpsAgainstMap checks Union, Intersection, Difference, Contains
// and Nth against a plain map on small pseudo-random sets.
func TestSetOpsAgainstMap(t *testing.T) {
	seed := uint32(1)
	rnd := func(n uint32) uint {
		seed = seed*1664525 + 1013904223
		return uint((seed >> 8) % n)
	}
	gen := func() (Set, map[uint]bool) {
		m := map[uint]bool{}
		var ids []uint
		for range rnd(12) {
			lo := rnd(60)
			for id := lo; id <= lo+rnd(6); id++ {
				m[id] = true
				ids = append(ids, id)
			}
		}
		return Of(ids...), m
	}
	for range 500 {
		a, ma := gen()
		b, mb := gen()
		var wantU, wantI, wantD []uint
		for id := uint(0); id < 80; id++ {
			if ma[id] || mb[id] {
				wantU = append(wantU, id)
			}
			if ma[id] && mb[id] {
				wantI = append(wantI, id)
			}
			if ma[id] && !mb[id] {
				wantD = append(wantD, id)
			}
			if a.Contains(id) != ma[id] {
				t.Fatalf("%s.Contains(%d) = %v", a, id, !ma[id])
			}
		}
		for _, c := range []struct {
			op   string
			want []uint
			got  Set
		}{{"union", wantU, a.Union(b)}, {"intersection", wantI, a.Intersection(b)}, {"difference", wantD, a.Difference(b)}} {
			if diff := cmp.Diff(c.want, slices.Collect(c.got.All()), cmp.Comparer(func(x, y []uint) bool {
				return slices.Equal(x, y)
			})); diff != "" {
				t.Fatalf("%s of %s and %s (-want +got):\n%s", c.op, a, b, diff)
			}
			if !c.got.Equal(Of(c.want...)) {
				t.Fatalf("%s of %s and %s not normalised: %v", c.op, a, b, c.got.Ranges())
			}
			for i, id := range c.want {
				if got, ok := c.got.Nth(i); !ok || got != id {
					t.Fatalf("%s.Nth(%d) = %d, %v, want %d", c.got, i, got, ok, id)
				}
			}
			if _, ok := c.got.Nth(len(c.want)); ok {
				t.Fatalf("%s.Nth(%d) succeeded past the end", c.got, len(c.want))
			}
		}
	}
}

func TestAccessors(t *testing.T) {
	s := MustParse("3-5,9,20-21")
	type result struct {
		First, Last          uint
		FirstOK, LastOK      bool
		Count                int
		Empty                bool
		Nth0, Nth3, Nth5     uint
		Nth0OK, Nth3OK, N5OK bool
		NthNegOK, Nth6OK     bool
		All                  []uint
		Ranges               []Range
		Contains             []bool
	}
	got := result{}
	got.First, got.FirstOK = s.First()
	got.Last, got.LastOK = s.Last()
	got.Count, got.Empty = s.Count(), s.IsEmpty()
	got.Nth0, got.Nth0OK = s.Nth(0)
	got.Nth3, got.Nth3OK = s.Nth(3)
	got.Nth5, got.N5OK = s.Nth(5)
	_, got.NthNegOK = s.Nth(-1)
	_, got.Nth6OK = s.Nth(6)
	got.All = slices.Collect(s.All())
	got.Ranges = s.Ranges()
	for _, id := range []uint{2, 3, 5, 6, 9, 19, 21, 22, MaxID + 10} {
		got.Contains = append(got.Contains, s.Contains(id))
	}
	want := result{
		First: 3, Last: 21, FirstOK: true, LastOK: true, Count: 6,
		Nth0: 3, Nth3: 9, Nth5: 21, Nth0OK: true, Nth3OK: true, N5OK: true,
		All:      []uint{3, 4, 5, 9, 20, 21},
		Ranges:   []Range{{3, 5}, {9, 9}, {20, 21}},
		Contains: []bool{false, true, true, false, true, false, true, false, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Ranges is a copy: changing it leaves the set alone.
	got.Ranges[0].First = 0
	if diff := cmp.Diff("3-5,9,20-21", s.String()); diff != "" {
		t.Errorf("Ranges aliased the set (-want +got):\n%s", diff)
	}

	var empty Set
	if _, ok := empty.First(); ok {
		t.Error("empty First ok")
	}
	if _, ok := empty.Last(); ok {
		t.Error("empty Last ok")
	}
	if !empty.IsEmpty() || empty.Count() != 0 || empty.Contains(0) {
		t.Error("zero Set is not empty")
	}
	for range empty.All() {
		t.Error("empty All yielded")
	}
	// All stops when asked and copes with the top id.
	var top []uint
	for id := range FromRange(MaxID-2, MaxID).All() {
		top = append(top, id)
	}
	if diff := cmp.Diff([]uint{MaxID - 2, MaxID - 1, MaxID}, top); diff != "" {
		t.Errorf("All at MaxID (-want +got):\n%s", diff)
	}
	n := 0
	for range FromRange(0, MaxID).All() {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("All did not stop: %d", n)
	}
}

func TestJSON(t *testing.T) {
	type doc struct {
		Ranks Set `json:"ranks"`
	}
	b, err := json.Marshal(doc{MustParse("0-3,7")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"ranks":"0-3,7"}`, string(b)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"ranks":"[1-2,4]"}`), &d); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("1-2,4", d.Ranks.String()); diff != "" {
		t.Errorf("Unmarshal (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"ranks":5}`, `{"ranks":"3,1"}`, `{"ranks":null}`} {
		var d doc
		err := json.Unmarshal([]byte(bad), &d)
		if bad == `{"ranks":null}` {
			// encoding/json leaves the field alone for null.
			if err != nil {
				t.Errorf("Unmarshal(%s): %v", bad, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
}

func TestEqual(t *testing.T) {
	if !MustParse("1-3").Equal(Of(3, 2, 1)) {
		t.Error("1-3 != Of(3,2,1)")
	}
	if MustParse("1-3").Equal(MustParse("1-4")) {
		t.Error("1-3 == 1-4")
	}
	if !(Set{}).Equal(MustParse("")) {
		t.Error("zero != parsed empty")
	}
}

func TestLongInputIsLinear(t *testing.T) {
	// A long string of digits must fail fast, not allocate per digit.
	s := strings.Repeat("9", 1<<20)
	if _, err := Parse(s); err == nil {
		t.Error("huge id accepted")
	}
}

func TestFirstN(t *testing.T) {
	for _, c := range []struct {
		set  string
		n    int
		want string
	}{
		{"0-7", 0, ""}, {"0-7", -1, ""}, {"0-7", 3, "0-2"}, {"0-7", 8, "0-7"}, {"0-7", 9, "0-7"},
		{"1,3-5,9", 2, "1,3"}, {"1,3-5,9", 4, "1,3-5"}, {"1,3-5,9", 5, "1,3-5,9"}, {"", 2, ""},
	} {
		if got := MustParse(c.set).FirstN(c.n).String(); got != c.want {
			t.Errorf("%q.FirstN(%d) = %q, want %q", c.set, c.n, got, c.want)
		}
	}
}

func TestFromSortedRanges(t *testing.T) {
	for _, c := range []struct {
		rs   []Range
		want string
	}{
		{nil, ""}, {[]Range{{0, 2}, {4, 4}}, "0-2,4"},
		// not as a set keeps them: put right as FromRanges does
		{[]Range{{4, 4}, {0, 2}}, "0-2,4"}, {[]Range{{0, 2}, {3, 4}}, "0-4"}, {[]Range{{2, 1}}, ""},
	} {
		if got := FromSortedRanges(c.rs).String(); got != c.want {
			t.Errorf("FromSortedRanges(%v) = %q, want %q", c.rs, got, c.want)
		}
	}
}

func TestWriteBracketedIsBracketed(t *testing.T) {
	for _, text := range []string{"", "7", "0-3", "0-3,5", "1,3,5-9,100"} {
		s, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		var a, b strings.Builder
		s.WriteBracketed(&a)
		WriteRangesBracketed(&b, s.Ranges())
		if want := s.Bracketed(); a.String() != want || b.String() != want {
			t.Errorf("%q: WriteBracketed %q, WriteRangesBracketed %q, Bracketed %q", text, a.String(), b.String(), want)
		}
	}
}
