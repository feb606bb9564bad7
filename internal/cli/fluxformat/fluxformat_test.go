package fluxformat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		format string
		want   *Format
	}{
		{
			name:   "text only",
			format: "plain",
			want:   &Format{Parts: []Part{{Text: "plain", Arg: -1}}},
		},
		{
			name:   "escaped braces",
			format: "{{x}}",
			want:   &Format{Parts: []Part{{Text: "{x}", Arg: -1}}},
		},
		{
			name:   "field with spec",
			format: "{id.f58:>12}",
			want: &Format{Names: []string{"id.f58"}, Parts: []Part{
				{Field: "id.f58", Spec: Spec{Align: '>', Width: 12, Precision: -1}},
			}},
		},
		{
			// flux-jobs(1): !d's spec is a strftime layout, "::" then a spec.
			name:   "time layout with colons",
			format: "{t_run!d:%H:%M} {t_run!d:%R::>8h}",
			want: &Format{Names: []string{"t_run"}, Parts: []Part{
				{Field: "t_run", Conv: 'd', TimeLayout: "%H:%M", Spec: Spec{Precision: -1}},
				{Text: " ", Field: "t_run", Conv: 'd', TimeLayout: "%R", Spec: Spec{Align: '>', Width: 8, Precision: -1, Hyphen: true}},
			}},
		},
		{
			name:   "Flux's h and + suffixes",
			format: "{name:<10.10+} {nnodes:>6h}",
			want: &Format{Names: []string{"name", "nnodes"}, Parts: []Part{
				{Field: "name", Spec: Spec{Align: '<', Width: 10, Precision: 10, Mark: true}},
				{Text: " ", Field: "nnodes", Arg: 1, Spec: Spec{Align: '>', Width: 6, Precision: -1, Hyphen: true}},
			}},
		},
		{
			name:   "sentinels",
			format: "{id} ?:{queue} +:{username:<8} ?+:{name}|",
			want: &Format{Names: []string{"id", "queue", "username", "name"}, Parts: []Part{
				{Field: "id", Spec: Spec{Precision: -1}},
				{Text: " ", Field: "queue", Arg: 1, Spec: Spec{Precision: -1}, Drop: true},
				{Text: " ", Field: "username", Arg: 2, Spec: Spec{Align: '<', Width: 8, Precision: -1}, Widen: true},
				{Text: " ", Field: "name", Arg: 3, Spec: Spec{Precision: -1}, Drop: true, Widen: true},
				{Text: "|", Arg: -1},
			}},
		},
		{
			name:   "sort prefix",
			format: "sort:-t_submit,name {id}",
			want: &Format{
				Sort:  []SortKey{{Field: "t_submit", Arg: 0, Reverse: true}, {Field: "name", Arg: 1}},
				Names: []string{"t_submit", "name", "id"},
				Parts: []Part{{Field: "id", Arg: 2, Spec: Spec{Precision: -1}}},
			},
		},
		{
			name:   "a field named twice is one value",
			format: "{id} {id:>5}",
			want: &Format{Names: []string{"id"}, Parts: []Part{
				{Field: "id", Spec: Spec{Precision: -1}},
				{Text: " ", Field: "id", Spec: Spec{Align: '>', Width: 5, Precision: -1}},
			}},
		},
		{
			name:   "full numeric spec",
			format: "{x:*=+#012,.3f}",
			want: &Format{Names: []string{"x"}, Parts: []Part{
				{Field: "x", Spec: Spec{Fill: '*', Align: '=', Sign: '+', Alt: true, Zero: true, Width: 12, Grouping: ',', Precision: 3, Type: 'f'}},
			}},
		},
		{
			name:   "fill that is an align character",
			format: "{x:<<5}",
			want: &Format{Names: []string{"x"}, Parts: []Part{
				{Field: "x", Spec: Spec{Fill: '<', Align: '<', Width: 5, Precision: -1}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.format, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		format, want string
	}{
		{"{id", `"{id" has no closing '}'`},
		{"id}", "a single '}' in the text"},
		{"{}", "{}: no field name"},
		{"{:>5}", "{:>5}: no field name"},
		{"{a[0]}", `field name "a[0]"`},
		{"{a..b}", "an empty part between dots"},
		{"{t!x}", "{t!x}: no conversion !x"},
		{"{t!}", "'!' needs a conversion"},
		{"{t!dd}", "expected ':' or '}' after !d"},
		{"{t!d:%Q}", `no directive %Q`},
		{"{t!d:%H%}", "lone '%'"},
		{"{x:q}", `format spec "q": unexpected "q"`},
		{"{x:>5.}", "'.' needs a precision"},
		{"{x:99999}", "width over 1000"},
		{"{x:{w}}", "a field inside a format spec is not supported"},
		{"sort: {id}", "sort: names no field"},
		{"sort:a b", "" /* valid: the text "b" follows */},
	}
	for _, tt := range tests {
		_, err := Parse(tt.format)
		if tt.want == "" {
			if err != nil {
				t.Errorf("Parse(%q): %v", tt.format, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tt.format, err, tt.want)
		}
	}
}

// The expected strings are what Python's format() prints (checked with
// python3), except where a comment says otherwise.
func TestSpecFormat(t *testing.T) {
	tests := []struct {
		spec string
		v    any
		want string
	}{
		{">6", int64(5), "     5"},
		{"<6", int64(5), "5     "},
		{"", int64(5), "5"},
		{"6", int64(5), "     5"}, // numbers right by default
		{"6", "ab", "ab    "},     // text left
		{"^7", "ab", "  ab   "},
		{"*^7", "ab", "**ab***"},
		{"x<5", "c", "cxxxx"},
		{"06", int64(-42), "-00042"},
		{"+d", int64(5), "+5"},
		{" d", int64(5), " 5"},
		{",", int64(1234567), "1,234,567"},
		{"_x", int64(0xdeadbeef), "dead_beef"},
		{"#x", int64(255), "0xff"},
		{"#o", int64(8), "0o10"},
		{"b", int64(5), "101"},
		{"X", int64(255), "FF"},
		{"c", int64(65), "A"},
		{"=+8", int64(42), "+     42"},
		{"<5d", int64(42), "42   "},
		{".2f", 3.14159, "3.14"},
		{"8.3f", -2.5, "  -2.500"},
		{"e", 12345.678, "1.234568e+04"},
		{".3e", 0.000123, "1.230e-04"},
		{"g", 1e-5, "1e-05"},
		{"g", 123456789.0, "1.23457e+08"},
		{".3", 3.14159, "3.14"},
		{".3", 100.0, "1e+02"},
		{"", 1.5, "1.5"},
		{"", 1e16, "1e+16"},
		{"", 0.0001, "0.0001"},
		{"", 1e-5, "1e-05"},
		{"%", 0.25, "25.000000%"},
		{".1%", 0.123, "12.3%"},
		{",.2f", 1234567.891, "1,234,567.89"},
		{"10.3", "abcdef", "abc       "},
		{".3+", "abcdef", "ab+"},  // Flux's +: a cut value ends in "+"
		{".10+", "abc", "abc"},    // not cut: no "+"
		{"", true, "True"},        // Python's str(True)
		{"d", true, "1"},          // a bool is a number to a number type
		{".2f", int64(3), "3.00"}, // lenient: a whole number is a float too
		{"d", 3.7, "3"},           // lenient: a fraction is truncated for d
		{"", json.Number("1.25"), "1.25"},
		{">5", nil, "     "}, // no value: empty, padded
		{"d", nil, ""},       // no value under a number type: empty
		{"", []any{"a", int64(1)}, "a,1"},
		{">8", IntText{N: 255, Text: "ƒ5q"}, "     ƒ5q"}, // a job ID: F58 as text
		{"d", IntText{N: 255, Text: "ƒ5q"}, "255"},       // and a number to d
		{"#x", IntText{N: 255, Text: "ƒ5q"}, "0xff"},
	}
	for _, tt := range tests {
		sp, err := ParseSpec(tt.spec)
		if err != nil {
			t.Fatalf("ParseSpec(%q): %v", tt.spec, err)
		}
		got, err := sp.Format(tt.v)
		if err != nil {
			t.Errorf("format(%#v, %q): %v", tt.v, tt.spec, err)
			continue
		}
		if got != tt.want {
			t.Errorf("format(%#v, %q) = %q, want %q", tt.v, tt.spec, got, tt.want)
		}
	}
}

func TestSpecFormatErrors(t *testing.T) {
	for _, tt := range []struct {
		spec string
		v    any
		want string
	}{
		{"d", "abc", `"d" is for numbers`},
		{" 5", "abc", "a sign ( ) is for numbers"},
		{"c", int64(-1), "not a character"},
	} {
		sp, err := ParseSpec(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sp.Format(tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("format(%#v, %q) = %v, want an error with %q", tt.v, tt.spec, err, tt.want)
		}
	}
}

func TestRow(t *testing.T) {
	utc := time.UTC
	// 2026-01-02T15:04:05.5Z
	ts := float64(time.Date(2026, 1, 2, 15, 4, 5, 0, utc).Unix()) + 0.5
	tests := []struct {
		name   string
		format string
		vals   []any
		want   string
	}{
		{"flux jobs' id and state", "{id.f58:>12} {state:<8}|", []any{"ƒ2nn8j9", "RUN"}, "     ƒ2nn8j9 RUN     |"},
		{"!d with a strftime layout", "{t_run!d:%H:%M}", []any{ts}, "15:04"},
		{"!d with a spec after ::", "[{t_run!d:%b%d %R::>14}]", []any{ts}, "[   Jan02 15:04]"},
		{"!d default layout", "{t_run!d}", []any{ts}, "2026-01-02T15:04:05"},
		{"!d of no time is empty", "[{t_run!d:%H:%M}]", []any{int64(0)}, "[]"},
		{"!d of no time with h", "[{t_run!d:%H:%M::>5h}]", []any{nil}, "[    -]"},
		{"!D", "{t_run!D}", []any{ts}, "2026-01-02T15:04:05"},
		{"!d with every kind of directive", "{t!d:%Y-%m-%d %a %A %b %B %j %y %e %I%p %s %%}", []any{ts},
			"2026-01-02 Fri Friday Jan January 002 26  2 03PM 1767366245 %"},
		{"!F", "{runtime!F}", []any{90.0}, "1.5m"},
		{"!F of no value", "[{runtime!F}]", []any{nil}, "[]"},
		{"!F zero with h", "{runtime!F:>4h}", []any{int64(0)}, "   -"},
		{"!H", "{runtime!H}", []any{3725.4}, "1:02:05"},
		{"!H over a day", "{runtime!H}", []any{int64(90061)}, "1 day, 1:01:01"},
		{"!H under a second is a second", "{runtime!H}", []any{0.2}, "0:00:01"},
		{"!P", "{u!P} {u2!P} {u3!P}", []any{0.5, 0.015, 0.0005}, "50% 1.5% 0.05%"},
		{"h on an empty text", "{nodelist:h}", []any{""}, "-"},
		{"h on zero", "{nnodes:>6h}", []any{int64(0)}, "     -"},
		{"h on a value", "{nnodes:>6h}", []any{int64(2)}, "     2"},
		{"!s", "{x!s:>3}", []any{int64(7)}, "  7"},
		{"bools as Python prints them", "{a} {b}", []any{true, false}, "True False"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.format)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Row(tt.vals, utc)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Row(%q) = %q, want %q", tt.format, got, tt.want)
			}
		})
	}
}

func TestRowErrors(t *testing.T) {
	f, err := Parse("{name!F}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Row([]any{"abc"}, time.UTC); err == nil || err.Error() != `{name}: !F needs a number, not "abc"` {
		t.Errorf("Row = %v", err)
	}
}

// flux-jobs(1): ?: drops a column empty in every row (its text with it),
// +: widens one to its widest value and heading; the header keeps only
// each spec's alignment and width.
func TestFitAndHeader(t *testing.T) {
	tests := []struct {
		name     string
		format   string
		rows     [][]any
		headings []string
		header   bool
		want     []string // header, then rows
	}{
		{
			name:     "empty column dropped",
			format:   "{id:>5} ?:{queue:<8} {name}",
			rows:     [][]any{{"a", "", "x"}, {"b", nil, "y"}},
			headings: []string{"JOBID", "QUEUE", "NAME"},
			header:   true,
			want:     []string{"JOBID NAME", "    a x", "    b y"},
		},
		{
			name:     "column with a value kept",
			format:   "{id:>5} ?:{queue:<8} {name}",
			rows:     [][]any{{"a", "", "x"}, {"b", "batch", "y"}},
			headings: []string{"JOBID", "QUEUE", "NAME"},
			header:   true,
			want:     []string{"JOBID QUEUE    NAME", "    a          x", "    b batch    y"},
		},
		{
			name:     "widened to the longest value",
			format:   "+:{user:<2.2}|",
			rows:     [][]any{{"al"}, {"bartholomew"}},
			headings: []string{"USER"},
			header:   true,
			want:     []string{"USER       |", "al         |", "bartholomew|"},
		},
		{
			name:     "widened to the heading",
			format:   "+:{user}|",
			rows:     [][]any{{"al"}},
			headings: []string{"USER"},
			header:   true,
			want:     []string{"USER|", "al  |"},
		},
		{
			name:     "widened, no header",
			format:   "+:{user}|",
			rows:     [][]any{{"al"}},
			headings: []string{"USER"},
			want:     []string{"al|"},
		},
		{
			name:     "zero times and durations count as empty",
			format:   "{a} ?:{t!F} ?:{t!d}",
			rows:     [][]any{{"a", int64(0)}},
			headings: []string{"A", "T"},
			header:   true,
			want:     []string{"A", "a"},
		},
		{
			name:     "header: alignment and width only",
			format:   "{n:>8.2f} {s:^9.3+}",
			rows:     [][]any{{1.5, "abcdef"}},
			headings: []string{"N", "S"},
			header:   true,
			want:     []string{"       N     S    ", "    1.50    ab+   "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.format)
			if err != nil {
				t.Fatal(err)
			}
			fit, err := f.Fit(tt.rows, tt.headings, tt.header, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if tt.header {
				got = append(got, fit.Header(tt.headings))
			}
			for _, r := range tt.rows {
				line, err := fit.Row(r, time.UTC)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, line)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// flux-jobs(1) sort: keys: no value first, then numbers, then text; -key
// reverses; rows equal on every key keep their order.
func TestSortRows(t *testing.T) {
	f, err := Parse("sort:-pri,name {id}")
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]any{
		{int64(1), "b", "r1"},
		{nil, "a", "r2"},
		{int64(5), "z", "r3"},
		{int64(1), "a", "r4"},
		{"-", "b", "r5"},
		{"10", "c", "r6"}, // text that reads as a number sorts as one
	}
	f.SortRows(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r[2].(string))
	}
	want := []string{"r6", "r3", "r4", "r1", "r2", "r5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
