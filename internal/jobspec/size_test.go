package jobspec

import (
	"encoding/json"
	"strings"
	"testing"
)

// ParseSize reads sizes as flux-core's parse_size: powers of 1024, k and
// K alike, integers and floating point; anything else is one line.
func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  string
	}{
		{"0", 0, ""},
		{"100", 100, ""},
		{"1k", 1024, ""},
		{"1K", 1024, ""},
		{"10M", 10 << 20, ""},
		{"1G", 1 << 30, ""},
		{"2T", 2 << 40, ""},
		{"1.5k", 1536, ""},
		{"0.5M", 512 << 10, ""},
		{"2.55E2", 255, ""},
		{"1e3", 1000, ""},
		{"10.7", 10, ""},
		{"15E", 15 << 60, ""},
		{"16E", 0, "too large"},
		{"18446744073709551615", 1<<64 - 1, ""},
		{"18446744073709551616", 0, "too large"},
		{"", 0, "invalid size"},
		{"M", 0, "invalid size"},
		{"-1", 0, "invalid size"},
		{"+1", 0, "invalid size"},
		{" 1M", 0, "invalid size"},
		{"1 M", 0, "invalid size"},
		{"1MB", 0, "invalid size"},
		{"1m", 0, "invalid size"},
		{"inf", 0, "invalid size"},
		{"NaN", 0, "invalid size"},
		{"0x10", 0, "invalid size"},
		{"1_000", 0, "invalid size"},
		{"ten", 0, "invalid size"},
	} {
		got, err := ParseSize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseSize(%q) = %d, %v; want one line with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// output.limit: a size string or a JSON number, at most 1G, as Flux takes
// it; absent is not set.
func TestOutputLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts map[string]any
		want uint64
		set  bool
		err  string
	}{
		{"absent", nil, 0, false, ""},
		{"output without limit", map[string]any{"output": map[string]any{"mode": "append"}}, 0, false, ""},
		{"string", map[string]any{"output": map[string]any{"limit": "1M"}}, 1 << 20, true, ""},
		{"number", map[string]any{"output": map[string]any{"limit": float64(4096)}}, 4096, true, ""},
		{"json number", map[string]any{"output": map[string]any{"limit": json.Number("2048")}}, 2048, true, ""},
		{"max", map[string]any{"output": map[string]any{"limit": "1G"}}, 1 << 30, true, ""},
		{"over max", map[string]any{"output": map[string]any{"limit": "2G"}}, 0, true, "output.limit: 2G is over the largest allowed, 1G"},
		{"bad", map[string]any{"output": map[string]any{"limit": "lots"}}, 0, true, `output.limit: invalid size "lots"`},
		{"negative number", map[string]any{"output": map[string]any{"limit": float64(-1)}}, 0, true, "output.limit: invalid size"},
		{"bool", map[string]any{"output": map[string]any{"limit": true}}, 0, true, "output.limit: want a size such as 10M, not a boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, set, err := OutputLimit(tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("OutputLimit = %d, %v, %v; want %q", got, set, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || set != tc.set {
				t.Fatalf("OutputLimit = %d, %v, %v; want %d, %v", got, set, err, tc.want, tc.set)
			}
		})
	}
}

// FuzzParseSize: ParseSize never panics, and what it accepts is what its
// number says: an integer without a suffix reads back as itself.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "10M", "1.5k", "2.55E2", "16E", "", "-1", "1e400", "0x10", "9999999999999999999999G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && s == "" {
			t.Fatalf("ParseSize(\"\") = %d, want an error", n)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseSize(%q): error of several lines: %v", s, err)
			}
			return
		}
		if c := s[0]; !(c >= '0' && c <= '9' || c == '.') {
			t.Fatalf("ParseSize(%q) = %d: accepted a size that does not start with a number", s, n)
		}
	})
}

// FormatSize writes what ParseSize reads back, with a suffix where one fits.
func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "0"}, {100, "100"}, {1024, "1k"}, {1536, "1536"}, {10 << 20, "10M"}, {1 << 30, "1G"}, {3 << 60, "3E"}} {
		got := FormatSize(tc.n)
		if got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if back, err := ParseSize(got); err != nil || back != tc.n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", tc.n, back, err)
		}
	}
}
