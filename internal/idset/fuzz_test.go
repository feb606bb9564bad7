package idset

import (
	"strings"
	"testing"
)

func FuzzParseIdset(f *testing.F) {
	for _, s := range []string{
		// RFC 22 examples.
		"1,2,3,5,6,42", "1-3,5-6,42", "[1-3,5-6,42]",
		// flux-core test vectors and tricky cases.
		"", "[]", "2", "7-9", "1,7-9,14,16", "2,3,4,5", "1048576", "[0]",
		"4.2", "01,2", "3,2", "3-0", "3-3", "2,2", "[0", "0]", "[[0]]", "0-", "-5",
		"0-4294967294", "4294967295", "0-99999999999999999999", "1,,2", ",", "[,]",
		" 1", "1-3,4-6", "0,4294967294",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		s1 := s.String()
		again, err := Parse(s1)
		if err != nil {
			t.Fatalf("Parse(%q) ok but its String %q fails: %v", in, s1, err)
		}
		if !again.Equal(s) {
			t.Fatalf("Parse(%q) = %v, reparse of %q = %v", in, s.Ranges(), s1, again.Ranges())
		}
		if s2 := again.String(); s2 != s1 {
			t.Fatalf("String not canonical: %q then %q", s1, s2)
		}
		b := s.Bracketed()
		fromB, err := Parse(b)
		if err != nil || !fromB.Equal(s) {
			t.Fatalf("Bracketed %q does not parse back to %q: %v", b, s1, err)
		}
		// Storage stays sorted, disjoint and non-adjacent.
		rs := s.Ranges()
		for i, r := range rs {
			if r.First > r.Last || r.Last > MaxID || (i > 0 && rs[i-1].Last+1 >= r.First) {
				t.Fatalf("bad ranges %v", rs)
			}
		}
		if n := s.Count(); n > 0 {
			last, _ := s.Last()
			if got, ok := s.Nth(n - 1); !ok || got != last {
				t.Fatalf("Nth(Count-1) = %d, %v, want %d", got, ok, last)
			}
		}
		if _, ok := s.Nth(s.Count()); ok {
			t.Fatal("Nth(Count) succeeded")
		}
		if !s.Union(s).Equal(s) || !s.Intersection(s).Equal(s) || !s.Difference(s).IsEmpty() {
			t.Fatal("self set algebra broken")
		}
	})
}
