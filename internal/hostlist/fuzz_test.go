package hostlist

import (
	"strings"
	"testing"
)

func FuzzParseHostlist(f *testing.F) {
	for _, s := range []string{
		// RFC 29 examples.
		"", "foox,fooy,fooz", "[1-3,5-6]", "1,2,3,5,6", "foo[1-5]", "foo[0-4]-eth2",
		"foo1,foo1,foo1", "[00-02]", "[00-2]", "foo[1,1,2,1]", "h[005,4,11-13]",
		"h[5,4,10,11,12,13]", "h[2,2,2]", "host[0-10,12]", "prefix[0-1024]",
		// flux-core vectors and tricky cases.
		"foo-1a-2,foo-1a-3", "fooi,foo1,foo2,foo3,foo5,foo7,foo8", ",1,2,3,4,5,9,",
		"foo[1,3]-bar", "[00-03]p", "p[00-3]p", "14636", "f00[7-8,10]", "a1[0-9],a[10-19]",
		"[]", "foo[", "foo[[1,3]", "foo]", "foo[x-y]", "foo[0-1,2--5]", "node[1-2]-[3-4]",
		"node[0-9999999999]", "n[0-4294967295]", "foo01,foo1,foo02", "foo[08-100]",
		"a9b,a10b", "foo0-eth2,foo[1-2]-eth2", "n99999999999999999999999", "a b\tc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, err := Parse(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		s1 := h.String()
		again, err := Parse(s1)
		if err != nil {
			t.Fatalf("Parse(%q) ok but its String %q fails: %v", in, s1, err)
		}
		if !again.Equal(h) || !h.Equal(again) {
			t.Fatalf("Parse(%q) and Parse(String %q) differ", in, s1)
		}
		if s2 := again.String(); s2 != s1 {
			t.Fatalf("String not canonical: %q then %q (from %q)", s1, s2, in)
		}
		n := h.Count()
		if n < 0 || (n == 0) != h.IsEmpty() {
			t.Fatalf("Count %d, IsEmpty %v", n, h.IsEmpty())
		}
		if _, ok := h.Nth(n); ok {
			t.Fatalf("Nth(Count=%d) succeeded", n)
		}
		if n > 0 {
			last, ok := h.Nth(n - 1)
			if !ok || !h.Contains(last) {
				t.Fatalf("Nth(Count-1) = %q, %v", last, ok)
			}
		}
		if n > 2000 {
			return
		}
		names := h.Expand()
		if len(names) != n {
			t.Fatalf("Expand gave %d names, Count %d", len(names), n)
		}
		for i, name := range names {
			got, ok := h.Nth(i)
			if !ok || got != name {
				t.Fatalf("Nth(%d) = %q, %v, want %q", i, got, ok, name)
			}
			if k := h.Find(name); k < 0 || k > i || names[k] != name {
				t.Fatalf("Find(%q) = %d, want first index <= %d", name, k, i)
			}
		}
		if nl := New(names...); !nl.Equal(h) {
			t.Fatalf("New(Expand(%q)) = %q, not Equal", in, nl)
		}
		u := h.Uniq()
		if u.Count() > n {
			t.Fatalf("Uniq grew %q to %q", s1, u)
		}
		for _, name := range names {
			if !u.Contains(name) {
				t.Fatalf("Uniq(%q) = %q lost %q", s1, u, name)
			}
		}
	})
}
