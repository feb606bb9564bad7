package fsd

import (
	"math"
	"testing"
)

func FuzzParseFSD(f *testing.F) {
	for _, s := range []string{
		// RFC 23 suffixes and the infinity special case.
		"2ms", "0.1s", "30", "1.2h", "5m", "0s", "5d", "inf", "infinity",
		// flux-core test vectors, good and bad.
		"INF", "0.5m", "0.2ms", "1.0d", "-1.", "1.0f", "1.0sec", "NaNs",
		"infinites", "infd",
		// Edges.
		"", ".", "+", "5.", ".5", "1e308d", "1e400", "1e-400", "4.9e-324ms",
		"1.7976931348623157e308", "0x10", " 5", "5 ", "1e", "1e+", "+inf",
		"99999999999999999999999999999h",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if _, err2 := ParseTimeLimit(s); err2 != nil && err == nil && s != "" {
			// A valid duration with a unit is a valid time limit too.
			if _, unit, _ := split(s); unit != "" {
				t.Errorf("ParseTimeLimit(%q): %v, but Parse accepted it", s, err2)
			}
		}
		if err != nil {
			return
		}
		if v < 0 || math.IsNaN(v) {
			t.Fatalf("Parse(%q) = %v, not a duration", s, v)
		}
		s1 := FormatExact(v)
		v1, err := Parse(s1)
		if err != nil {
			t.Fatalf("Parse(%q) = %v; FormatExact = %q does not parse: %v", s, v, s1, err)
		}
		if v1 != v {
			t.Fatalf("Parse(%q) = %v; FormatExact = %q parses to %v", s, v, s1, v1)
		}
		if s2 := FormatExact(v1); s2 != s1 {
			t.Fatalf("FormatExact not canonical: %q then %q", s1, s2)
		}
		h := Format(v)
		if _, err := Parse(h); err != nil {
			t.Fatalf("Format(%v) = %q does not parse: %v", v, h, err)
		}
		if _, err := FormatG(v, 6); err != nil {
			t.Fatalf("FormatG(%v): %v", v, err)
		}
		_ = Duration(v)
	})
}

// FuzzFormatExact drives the formatters with arbitrary float64 values, which
// string inputs reach only slowly: subnormals, values near the largest float,
// and values whose shortest form in one unit does not survive the multiply.
func FuzzFormatExact(f *testing.F) {
	for _, v := range []float64{0, 0.001, 90, 3600, 0.1, 1e300, math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.Inf(1), math.NaN(), -1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		h := Format(v)
		if _, err := Parse(h); err != nil {
			t.Fatalf("Format(%v) = %q does not parse: %v", v, h, err)
		}
		_, _ = FormatG(v, 6)
		_ = Duration(v)
		s1 := FormatExact(v)
		if v < 0 || math.IsNaN(v) {
			if _, err := Parse(s1); err == nil {
				t.Fatalf("FormatExact(%v) = %q parses, but %v is not a duration", v, s1, v)
			}
			return
		}
		v1, err := Parse(s1)
		if err != nil || v1 != v {
			t.Fatalf("FormatExact(%v) = %q parses to %v, %v", v, s1, v1, err)
		}
	})
}
