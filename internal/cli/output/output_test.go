package output

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

type row struct {
	ID     int64   `json:"id"`
	Name   string  `json:"name"`
	Count  int     `json:"count"`
	Result string  `json:"result,omitempty"`
	T      float64 `json:"t"`
}

var testTable = Table[row]{
	Description: "the test columns",
	Columns: []Column[row]{
		{Header: "ID", Align: Right, Value: func(r row) string { return strconv.FormatInt(r.ID, 10) }},
		{Header: "NAME", Max: 6, Value: func(r row) string { return r.Name }},
		{Header: "COUNT", Align: Right, Value: func(r row) string { return strconv.Itoa(r.Count) }},
		{Header: "RESULT", Value: func(r row) string { return r.Result }},
	},
	Style: func(r row) Style {
		if r.Result == "ok" {
			return Success
		}
		return Plain
	},
}

var testRows = []row{
	{ID: 7, Name: "short", Count: 1, Result: "ok", T: 1.5},
	{ID: 12345, Name: "much-too-long", Count: 100},
}

func TestTableRender(t *testing.T) {
	tests := []struct {
		name string
		rows []row
		opts RenderOptions
		want string
	}{
		{
			// flux jobs' look: one space between columns, numbers to the
			// right, "+" on a cut value, no trailing blanks.
			name: "header",
			rows: testRows,
			opts: RenderOptions{Header: true},
			want: "   ID NAME   COUNT RESULT\n" +
				"    7 short      1 ok\n" +
				"12345 much-+   100\n",
		},
		{
			name: "no header",
			rows: testRows,
			want: "    7 short    1 ok\n" +
				"12345 much-+ 100\n",
		},
		{
			// An empty listing still says what it would show.
			name: "no rows",
			opts: RenderOptions{Header: true},
			want: "ID NAME COUNT RESULT\n",
		},
		{name: "nothing at all"},
		{
			name: "colour",
			rows: testRows[:1],
			opts: RenderOptions{Color: true},
			want: "\x1b[1;32m7\x1b[22;0m \x1b[1;32mshort\x1b[22;0m \x1b[1;32m1\x1b[22;0m \x1b[1;32mok\x1b[22;0m\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := testTable.Render(&b, tt.rows, tt.opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("Render (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCell(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 0, "plain"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven-long", 10, "eleven-lo+"},
		{"ƒƒƒƒ", 3, "ƒƒ+"},
		{"x", 1, "x"},
		{"xy", 1, "+"},
		// A newline would break the row; an escape would reach the
		// terminal.
		{"a\nb\x1b[31m", 0, "a?b?[31m"},
	}
	for _, tt := range tests {
		if got := Cell(tt.in, tt.max); got != tt.want {
			t.Errorf("Cell(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestColorEnabled(t *testing.T) {
	tests := []struct {
		mode, noColor string
		want          bool
		code          int
	}{
		{mode: "always", want: true},
		// An explicit flag wins over NO_COLOR (no-color.org).
		{mode: "always", noColor: "1", want: true},
		{mode: "never"},
		// auto: not a terminal here.
		{mode: "auto"},
		{mode: ""},
		{mode: "auto", noColor: "1"},
		{mode: "sometimes", code: exitcode.Usage},
	}
	for _, tt := range tests {
		got, err := ColorEnabled(tt.mode, &bytes.Buffer{}, tt.noColor)
		if code := exitcode.Code(err); code != tt.code || got != tt.want {
			t.Errorf("ColorEnabled(%q, NO_COLOR=%q) = %v, exit %d; want %v, exit %d", tt.mode, tt.noColor, got, code, tt.want, tt.code)
		}
	}
	// A file that is not a terminal gets no colour either.
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if on, _ := ColorEnabled("auto", f, ""); on {
		t.Error("auto colours a regular file")
	}
}

var testFieldList = List[row]{
	Item: func(r row) any { return r },
	Fields: []Field[row]{
		{Name: "double", Heading: "TWICE", Value: func(r row) any { return r.ID * 2 }},
		{Name: "shout", Value: func(r row) any { return strings.ToUpper(r.Name) }},
	},
}

var testList = List[row]{
	Tables: map[string]Table[row]{"default": testTable, "names": {Description: "just names", Columns: testTable.Columns[1:2]}},
	Order:  []string{"default", "names"},
	Doc:    func(rows []row) any { return map[string]any{"rows": rows} },
	Item:   func(r row) any { return r },
}

func TestPrintList(t *testing.T) {
	tests := []struct {
		name string
		p    Printer
		list *List[row] // testList if nil
		want string
		code int
	}{
		{name: "default table", p: Printer{}, want: "   ID NAME   COUNT RESULT\n    7 short      1 ok\n12345 much-+   100\n"},
		{name: "preset", p: Printer{Format: "names", NoHeader: true}, want: "short\nmuch-+\n"},
		// docs/cli.md: --json is one document and nothing else.
		{name: "json", p: Printer{JSON: true}, want: `{"rows":[{"id":7,"name":"short","count":1,"result":"ok","t":1.5},{"id":12345,"name":"much-too-long","count":100,"t":0}]}` + "\n"},
		// A template sees the --json fields, integers as integers.
		{name: "template", p: Printer{Format: `{{.name}} {{printf "%05d" .id}} {{.t}}`}, want: "short 00007 1.5\nmuch-too-long 12345 0\n"},
		{name: "template with newline", p: Printer{Format: "{{.id}}\n"}, want: "7\n12345\n"},
		{name: "template funcs", p: Printer{Format: `{{upper .name}} {{fsd .count}} {{json .result}}`}, want: "SHORT 1.000s \"ok\"\nMUCH-TOO-LONG 1.667m null\n"},
		// -o help: the presets, then every field (issue 16).
		{name: "help", p: Printer{Format: "help"}, want: "Named formats (-o NAME):\n  default    the test columns\n  names      just names\n" +
			"Fields (-o '{FIELD}' in Flux's syntax, e.g. '{FIELD:>10}'; -o '{{.FIELD}}' in a template):\n" +
			"  count  COUNT\n  id     ID\n  name   NAME\n  result RESULT\n  t      T\n"},
		{name: "unknown preset", p: Printer{Format: "nosuch"}, code: exitcode.Usage},
		{name: "bad template", p: Printer{Format: "{{.name"}, code: exitcode.Usage},
		{name: "failing template", p: Printer{Format: "{{fsd .name}}"}, code: exitcode.Failed},
		// Issue 16: a field that does not exist is a usage error; one
		// with no value yet (omitted from the JSON) prints empty.
		{name: "unknown field", p: Printer{Format: "{{.id}} {{.nosuch}}"}, code: exitcode.Usage},
		{name: "field of a string", p: Printer{Format: "{{with .name}}{{.x}}{{end}}"}, code: exitcode.Failed},
		{name: "unknown field by $", p: Printer{Format: "{{range $i := .name}}{{$.nosuch}}{{end}}"}, code: exitcode.Usage},
		{name: "no value yet", p: Printer{Format: "[{{.result}}] [{{if .result}}set{{end}}]"}, want: "[ok] [set]\n[] []\n"},
		// Issue 16: flux jobs' format syntax, with a header unless -n.
		{name: "flux format", p: Printer{Format: "{id:>6} {name:<6.6+}|{t!F}"}, want: "    ID NAME  |T\n     7 short |1.500s\n 12345 much-+|0s\n"},
		{name: "flux format, no header", p: Printer{Format: "{id:>6} ?:{result} +:{name}", NoHeader: true}, want: "     7 ok short        \n 12345  much-too-long\n"},
		{name: "flux format sorted", p: Printer{Format: "sort:-count {count}", NoHeader: true}, want: "100\n1\n"},
		{name: "flux format, no value yet", p: Printer{Format: "[{result:h}]", NoHeader: true}, want: "[ok]\n[-]\n"},
		// Rows are coloured as the default table colours them.
		{name: "flux format, colour", p: Printer{Format: "{name}", NoHeader: true, Color: true}, want: "\x1b[1;32mshort\x1b[22;0m\nmuch-too-long\n"},
		{name: "flux format, unknown field", p: Printer{Format: "{nam}"}, code: exitcode.Usage},
		{name: "flux format, bad spec", p: Printer{Format: "{name:?}"}, code: exitcode.Usage},
		{name: "flux format, text as a number", p: Printer{Format: "{name:d}"}, code: exitcode.Usage},
		{name: "flux format, computed field", p: Printer{Format: "{double} {shout}", NoHeader: true}, list: &testFieldList, want: "14 SHORT\n24690 MUCH-TOO-LONG\n"},
		{name: "flux format, computed field's heading", p: Printer{Format: "{double:>5}"}, list: &testFieldList, want: "TWICE\n   14\n24690\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			p := tt.p
			p.Out = &b
			l := testList
			if tt.list != nil {
				l = *tt.list
			}
			err := PrintList(&p, l, testRows)
			if code := exitcode.Code(err); code != tt.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.code)
			}
			if tt.code != 0 {
				return
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("PrintList (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintObject(t *testing.T) {
	obj := map[string]any{"total": 3, "states": map[string]int{"RUN": 2}}
	tests := []struct {
		p    Printer
		want string
	}{
		{Printer{}, "human\n"},
		{Printer{JSON: true}, `{"states":{"RUN":2},"total":3}` + "\n"},
		{Printer{Format: "{{.total}}/{{.states.RUN}}"}, "3/2\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		p := tt.p
		p.Out = &b
		human := func(w io.Writer) error { _, err := io.WriteString(w, "human\n"); return err }
		if err := PrintObject(&p, obj, human); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("PrintObject(%+v) (-want +got):\n%s", tt.p, diff)
		}
	}
}

// WriteJSON leaves HTML characters alone: the reader is a program.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, map[string]string{"note": "a<b & ƒ"}); err != nil {
		t.Fatal(err)
	}
	if want := `{"note":"a<b & ƒ"}` + "\n"; b.String() != want {
		t.Errorf("WriteJSON = %q, want %q", b.String(), want)
	}
}

func TestFields(t *testing.T) {
	got, err := Fields(map[string]any{"id": uint64(1) << 62, "t": 1700000000.123456, "n": 3, "list": []any{1.5, "x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": int64(1) << 62, "t": json.Number("1700000000.123456"), "n": int64(3), "list": []any{json.Number("1.5"), "x"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fields (-want +got):\n%s", diff)
	}
	if !strings.Contains(Paint(Failure, "x"), "x") || Paint(Plain, "x") != "x" {
		t.Error("Paint")
	}
}

// textName is a struct JSON writes as a string through MarshalText, as a
// reservation's owner ("tool:alice") is.
type textName struct {
	User string
	Num  int
}

func (n textName) MarshalText() ([]byte, error) { return []byte("tool:" + n.User), nil }

type withText struct {
	Owner textName   `json:"owner"`
	Many  []textName `json:"many"`
}

// A field whose type writes itself as text is a leaf, named as its JSON
// is: -o help does not list the Go struct's fields, a Flux format naming
// one is refused (it printed nothing before), and the field prints its
// text.
func TestTextMarshalerField(t *testing.T) {
	items := []withText{{Owner: textName{User: "alice"}, Many: []textName{{User: "a"}, {User: "b"}}}}
	l := List[withText]{Item: func(w withText) any { return w }, Shape: withText{}}
	tests := []struct {
		format string
		want   string
		code   int
	}{
		{format: "help", want: "Fields (-o '{FIELD}' in Flux's syntax, e.g. '{FIELD:>10}'; -o '{{.FIELD}}' in a template):\n  many  MANY\n  owner OWNER\n"},
		{format: "{owner} {many}", want: "OWNER MANY\ntool:alice tool:a,tool:b\n"},
		{format: "{{.owner}}", want: "tool:alice\n"},
		{format: "{owner.User}", code: exitcode.Usage},
		{format: "{owner.Num}", code: exitcode.Usage},
		{format: "{{.owner.User}}", code: exitcode.Usage},
		{format: "{{$.owner.User}}", code: exitcode.Usage},
		{format: "{{range .many}}{{.}} {{end}}", want: "tool:a tool:b \n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			p := Printer{Out: &b, Format: tt.format}
			err := PrintList(&p, l, items)
			if code := exitcode.Code(err); code != tt.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.code)
			}
			if diff := cmp.Diff(tt.want, b.String()); tt.code == 0 && diff != "" {
				t.Errorf("PrintList (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteJSONAsEncodingJSON: WriteJSON writes what encoding/json's
// Encoder (HTML unescaped) wrote, byte for byte, for the values --json
// documents hold: floats of every size (times, fractions, 1e21 and
// 1e-7 where encoding/json turns to exponents), strings with HTML, line
// separators, control characters and bad UTF-8, maps in key order, raw
// JSON with blanks, nil pointers and empty slices.
func TestWriteJSONAsEncodingJSON(t *testing.T) {
	type doc struct {
		F   float64         `json:"f"`
		S   string          `json:"s"`
		M   map[string]any  `json:"m"`
		P   *int            `json:"p"`
		O   *int            `json:"o,omitempty"`
		L   []string        `json:"l"`
		E   []string        `json:"e"`
		Raw json.RawMessage `json:"raw"`
		U   uint64          `json:"u"`
	}
	strs := []string{"", "a<b>&c", "\u2028\u2029", "bad\xff", "\x00\x1f\x7f", "日本", `"\/`, "\U0001F680", "\xed\xa0\x80", "ƒ4FHRno"}
	floats := []float64{0, -0.5, 1.5, 1796196626.860134, 1e21, 1e20, 1e-7, 1e-6, 123456789012345678, 0.1 + 0.2, 3.0e-300}
	raws := []string{`{ "a" : [1, 2 ,3], "h":"<&>" }`, "\n{\"x\":\"\\u003c\"}\n", `null`, `"\u2028 <"`}
	r := rand.New(rand.NewPCG(28, 2))
	for i := 0; i < 20000; i++ {
		s := func() string { return strs[r.IntN(len(strs))] + strs[r.IntN(len(strs))] }
		f := floats[r.IntN(len(floats))] * float64(1+r.IntN(1000))
		v := doc{F: f, S: s(), M: map[string]any{s(): f, "sched": map[string]any{"t_estimate": f, "reason_pending": s(), "n": nil}},
			L: []string{s()}, Raw: json.RawMessage(raws[r.IntN(len(raws))]), U: r.Uint64()}
		if r.IntN(2) == 0 {
			x := r.IntN(1000) - 500
			v.P, v.O = &x, &x
		}
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if want.String() != got.String() {
			t.Fatalf("%+v:\nencoding/json %q\nWriteJSON     %q", v, want.String(), got.String())
		}
	}
}

// TestWriteJSONListAsWriteJSON: a list document written in chunks on
// every core is the bytes WriteJSON writes of it whole, at every length
// around a chunk's, with the values of TestWriteJSONAsEncodingJSON.
func TestWriteJSONListAsWriteJSON(t *testing.T) {
	type item struct {
		F float64        `json:"f"`
		S string         `json:"s"`
		M map[string]any `json:"m"`
		P *int           `json:"p"`
	}
	strs := []string{"", "a<b>&c", "\u2028\u2029", "bad\xff", "\x00\x1f", "日本", `"\/`}
	r := rand.New(rand.NewPCG(28, 3))
	all := make([]item, 3*jsonChunk+5)
	for i := range all {
		s := strs[r.IntN(len(strs))] + strs[r.IntN(len(strs))]
		all[i] = item{F: r.Float64() * 1e9, S: s, M: map[string]any{s: i, "sched": map[string]any{"reason_pending": s}}}
		if r.IntN(2) == 0 {
			all[i].P = &i
		}
	}
	type doc struct {
		Items []item `json:"items"`
	}
	for _, n := range []int{0, 1, jsonChunk - 1, jsonChunk, jsonChunk + 1, 2 * jsonChunk, len(all)} {
		items := all[:n]
		var want, got bytes.Buffer
		if err := WriteJSON(&want, doc{Items: append([]item{}, items...)}); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSONList(&got, "items", items, func(run []item) any { return run }); err != nil {
			t.Fatal(err)
		}
		if want.String() != got.String() {
			t.Errorf("%d items: WriteJSONList differs from WriteJSON (%d bytes, want %d)", n, got.Len(), want.Len())
		}
	}
}
