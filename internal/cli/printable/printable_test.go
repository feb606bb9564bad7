package printable

import "testing"

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain job", "plain job"},
		{"ƒ2UzHM café ✓", "ƒ2UzHM café ✓"},
		{"\x1b[31mred\x1b[0m", "?[31mred?[0m"},
		{"two\nlines\r", "two?lines?"},
		{"tab\there", "tab?here"},
		{"bell\a del\x7f", "bell? del?"},
		{"c1 \u009b2J \u0085", "c1 ?2J ?"},
		{"raw \x9b2J", "raw ?2J"},
		{"cut \xe2\x82", "cut ??"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTree(t *testing.T) {
	v := map[string]any{"name": "a\x1bb", "list": []any{"x\ny", int64(3)}, "k\x07": "v"}
	Tree(v)
	if v["name"] != "a?b" || v["list"].([]any)[0] != "x?y" || v["list"].([]any)[1] != int64(3) || v["k?"] != "v" {
		t.Errorf("Tree: %#v", v)
	}
	if _, ok := v["k\x07"]; ok {
		t.Errorf("Tree kept the raw key: %#v", v)
	}
}

func FuzzString(f *testing.F) {
	f.Add("\x1b[2J\u009b\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if String(out) != out {
			t.Fatalf("String(%q) = %q is not clean", s, out)
		}
		for _, r := range out {
			if r < 0x20 || (r >= 0x7f && r < 0xa0) {
				t.Fatalf("String(%q) = %q keeps %U", s, out, r)
			}
		}
	})
}
