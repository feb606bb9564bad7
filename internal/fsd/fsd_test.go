package fsd

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var inf = math.Inf(1)

// Values are computed at run time: Go evaluates constant expressions such as
// 0.2*0.001 exactly, which is not what a float64 multiplication gives.
func mul(a, b float64) float64 { return a * b }
func add(a, b float64) float64 { return a + b }

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
	}{
		// RFC 23: suffix table, multipliers 1E-3, 1, 60, 3600, 86400.
		{"rfc23 ms", "2ms", mul(2, 0.001)},
		{"rfc23 s", "0.1s", 0.1},
		{"rfc23 no suffix is seconds", "30", 30},
		{"rfc23 h", "1.2h", mul(1.2, 3600)},
		{"rfc23 m", "5m", 300},
		{"rfc23 zero", "0s", 0},
		{"rfc23 d", "5d", 432000},
		// RFC 23: "when N is infinity or inf, the unit suffix SHALL be omitted".
		{"rfc23 inf", "inf", inf},
		{"rfc23 infinity", "infinity", inf},
		// flux-core src/common/libutil/test/fsd.c rfc23_tests: strtod ignores case.
		{"flux INF", "INF", inf},
		{"INFINITY", "INFINITY", inf},
		{"plus inf", "+inf", inf},
		// flux-core libutil/test/fsd.c
		{"flux 0", "0", 0},
		{"flux 0ms", "0ms", 0},
		{"flux 0m", "0m", 0},
		{"flux 0h", "0h", 0},
		{"flux 0d", "0d", 0},
		{"flux 500ms", "500ms", 0.5},
		{"flux 0.2ms", "0.2ms", mul(0.2, 0.001)},
		{"flux 0.5", "0.5", 0.5},
		{"flux 0.5s", "0.5s", 0.5},
		{"flux 0.5m", "0.5m", 30},
		{"flux 0.5h", "0.5h", 1800},
		{"flux 1.0d", "1.0d", 86400},
		// Forms strtod accepts.
		{"fraction", "1.5m", 90},
		{"trailing dot", "5.", 5},
		{"leading dot", ".5m", 30},
		{"exponent", "1e3ms", 1},
		{"exponent sign", "2.5E+1s", 25},
		{"negative exponent", "15e-1h", 5400},
		{"plus sign", "+5m", 300},
		{"leading zeros", "007s", 7},
		{"underflow is zero", "1e-400", 0},
		{"largest", "1.7976931348623157e308", math.MaxFloat64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
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
		// flux-core libutil/test/fsd.c error cases
		{"flux negative", "-1.", `invalid Flux standard duration "-1.": must not be negative`},
		{"flux 1.0f", "1.0f", `invalid Flux standard duration "1.0f": unknown unit "f" (want ms, s, m, h or d)`},
		{"flux 1.0sec", "1.0sec", `invalid Flux standard duration "1.0sec": unknown unit "sec" (want ms, s, m, h or d)`},
		{"flux NaNs", "NaNs", `invalid Flux standard duration "NaNs": not a number`},
		{"flux infinites", "infinites", `invalid Flux standard duration "infinites": units not allowed with infinity`},
		{"flux infd", "infd", `invalid Flux standard duration "infd": units not allowed with infinity`},
		{"empty", "", `invalid Flux standard duration "": empty string`},
		{"nan", "nan", `invalid Flux standard duration "nan": not a number`},
		{"negative zero", "-0", `invalid Flux standard duration "-0": must not be negative`},
		{"negative inf", "-inf", `invalid Flux standard duration "-inf": must not be negative`},
		{"garbage", "abc", `invalid Flux standard duration "abc": expected a number`},
		{"lone dot", ".", `invalid Flux standard duration ".": expected a number`},
		{"lone sign", "+", `invalid Flux standard duration "+": expected a number`},
		{"unit only", "ms", `invalid Flux standard duration "ms": expected a number`},
		{"leading space", " 5", `invalid Flux standard duration " 5": expected a number`},
		{"trailing space", "5 ", `invalid Flux standard duration "5 ": unknown unit " " (want ms, s, m, h or d)`},
		{"space before unit", "5 m", `invalid Flux standard duration "5 m": unknown unit " m" (want ms, s, m, h or d)`},
		{"upper case unit", "5M", `invalid Flux standard duration "5M": unknown unit "M" (want ms, s, m, h or d)`},
		{"two units", "1h30m", `invalid Flux standard duration "1h30m": unknown unit "h30m" (want ms, s, m, h or d)`},
		{"hex", "0x10", `invalid Flux standard duration "0x10": unknown unit "x10" (want ms, s, m, h or d)`},
		{"dangling exponent", "1e", `invalid Flux standard duration "1e": unknown unit "e" (want ms, s, m, h or d)`},
		{"overflow", "1e400", `invalid Flux standard duration "1e400": out of range`},
		{"overflow after unit", "1e308d", `invalid Flux standard duration "1e308d": out of range`},
		{"long input is cut", strings.Repeat("x", 100),
			`invalid Flux standard duration "` + strings.Repeat("x", 64) + `"...: expected a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error", tt.in, got)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Parse(%q) error (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseTimeLimit(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    float64
		wantErr string
	}{
		// flux submit --time-limit=MIN|FSD: "Time limit in minutes when no
		// units provided, otherwise in Flux standard duration".
		{name: "bare is minutes", in: "30", want: 1800},
		{name: "bare fraction", in: "1.5", want: 90},
		{name: "seconds", in: "30s", want: 30},
		{name: "days", in: "2d", want: 172800},
		{name: "hours", in: "1.5h", want: 5400},
		{name: "ms", in: "500ms", want: 0.5},
		{name: "inf", in: "inf", want: inf},
		{name: "zero", in: "0", want: 0},
		{name: "negative", in: "-5", wantErr: `invalid Flux standard duration "-5": must not be negative`},
		{name: "garbage", in: "soon", wantErr: `invalid Flux standard duration "soon": expected a number`},
		{name: "overflow", in: "1e307", wantErr: `invalid Flux standard duration "1e307": out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTimeLimit(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseTimeLimit(%q) = %v, want error", tt.in, got)
				}
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTimeLimit(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseTimeLimit(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		// The forms named in fluxq's brief, as flux jobs prints them.
		{"ms as seconds", 0.057, "0.057s"},
		{"minutes", 105.9, "1.765m"},
		{"hours", 28800, "8h"},
		{"infinity", inf, "inf"},
		// flux.util.fsd rules.
		{"zero", 0, "0s"},
		{"below 1ms rounds to 0s", 0.000999, "0s"},
		{"1ms", 0.001, "0.001s"},
		{"three decimals below 10s", 5, "5.000s"},
		{"rounding below 10s", 9.9996, "10.000s"},
		{"four digits below 1m", 12.3456, "12.35s"},
		{"just under a minute", 59.9999, "60s"},
		{"62s", 62, "1.033m"},
		{"one hour", 3600, "1h"},
		{"4500s", 4500, "1.25h"},
		{"one day", 86400, "1d"},
		{"1.2 days", 103680, "1.2d"},
		{"many days use an exponent", 1e10, "1.157e+05d"},
		{"negative", -5, "0s"},
		{"nan", math.NaN(), "0s"},
		// Rounding to four digits would overflow a float64 here; the exact
		// form keeps the output parseable.
		{"largest float", math.MaxFloat64, FormatExact(math.MaxFloat64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Format(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Format(%v) (-want +got):\n%s", tt.in, diff)
			}
			if _, err := Parse(got); err != nil {
				t.Errorf("Format(%v) = %q does not parse: %v", tt.in, got, err)
			}
		})
	}
}

func TestFormatG(t *testing.T) {
	tests := []struct {
		name      string
		in        float64
		precision int
		want      string
	}{
		// flux-core libutil/test/fsd.c, fsd_format_duration (precision 6).
		{"flux INFINITY", inf, 6, "infinity"},
		{"flux .001", .001, 6, "1ms"},
		{"flux 0.01", 0.01, 6, "10ms"},
		{"flux 5", 5, 6, "5s"},
		{"flux 5.1", 5.1, 6, "5.1s"},
		{"flux 62", 62, 6, "1.03333m"},
		{"flux 3600", 3600, 6, "1h"},
		{"flux 4500", 4500, 6, "1.25h"},
		{"flux 86400", 86400, 6, "1d"},
		{"flux 103680", 103680, 6, "1.2d"},
		// flux-core: fsd_format_duration_ex (62., 1) is "1m".
		{"flux precision 1", 62, 1, "1m"},
		// flux-core's comment: 62.1ms rather than 0.0621s, 0.0123ms rather
		// than 1.23e-05s.
		{"small in ms", 0.0621, 6, "62.1ms"},
		{"tiny in ms", 0.0000123, 6, "0.0123ms"},
		{"zero in seconds", 0, 6, "0s"},
		{"precision 0 acts as 1", 62, 0, "1m"},
		{"precision 2 as flux uptime", 5000, 2, "1.4h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FormatG(tt.in, tt.precision)
			if err != nil {
				t.Fatalf("FormatG(%v, %d): %v", tt.in, tt.precision, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FormatG(%v, %d) (-want +got):\n%s", tt.in, tt.precision, diff)
			}
		})
	}
	// flux-core: NaN and negative durations are EINVAL.
	for _, bad := range []float64{math.NaN(), -1} {
		if got, err := FormatG(bad, 6); err == nil {
			t.Errorf("FormatG(%v) = %q, want error", bad, got)
		}
	}
}

func TestFormatExact(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		// fluxq's brief: "90" -> "1.5m", "3600" -> "1h", "0.001" -> "1ms".
		{"1.5m", 90, "1.5m"},
		{"1h", 3600, "1h"},
		{"1ms", 0.001, "1ms"},
		{"zero", 0, "0s"},
		{"inf", inf, "inf"},
		{"seconds beat a long fraction of minutes", 100, "100s"},
		{"below one in a unit loses", 30, "30s"},
		{"1.5h beats 90m", 5400, "1.5h"},
		{"1d", 86400, "1d"},
		{"2.5d", 216000, "2.5d"},
		{"half a ms", 0.0005, "0.5ms"},
		{"0.1s is 100ms", 0.1, "100ms"},
		{"0.5s is 500ms", 0.5, "500ms"},
		{"1.25s", 1.25, "1.25s"},
		{"not a round number", add(0.1, 0.2), "300.00000000000006ms"},
		{"large", 1e300, "1.1574074074074075e+295d"},
		{"largest", math.MaxFloat64, "1.7976931348623157e+308s"},
		// Fewer written digits in milliseconds: "4.94e-321" is 0.000…494.
		{"smallest", math.SmallestNonzeroFloat64, "4.94e-321ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FormatExact(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FormatExact(%v) (-want +got):\n%s", tt.in, diff)
			}
			back, err := Parse(got)
			if err != nil {
				t.Fatalf("Parse(%q): %v", got, err)
			}
			if back != tt.in {
				t.Errorf("Parse(FormatExact(%v)) = %v", tt.in, back)
			}
		})
	}
}

