package fluxformat

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fluxq/fluxq/internal/fsd"
)

// Values are what a field may hold: string, bool, int64, uint64, int,
// float64, json.Number, IntText, nil (no value: prints empty), or
// anything else, printed with fmt (lists joined by ","). Times are seconds
// since the epoch, durations seconds.

// IntText is a number that prints as a text unless a spec asks for a
// number type: a job ID is F58 in {id} and decimal in {id:d}, as Flux's
// JobID is.
type IntText struct {
	N    uint64
	Text string
}

func (v IntText) String() string { return v.Text }

// Row formats one row: vals[i] is the value of the field numbered i.
func (f *Format) Row(vals []any, loc *time.Location) (string, error) {
	var b strings.Builder
	for _, p := range f.Parts {
		b.WriteString(p.Text)
		if p.Field == "" {
			continue
		}
		s, err := p.format(vals[p.Arg], loc)
		if err != nil {
			return "", fmt.Errorf("{%s}: %w", p.Field, err)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// Header formats the header line: each field's heading, aligned and as
// wide as its spec says (and no more: precision, types and conversions are
// for values), as flux jobs prints it.
func (f *Format) Header(headings []string) string {
	var b strings.Builder
	for _, p := range f.Parts {
		b.WriteString(p.Text)
		if p.Field == "" {
			continue
		}
		h := headings[p.Arg]
		align := p.Spec.Align
		if align == '=' {
			align = '>'
		}
		b.WriteString(pad(h, Spec{Align: align, Width: p.Spec.Width, Precision: -1}, '<'))
	}
	return b.String()
}

// Fit returns the format to print rows with: the ?: columns empty in every
// row dropped, the +: columns widened to their widest value (and heading,
// when header), as flux jobs does before it prints.
func (f *Format) Fit(rows [][]any, headings []string, header bool, loc *time.Location) (*Format, error) {
	out := *f
	out.Parts = nil
	for _, p := range f.Parts {
		if p.Field == "" || (!p.Drop && !p.Widen) {
			out.Parts = append(out.Parts, p)
			continue
		}
		// Measured without the spec, which would pad an empty value.
		bare := p
		bare.Spec = Spec{Precision: -1}
		widest := 0
		for _, r := range rows {
			s, err := bare.format(r[p.Arg], loc)
			if err != nil {
				return nil, fmt.Errorf("{%s}: %w", p.Field, err)
			}
			if !isEmptyText(s) {
				widest = max(widest, utf8.RuneCountInString(s))
			}
		}
		if p.Drop && widest == 0 {
			continue // and the text before it, as in Flux
		}
		if p.Widen {
			if header {
				widest = max(widest, utf8.RuneCountInString(headings[p.Arg]))
			}
			p.Spec.Width = max(p.Spec.Width, widest)
			if p.Spec.Precision >= 0 && p.Spec.Precision < p.Spec.Width && stringType(p.Spec.Type) {
				p.Spec.Precision = p.Spec.Width
			}
		}
		p.Drop, p.Widen = false, false
		out.Parts = append(out.Parts, p)
	}
	return &out, nil
}

func stringType(t byte) bool { return t == 0 || t == 's' }

// isEmptyText is Flux's test for an empty output: "", "0s", "0.0",
// "0:00:00" or the epoch.
func isEmptyText(s string) bool {
	switch s {
	case "", "0s", "0.0", "0:00:00", "1970-01-01T00:00:00":
		return true
	}
	return s == time.Unix(0, 0).Format("2006-01-02T15:04:05")
}

// format converts v and formats it by p's spec.
func (p Part) format(v any, loc *time.Location) (string, error) {
	if p.Conv != 0 {
		s, err := p.convert(v, loc)
		if err != nil {
			return "", err
		}
		if p.Spec.Hyphen && isEmptyText(s) {
			s = "-"
		}
		return p.Spec.text(s)
	}
	if p.Spec.Hyphen && isEmpty(v) {
		return p.Spec.text("-")
	}
	return p.Spec.Format(v)
}

// isEmpty is what Flux's h prints as "-": no value, "", a zero number, or
// a text Flux counts as empty.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	if f, ok := number(v); ok {
		return f == 0
	}
	if s, ok := v.(string); ok {
		return isEmptyText(s)
	}
	return false
}

// convert applies a ! conversion; no value converts to "".
func (p Part) convert(v any, loc *time.Location) (string, error) {
	if p.Conv == 's' {
		return Text(v), nil
	}
	if v == nil || v == "" {
		return "", nil
	}
	f, ok := number(v)
	if !ok {
		return "", fmt.Errorf("!%c needs a number, not %q", p.Conv, Text(v))
	}
	switch p.Conv {
	case 'd', 'D':
		if f == 0 {
			return "", nil // never happened
		}
		layout := p.TimeLayout
		if p.Conv == 'D' || layout == "" {
			layout = "%FT%T"
		}
		return Strftime(layout, epoch(f).In(loc)), nil
	case 'F':
		return fsd.Format(f), nil
	case 'H':
		return hms(f), nil
	case 'P':
		return percent(f), nil
	}
	return "", fmt.Errorf("no conversion !%c", p.Conv)
}

func epoch(sec float64) time.Time {
	whole := math.Floor(sec)
	return time.Unix(int64(whole), int64((sec-whole)*1e9))
}

// hms is Python's str(timedelta) of the rounded seconds: "1:02:03",
// "2 days, 1:02:03". Anything between 0 and 1s is 1s, so that a nonzero
// time does not print as zero.
func hms(sec float64) string {
	if sec > 0 && sec < 1 {
		sec = 1
	}
	if math.IsNaN(sec) || math.IsInf(sec, 0) || math.Abs(sec) > 1e15 {
		return fsd.Format(sec)
	}
	n := int64(math.RoundToEven(sec))
	days := n / 86400
	rem := n % 86400
	if rem < 0 {
		rem += 86400
		days--
	}
	s := fmt.Sprintf("%d:%02d:%02d", rem/3600, rem%3600/60, rem%60)
	switch days {
	case 0:
		return s
	case 1, -1:
		return fmt.Sprintf("%d day, %s", days, s)
	}
	return fmt.Sprintf("%d days, %s", days, s)
}

// percent is Flux's !P: three significant digits, two decimals under 1%.
func percent(f float64) string {
	v := f * 100
	if v > 0 && v < 1 {
		return strconv.FormatFloat(v, 'f', 2, 64) + "%"
	}
	return pyG(v, 3) + "%"
}

// Text is a value as {field} prints it with no spec: Python's str() of
// it, so booleans are True and False, and a list is its items joined by
// commas.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return pyRepr(x)
	case json.Number:
		if f, err := x.Float64(); err == nil && !strings.ContainsAny(string(x), "eE") {
			return pyRepr(f)
		}
		return string(x)
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = Text(e)
		}
		return strings.Join(s, ",")
	case []string:
		return strings.Join(x, ",")
	case map[string]any:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// pyRepr prints a float as Python's repr does: the shortest digits that
