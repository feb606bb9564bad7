// Package printable makes text that users supply (job names, notes,
// reasons, request ids) safe to print on a terminal among our own text:
// one rule for every text output, so that a guest's escape sequence can
// neither restyle nor rewrite another user's screen, nor fake a line of
// output. --json output is not for terminals and stays exact.
package printable

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Replacement is what stands for each character taken out.
const Replacement = '?'

// String returns s with every control character (C0, including tab and
// newline, DEL, and C1, whose CSI U+009B starts an escape sequence on
// some terminals) and every byte that is not UTF-8 (a raw 0x9b is CSI
// too, on a terminal that is not in UTF-8) replaced by Replacement.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if (r == utf8.RuneError && n <= 1) || unicode.IsControl(r) {
			b.WriteRune(Replacement)
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// clean reports whether s needs no change: the common case, printable
// ASCII, is decided without decoding.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return cleanUTF8(s[i:])
		}
	}
	return true
}

func cleanUTF8(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if (r == utf8.RuneError && n <= 1) || unicode.IsControl(r) {
			return false
		}
		s = s[n:]
	}
	return true
}

// Tree returns v, a value decoded from JSON (maps, slices, strings,
// numbers), with String applied to every string in it, map keys too; it
// changes maps and slices in place.
func Tree(v any) any {
	switch x := v.(type) {
	case string:
		return String(x)
	case map[string]any:
		for k, e := range x {
			ck := String(k)
			if ck != k {
				delete(x, k)
			}
			x[ck] = Tree(e)
		}
	case []any:
		for i, e := range x {
			x[i] = Tree(e)
		}
	}
	return v
}