// Every RFC 23 example survives FormatExact exactly.
func TestFormatExactRoundTripsRFCExamples(t *testing.T) {
	for _, s := range []string{"2ms", "0.1s", "30", "1.2h", "5m", "0s", "5d", "inf", "infinity", "0.2ms", "1.03333m"} {
		v, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		e := FormatExact(v)
		back, err := Parse(e)
		if err != nil || back != v {
			t.Errorf("%q: FormatExact = %q parses to %v, %v; want %v", s, e, back, err, v)
		}
	}
}

func TestConversions(t *testing.T) {
	tests := []struct {
		name string
		sec  float64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"1.5m", 90, 90 * time.Second},
		{"1ms", 0.001, time.Millisecond},
		{"rounds to nearest ns", 1.0000000004, time.Second},
		{"inf saturates", inf, time.Duration(math.MaxInt64)},
		{"huge saturates", 1e300, time.Duration(math.MaxInt64)},
		{"just past the edge", 9223372036.854775807, time.Duration(math.MaxInt64)},
		{"negative inf", math.Inf(-1), time.Duration(math.MinInt64)},
		{"nan", math.NaN(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Duration(tt.sec)); diff != "" {
				t.Errorf("Duration(%v) (-want +got):\n%s", tt.sec, diff)
			}
		})
	}
	if diff := cmp.Diff(90.0, Seconds(90*time.Second)); diff != "" {
		t.Errorf("Seconds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(0.001, Seconds(time.Millisecond)); diff != "" {
		t.Errorf("Seconds (-want +got):\n%s", diff)
	}
}

func BenchmarkParse(b *testing.B) {
	for range b.N {
		if _, err := Parse("1.5h"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormat(b *testing.B) {
	for range b.N {
		_ = Format(5400.25)
	}
}

func BenchmarkFormatExact(b *testing.B) {
	for range b.N {
		_ = FormatExact(5400.25)
	}
}