// read back, with ".0" on a whole number, and an exponent only for the
// very large and very small.
func pyRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a >= 1e16 || a < 1e-4) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		return pyExponent(s)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyExponent turns Go's "1e+06" into Python's "1e+06" and "1e-5" into
// "1e-05": at least two exponent digits.
func pyExponent(s string) string {
	i := strings.IndexAny(s, "eE")
	if i < 0 || i+2 >= len(s) {
		return s
	}
	mant, sign, exp := s[:i+1], s[i+1:i+2], s[i+2:]
	if len(exp) < 2 {
		exp = "0" + exp
	}
	return mant + sign + exp
}

// number reads a numeric value (booleans count as 0 and 1, as in Python).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// SortRows orders rows (each a row's values, in Names order) by the sort:
// keys, stably: no value first, then numbers, then text, as Flux does;
// a reversed key reverses that too.
func (f *Format) SortRows(rows [][]any) {
	if len(f.Sort) == 0 {
		return
	}
	slices.SortStableFunc(rows, func(a, b []any) int {
		for _, k := range f.Sort {
			c := compareValues(a[k.Arg], b[k.Arg])
			if k.Reverse {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// compareValues orders two values: none ("", "-" too) < numbers (text
// that reads as one too) < text.
func compareValues(a, b any) int {
	ka, na, sa := sortKey(a)
	kb, nb, sb := sortKey(b)
	if ka != kb {
		return cmp.Compare(ka, kb)
	}
	if ka == 1 {
		return cmp.Compare(na, nb)
	}
	return strings.Compare(sa, sb)
}

func sortKey(v any) (kind int, n float64, s string) {
	if it, ok := v.(IntText); ok {
		v = it.N
	}
	if f, ok := number(v); ok {
		return 1, f, ""
	}
	s = Text(v)
	if s == "" || s == "-" {
		return 0, 0, ""
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) {
		return 1, f, ""
	}
	return 2, 0, s
}
