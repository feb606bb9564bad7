package fluxformat

import (
	"math"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse: any string either parses or is refused with an error, never
// a panic; what parses writes back (String) to a format that parses to
// the same thing; and it formats any row of values, fits and heads it,
// sorts it, without a panic, in valid UTF-8 when the values are.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"{id.f58:>12} {state:<8} {t_run!d:%H:%M}",
		"{id.f58:>12} ?:{queue:<8.8} +:{username:<8} {name:<10.10+} {status_abbrev:>2.2} {ntasks:>6} {nnodes:>6h} {contextual_time!F:>8h} {contextual_info}",
		"sort:-t_submit,name {id} {{literal}} }}",
		"{t!d:%b%d %R::>16h} {r!H} {u!P:>5} {x:*=+#012,.3f} {y:<<5} {z!s}",
		"?+:{a} {b:c} {c:%} {d:_X}",
		"{", "}", "{}", "{a!", "{a!d:%", "sort:", "{a:{b}}", "{a:99999999999999999999}",
	} {
		f.Add(s, "text", 1.5)
	}
	f.Fuzz(func(t *testing.T, s, text string, num float64) {
		fm, err := Parse(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("Parse(%q): an empty error", s)
			}
			return
		}
		again, err := Parse(fm.String())
		if err != nil {
			t.Fatalf("Parse(%q) wrote %q, which does not parse: %v", s, fm.String(), err)
		}
		if diff := cmp.Diff(fm, again); diff != "" {
			t.Fatalf("Parse(%q) wrote %q, which parses differently (-first +again):\n%s", s, fm.String(), diff)
		}
		kinds := []any{nil, text, num, int64(num), true, []any{text, num}, ""}
		if math.IsNaN(num) || math.Abs(num) > 1e18 {
			kinds[3] = int64(0)
		}
		var rows [][]any
		for _, v := range kinds {
			row := make([]any, len(fm.Names))
			for i := range row {
				row[i] = v
			}
			rows = append(rows, row)
		}
		headings := make([]string, len(fm.Names))
		for i, n := range fm.Names {
			headings[i] = n
		}
		fm.SortRows(rows)
		fit, err := fm.Fit(rows, headings, true, time.UTC)
		if err != nil {
			return // a value of the wrong kind for a conversion or type
		}
		h := fit.Header(headings)
		if utf8.ValidString(s) && !utf8.ValidString(h) {
			t.Fatalf("header of %q is not UTF-8: %q", s, h)
		}
		for _, r := range rows {
			line, err := fit.Row(r, time.UTC)
			if err != nil {
				continue
			}
			if utf8.ValidString(s) && utf8.ValidString(text) && !utf8.ValidString(line) {
				t.Fatalf("row of %q is not UTF-8: %q", s, line)
			}
		}
	})
}
