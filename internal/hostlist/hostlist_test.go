package hostlist

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRFC29Vectors checks each RFC 29 test vector "A" = "B": both sides
// name the same hosts, and both encode the same way.
func TestRFC29Vectors(t *testing.T) {
	tests := []struct {
		name     string
		in, same string
		want     []string
		str      string
	}{
		// RFC 29: "" = ""
		{"empty", "", "", []string{}, ""},
		// RFC 29: "foox,fooy,fooz" = "foox,fooy,fooz"
		{"no numbers", "foox,fooy,fooz", "foox,fooy,fooz", []string{"foox", "fooy", "fooz"}, "foox,fooy,fooz"},
		// RFC 29: "[1-3,5-6]" = "1,2,3,5,6"
		{"bare idlist", "[1-3,5-6]", "1,2,3,5,6", []string{"1", "2", "3", "5", "6"}, "[1-3,5-6]"},
		// RFC 29: "foo[1-5]" = "foo1,foo2,foo3,foo4,foo5"
		{"prefix", "foo[1-5]", "foo1,foo2,foo3,foo4,foo5",
			[]string{"foo1", "foo2", "foo3", "foo4", "foo5"}, "foo[1-5]"},
		// RFC 29: "foo[0-4]-eth2" = "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2"
		{"suffix", "foo[0-4]-eth2", "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2",
			[]string{"foo0-eth2", "foo1-eth2", "foo2-eth2", "foo3-eth2", "foo4-eth2"}, "foo[0-4]-eth2"},
		// RFC 29: "foo1,foo1,foo1" = "foo1,foo1,foo1"
		{"duplicates", "foo1,foo1,foo1", "foo1,foo1,foo1", []string{"foo1", "foo1", "foo1"}, "foo[1,1,1]"},
		// RFC 29: "[00-02]" = "00,01,02"
		{"padded", "[00-02]", "00,01,02", []string{"00", "01", "02"}, "[00-02]"},
		// RFC 29: "[00-2]" = "00,01,02"
		{"padded from first", "[00-2]", "00,01,02", []string{"00", "01", "02"}, "[00-02]"},
		// RFC 29: "foo[1,1,2,1]" = "foo1,foo1,foo2,foo1"
		{"repeated ids", "foo[1,1,2,1]", "foo1,foo1,foo2,foo1",
			[]string{"foo1", "foo1", "foo2", "foo1"}, "foo[1,1-2,1]"},
		// RFC 29: an idlist MAY be a simple comma-separated list "5,4,10,11,12,13".
		{"idlist list", "h[5,4,10,11,12,13]", "h5,h4,h10,h11,h12,h13",
			[]string{"h5", "h4", "h10", "h11", "h12", "h13"}, "h[5,4,10-13]"},
		// RFC 29: consecutive ids MAY be compressed into ranges "5,4,11-13".
		{"idlist ranges", "h[5,4,11-13]", "h5,h4,h11,h12,h13",
			[]string{"h5", "h4", "h11", "h12", "h13"}, "h[5,4,11-13]"},
		// RFC 29: "005,4,11-13" represents the list "005,004,011,012,013".
		{"first element pads all", "h[005,4,11-13]", "h005,h004,h011,h012,h013",
			[]string{"h005", "h004", "h011", "h012", "h013"}, "h[005,004,011-013]"},
		// RFC 29: "2,2,2" is a valid list.
		{"idlist repeats", "h[2,2,2]", "h2,h2,h2", []string{"h2", "h2", "h2"}, "h[2,2,2]"},
		// RFC 29: an idlist SHALL be enclosed in brackets, e.g. "host[0-10,12]".
		{"host example", "host[0-10,12]", "host[0-10],host12", nil, "host[0-10,12]"},
		// RFC 29 background: "prefix[0-1024]".
		{"background", "prefix[0-1024]", "prefix[0-1023],prefix1024", nil, "prefix[0-1024]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			same, err := Parse(tt.same)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.same, err)
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, h.Expand()); diff != "" {
					t.Errorf("Expand(%q) (-want +got):\n%s", tt.in, diff)
				}
			}
			if diff := cmp.Diff(h.Expand(), same.Expand()); diff != "" {
				t.Errorf("Expand(%q) vs Expand(%q) (-want +got):\n%s", tt.in, tt.same, diff)
			}
			if !h.Equal(same) || !same.Equal(h) {
				t.Errorf("%q and %q not Equal", tt.in, tt.same)
			}
			if diff := cmp.Diff(tt.str, h.String()); diff != "" {
				t.Errorf("String(%q) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.str, same.String()); diff != "" {
				t.Errorf("String(%q) (-want +got):\n%s", tt.same, diff)
			}
			if diff := cmp.Diff(tt.str, New(h.Expand()...).String()); diff != "" {
				t.Errorf("New(Expand(%q)).String() (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestEncode covers flux-core's libhostlist codec vectors and more.
func TestEncode(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  string
		count int
	}{
		// flux-core libhostlist codec test vectors.
		{"prefix with digits", "foo-1a-2,foo-1a-3", "foo-1a-[2-3]", 2},
		{"run then name", "foo1,foo2,foo3,fooi", "foo[1-3],fooi", 4},
		{"order kept", "foo1,fooi,foo2,foo3", "foo1,fooi,foo[2-3]", 4},
		{"name then run", "fooi,foo1,foo2,foo3", "fooi,foo[1-3]", 4},
		{"gaps", "fooi,foo1,foo2,foo3,foo5,foo7,foo8", "fooi,foo[1-3,5,7-8]", 7},
		{"numbers only", "1,2,3,4,5,9", "[1-5,9]", 6},
		{"leading comma", ",1,2,3,4,5,9", "[1-5,9]", 6},
		{"trailing comma", ",1,2,3,4,5,9,", "[1-5,9]", 6},
		{"bracketed", "[1-5]", "[1-5]", 5},
		{"single number", "14636", "14636", 1},
		{"long", "mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581,584,587-589,592,594,597,600-602,605,608,610,618-622,627,634,636-670,687-696,699-733,735-742,744-760,762-773]",
			"mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581,584,587-589,592,594,597,600-602,605,608,610,618-622,627,634,636-670,687-696,699-733,735-742,744-760,762-773]", 237},
		// flux-core expands suffixed runs ("foo1-bar,foo3-bar", "00p,01p,02p,03p");
		// here they stay compressed, which RFC 29 allows and which keeps
		// node[0-99999]-ib one run. One-host runs print as names.
		{"suffix singles", "foo[1,3]-bar", "foo1-bar,foo3-bar", 2},
		{"suffix run", "[00-03]p", "[00-03]p", 4},
		{"prefix and suffix", "p[00-3]p", "p[00-03]p", 4},
		{"suffix names compress", "foo1-bar,foo2-bar,foo3-bar", "foo[1-3]-bar", 3},
		// Separators: flux-core also splits on spaces and tabs.
		{"spaces", "foo1 foo2\tfoo3", "foo[1-3]", 3},
		// flux-core prints "foo[01,1,02]", which RFC 29 reads as foo01,foo01,foo02
		// (the first element's zeros pad the rest), so foo01 stands apart.
		{"zero padding kept apart", "foo01,foo1,foo02", "foo01,foo[1,02]", 3},
		{"unpadded after padded needs own bracket", "foo[01-02],foo3", "foo[01-02],foo3", 3},
		{"padded then wide unpadded", "foo[01-02],foo30", "foo[01-02,30]", 3},
		{"padding ends inside run", "foo[08-100]", "foo[08-100]", 93},
		{"padded run continues unpadded", "foo08,foo09,foo10,foo11", "foo[08-11]", 4},
		{"zero", "n0,n1", "n[0-1]", 2},
		{"non-numeric middle merge", "a9b,a10b", "a[9-10]b", 2},
		{"width mismatch no merge", "a9b,a010b", "a9b,a010b", 2},
		{"huge number is a name", "n99999999999999999999999", "n99999999999999999999999", 1},
		{"number above max is a name", "n4294967296,n4294967295", "n4294967296,n4294967295", 2},
		{"max number", "n[4294967294-4294967295]", "n[4294967294-4294967295]", 2},
		{"whole range", "n[0-4294967295]", "n[0-4294967295]", 1 << 32},
		{"merge into later run", "foo0-eth2,foo[1-2]-eth2", "foo[0-2]-eth2", 3},
		{"merge cascades", "a1b1,a2b1,a3b1", "a[1-3]b1", 3},
		{"punctuation", "x.y-z_1,x.y-z_2", "x.y-z_[1-2]", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, h.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.count, h.Count()); diff != "" {
				t.Errorf("Count (-want +got):\n%s", diff)
			}
			if h.Count() < 1000 {
				if diff := cmp.Diff(tt.want, New(h.Expand()...).String()); diff != "" {
					t.Errorf("New(Expand).String (-want +got):\n%s", diff)
				}
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
		// flux-core libhostlist invalid decode vectors.
		{"empty brackets", "[]", `invalid hostlist expression "[]" at offset 0: empty brackets`},
		{"prefix empty brackets", "foo[]", `invalid hostlist expression "foo[]" at offset 0: empty brackets`},
		{"unclosed", "foo[", `invalid hostlist expression "foo[" at offset 0: unmatched '['`},
		{"unclosed list", "foo[1,3", `invalid hostlist expression "foo[1,3" at offset 0: unmatched '['`},
		{"nested", "foo[[1,3]", `invalid hostlist expression "foo[[1,3]" at offset 0: nested or repeated brackets`},
		{"unopened", "foo]", `invalid hostlist expression "foo]" at offset 0: unmatched ']'`},
		{"letters", "foo[x-y]", `invalid hostlist expression "foo[x-y]" at offset 0: invalid range "x-y": unexpected character "x"`},
		{"double hyphen", "foo[0-1,2--5]", `invalid hostlist expression "foo[0-1,2--5]" at offset 0: invalid range "2--5": unexpected character "-"`},
		// More.
		{"offset", "a,b,c[", `invalid hostlist expression "c[" at offset 4: unmatched '['`},
		{"second bracket", "node[1-2]-[3-4]", `invalid hostlist expression "node[1-2]-[3-4]" at offset 0: nested or repeated brackets`},
		{"reversed", "n[3-1]", `invalid hostlist expression "n[3-1]" at offset 0: invalid range "3-1": end is less than start`},
		{"empty element", "n[1,,2]", `invalid hostlist expression "n[1,,2]" at offset 0: invalid range "": missing number`},
		{"open range", "n[1-]", `invalid hostlist expression "n[1-]" at offset 0: invalid range "1-": missing number`},
		{"negative", "n[-1]", `invalid hostlist expression "n[-1]" at offset 0: invalid range "-1": missing number`},
		{"space in idlist", "n[1, 2]", `invalid hostlist expression "n[1, 2]" at offset 0: invalid range " 2": unexpected character " "`},
		{"too large", "node[0-9999999999]", `invalid hostlist expression "node[0-9999999999]" at offset 0: invalid range "0-9999999999": number exceeds the maximum 4294967295`},
		{"control character", "no\x01de", `invalid hostlist expression "no\x01de" at offset 0: invalid character "\x01"`},
		{"non-ascii", "nodé", `invalid hostlist expression "nodé" at offset 0: invalid character "\xc3"`},
		{"bad suffix char", "n[1-2]\x7f", `invalid hostlist expression "n[1-2]\x7f" at offset 0: invalid character "\x7f"`},
		{"close in prefix", "a]b[1]", `invalid hostlist expression "a]b[1]" at offset 0: unmatched ']'`},
		{"too many digits", "n[000000000000000000001]", `invalid hostlist expression "n[000000000000000000001]" at offset 0: invalid range "000000000000000000001": number exceeds the maximum 4294967295`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.in, h)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFind(t *testing.T) {
	tests := []struct {
		name, in, host string
		want           int
	}{
		// flux-core libhostlist find vectors.
		{"prefix only", "tst0", "tst", -1},
		{"name after run", "tst0,tst", "tst", 1},
		{"name first", "tst,tst0", "tst", 0},
		{"number not in name", "tst", "tst0", -1},
		{"suffix", "foo[1-5]-eth0", "foo3-eth0", 2},
		{"suffix missing", "foo[1-5]", "foo3-eth0", -1},
		{"numbers", "[0-5]", "3", 3},
		{"number with suffix", "[0-5]i", "0", -1},
		{"width mismatch", "i[0-5]", "i00", -1},
		{"padded first", "i[00-05]", "i00", 0},
		{"padded", "i[00-05]", "i04", 4},
		{"digits in prefix", "f00[7-8]", "f007", 0},
		{"digits in prefix list", "f00[7-8,10]", "f0010", 2},
		{"long digits in prefix", "f0010001[07-08]", "f001000108", 1},
		{"no number", "cornp2", "corn", -1},
		{"different prefix", "cornp2", "corn2", -1},
		{"hyphen prefix", "corn-p2", "corn2", -1},
		{"digit hyphen prefix", "corn1-p2", "corn2", -1},
		// More.
		{"first of duplicates", "foo[1-3],foo2", "foo2", 1},
		{"later run", "a,b,foo[1-3],foo[7-9]", "foo8", 6},
		{"huge run", "n[0-4294967295]", "n4294967295", 4294967295},
		{"unpadded past padding", "foo[08-100]", "foo100", 92},
		{"padded form of unpadded", "foo[08-100]", "foo010", -1},
		{"empty name", "foo", "", -1},
		{"name too long for number", "n1", "n00000000000000000000000001", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := MustParse(tt.in)
			if diff := cmp.Diff(tt.want, h.Find(tt.host)); diff != "" {
				t.Errorf("Find(%q) (-want +got):\n%s", tt.host, diff)
			}
			if diff := cmp.Diff(tt.want >= 0, h.Contains(tt.host)); diff != "" {
				t.Errorf("Contains(%q) (-want +got):\n%s", tt.host, diff)
			}
		})
	}
}

func TestUniq(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// flux-core libhostlist sort/uniq vectors (the uniq column).
		{"names", "foo,f,bar,baz", "bar,baz,f,foo"},
		{"ranges", "[5-6],[3-4],[1-2,0]", "[0-6]"},
		{"contained", "[0-20],12,15", "[0-20]"},
		{"repeats", "0,1,2,3,4,5,1,5", "[0-5]"},
		{"outside", "[0-20],45,12,15", "[0-20,45]"},
		{"padded apart", "[0-20],45,12,015", "[0-20,45,015]"},
		{"names before numbers", "bar1,bar2,foo1,foo,foo", "bar[1-2],foo,foo1"},
		{"joins", "foo[5-6],foo3,foo4", "foo[3-6]"},
		{"overlap", "foo[5-6],foo[4-7]", "foo[4-7]"},
		{"twice", "foo[0-3],foo[0-3]", "foo[0-3]"},
		{"thrice", "foo[0-2],foo[0-2],foo[0-2]", "foo[0-2]"},
		// More.
		{"empty", "", ""},
		{"padded joins unpadded", "[01-09],10", "[01-10]"},
		{"padding ends inside run", "n[001-1000],n1000,n999,n0999", "n[001-1000,0999]"},
		{"suffix", "a[3-4]-x,a[1-2]-x,a3-x", "a[1-4]-x"},
		{"huge runs", "n[0-4294967295],n[5-10]", "n[0-4294967295]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := MustParse(tt.in)
			got := h.Uniq()
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("Uniq (-want +got):\n%s", diff)
			}
			if h.Count() > 10000 {
				return
			}
			seen := map[string]bool{}
			for _, name := range got.Expand() {
				if seen[name] {
					t.Errorf("Uniq kept duplicate %q", name)
				}
				seen[name] = true
			}
			for _, name := range h.Expand() {
				if !seen[name] {
					t.Errorf("Uniq lost %q", name)
				}
			}
		})
	}
}

func TestAppend(t *testing.T) {
	// flux-core libhostlist append vectors.
	h := MustParse("").Append(MustParse("foo12")).Append(MustParse("foo[4,1-2]"))
	if diff := cmp.Diff("foo[12,4,1-2]", h.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	h = h.Append(MustParse("bar[26-30]"))
	if diff := cmp.Diff("foo[12,4,1-2],bar[26-30]", h.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(9, h.Count()); diff != "" {
		t.Errorf("Count (-want +got):\n%s", diff)
	}
	// Appending joins runs across the seam, and leaves operands alone.
	a, b := MustParse("n[1-3]"), MustParse("n[4-6],m")
	if diff := cmp.Diff("n[1-6],m", a.Append(b).String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if a.String() != "n[1-3]" || b.String() != "n[4-6],m" {
		t.Errorf("operands changed: %s %s", a, b)
	}
	// Appending to a shared prefix must not write into the other list.
	base := MustParse("x,y")
	_ = base.Append(MustParse("z"))
	if diff := cmp.Diff("x,y", base.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := (Hostlist{}).Append(Hostlist{}); !got.IsEmpty() {
		t.Error("empty append not empty")
	}
}

func TestNth(t *testing.T) {
	// flux-core libhostlist nth vectors.
	h := MustParse("foo[1-2,4,5],bar")
	tests := []struct {
		i    int
		want string
		ok   bool
	}{
		{0, "foo1", true}, {4, "bar", true}, {2, "foo4", true}, {1, "foo2", true},
		{3, "foo5", true}, {5, "", false}, {-1, "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.i), func(t *testing.T) {
			got, ok := h.Nth(tt.i)
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.ok {
				t.Errorf("Nth(%d) = %q, %v (-want +got):\n%s", tt.i, got, ok, diff)
			}
		})
	}
	if _, ok := (Hostlist{}).Nth(0); ok {
		t.Error("Nth on empty list succeeded")
	}
	big := MustParse("a,n[0-4294967295],b[007-009]x")
	for _, c := range []struct {
		i    int
		want string
	}{{0, "a"}, {1, "n0"}, {4294967296, "n4294967295"}, {4294967297, "b007x"}, {4294967299, "b009x"}} {
		if got, ok := big.Nth(c.i); !ok || got != c.want {
			t.Errorf("Nth(%d) = %q, %v, want %q", c.i, got, ok, c.want)
		}
	}
}

func TestIterate(t *testing.T) {
	// flux-core libhostlist iterator vectors: iterating and re-adding each
	// host gives back the input string.
	for _, in := range []string{
		"",
		"mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581,584,587-589,592,594,597,600-602,605,608,610,618-622,627,634,636-670,687-696,699-733,735-742,744-760,762-773]",
		"mcr[774-796,799-814,986,1096-1114,1147-1151]",
		"really-long-hostname-prefix[10101,55,35,2]",
		"really-really-really-super-duper-long-hostname-prefix[10101,55,35,2]",
		"[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581,584,587-589,592,594,597,600-602,605,608,610,618-622,627,634,636-670,687-696,699-733,735-742,744-760,762-773]",
		"one,two,three,four,five",
	} {
		h := MustParse(in)
		var names []string
		next := 0
		for i, name := range h.All() {
			if i != next {
				t.Fatalf("All index %d, want %d", i, next)
			}
			next++
			names = append(names, name)
		}
		if diff := cmp.Diff(in, New(names...).String()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(len(names), h.Count()); diff != "" {
			t.Errorf("Count (-want +got):\n%s", diff)
		}
	}
	// All stops when asked.
	n := 0
	for range MustParse("n[0-4294967295]").All() {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("All did not stop: %d", n)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name  string
		hosts []string
		want  string
	}{
		{"none", nil, ""},
		{"invalid names dropped", []string{"a1", "", "b c", "x,y", "z[1]", "a2"}, "a[1-2]"},
		{"padded", []string{"n001", "n002", "n010"}, "n[001-002,010]"},
		{"no number", []string{"login", "login"}, "login,login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, New(tt.hosts...).String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := FromNames("a", "b c"); err == nil || err.Error() != `host name "b c": invalid character " "` {
		t.Errorf("FromNames error = %v", err)
	}
	if _, err := FromNames("a", ""); err == nil || err.Error() != `host name 1 is empty` {
		t.Errorf("FromNames error = %v", err)
	}
	if h, err := FromNames("a1", "a2"); err != nil || h.String() != "a[1-2]" {
		t.Errorf("FromNames = %v, %v", h, err)
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"same", "n[1-3]", "n1,n2,n3", true},
		{"split differently", "a1[0-9]", "a[10-19]", true},
		{"split differently then differ", "a1[0-9],b", "a[10-19],c", false},
		{"order matters", "n[1-2]", "n2,n1", false},
		{"count differs", "n[1-2]", "n[1-3]", false},
		{"width", "n[01-02]", "n[1-2]", false},
		{"empty", "", "", true},
		{"duplicates", "n[1,1]", "n1,n1", true},
		{"huge", "n[0-4294967295]", "n[0-10],n[11-4294967295]", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := MustParse(tt.a), MustParse(tt.b)
			if diff := cmp.Diff(tt.want, a.Equal(b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, b.Equal(a)); diff != "" {
				t.Errorf("reversed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	type doc struct {
		Nodes Hostlist `json:"nodes"`
	}
	b, err := json.Marshal(doc{MustParse("node1,node2,node3,login")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"nodes":"node[1-3],login"}`, string(b)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"nodes":"foo[1-2]"}`), &d); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"foo1", "foo2"}, d.Nodes.Expand()); diff != "" {
		t.Errorf("Unmarshal (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"nodes":1}`, `{"nodes":"foo["}`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse(\"[\") did not panic")
		}
	}()
	MustParse("[")
}

func TestLongInput(t *testing.T) {
	// Many expressions and a long idlist stay linear and bounded.
	in := strings.Repeat("n[0-4294967295],", 10000)
	h, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(10000*(1<<32), h.Count()); diff != "" {
		t.Errorf("Count (-want +got):\n%s", diff)
	}
	if _, err := Parse("n[" + strings.Repeat("9", 1<<20) + "]"); err == nil {
		t.Error("huge number accepted")
	}
}
