package output

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// renderTablewriter is Render as it was written before it laid tables out
// itself: the same table through tablewriter, with the options it had.
// Render must print the same bytes (the output of every listing is a
// contract: scripts cut its columns).
func renderTablewriter[T any](t Table[T], w io.Writer, rows []T, o RenderOptions) error {
	ncol := len(t.Columns)
	if ncol == 0 {
		return nil
	}
	aligns := make([]tw.Align, ncol)
	headers := make([]string, ncol)
	for i, c := range t.Columns {
		aligns[i] = tw.AlignLeft
		if c.Align == Right {
			aligns[i] = tw.AlignRight
		}
		headers[i] = c.Header
	}
	if !o.Header && len(rows) == 0 {
		return nil
	}
	cells := func(cfg tw.CellConfig) tw.CellConfig {
		cfg.Formatting = tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off}
		cfg.Alignment = tw.CellAlignment{PerColumn: aligns}
		cfg.Padding = tw.CellPadding{Global: tw.Padding{Left: "", Right: " ", Overwrite: true}}
		return cfg
	}
	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{ShowHeader: tw.Off, ShowFooter: tw.Off, BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.Off, ShowFooterLine: tw.Off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: cells(tw.CellConfig{}),
			Row:    cells(tw.CellConfig{}),
			Footer: cells(tw.CellConfig{}),
		}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	if o.Header {
		table.Header(headers)
	}
	row := make([]string, ncol)
	for _, r := range rows {
		st := Plain
		if o.Color && t.Style != nil {
			st = t.Style(r)
		}
		for i, c := range t.Columns {
			row[i] = Paint(st, Cell(c.Value(r), c.Max))
		}
		if err := table.Append(slices.Clone(row)); err != nil {
			return err
		}
	}
	if err := table.Render(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for sc.Scan() {
		bw.Write(bytes.TrimRight(sc.Bytes(), " "))
		bw.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// cellTexts are what cells hold, the awkward ones too: empty, blanks at
// either end, wide (CJK, emoji) and combining runes, ambiguous-width
// ones, control characters and bad UTF-8 (made '?' by Cell), a value to
// cut, escapes a user put in a name.
var cellTexts = []string{
	"", " ", "a", "ƒ4FHRno", "root", "true", "sleep", "  lead", "trail  ", "a b",
	"日本語", "名前", "é", "e\u0301", "🚀", "👩‍🔬", "Ω", "±", "ｱ", "→",
	"tab\there", "new\nline", "\x1b[31mred\x1b[0m", "bad\xffutf8", "\u009b2J",
	"waiting for drained nodes: vm (bench)", "much-too-long-for-its-column", "12345", "-", "1.5h",
}

var headerTexts = []string{"JOBID", "USER", "NAME", "ST", "NTASKS", "TIME", "INFO", "", "名前", "X"}

// randomTable is a table of 1 to 6 columns over rows of cell indexes.
func randomTable(r *rand.Rand) (Table[[]string], [][]string) {
	ncol := 1 + r.IntN(6)
	cols := make([]Column[[]string], ncol)
	for i := range cols {
		i := i
		cols[i] = Column[[]string]{
			Header: headerTexts[r.IntN(len(headerTexts))],
			Align:  Align(r.IntN(2)),
			Value:  func(row []string) string { return row[i] },
		}
		if r.IntN(3) == 0 {
			cols[i].Max = 1 + r.IntN(10)
		}
	}
	rows := make([][]string, r.IntN(8))
	for j := range rows {
		rows[j] = make([]string, ncol)
		for i := range rows[j] {
			rows[j][i] = cellTexts[r.IntN(len(cellTexts))]
		}
	}
	styles := []Style{Plain, Success, Failure, Muted, Notice}
	t := Table[[]string]{Columns: cols, Style: func(row []string) Style {
		return styles[len(strings.Join(row, ""))%len(styles)]
	}}
	return t, rows
}

// TestRenderAsTablewriter: Render prints what tablewriter printed, byte
// for byte, over tables of every awkward cell, with and without the
// header and colour.
func TestRenderAsTablewriter(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	for n := 0; n < 3000; n++ {
		tab, rows := randomTable(r)
		o := RenderOptions{Header: r.IntN(2) == 0, Color: r.IntN(2) == 0}
		var want, got bytes.Buffer
		if err := renderTablewriter(tab, &want, rows, o); err != nil {
			t.Fatal(err)
		}
		if err := tab.Render(&got, rows, o); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			var hs []string
			for _, c := range tab.Columns {
				hs = append(hs, c.Header)
			}
			t.Fatalf("table %d, headers %q, rows %q, %+v (-tablewriter +Render):\n%s", n, hs, rows, o, diff)
		}
	}
}

// FuzzRenderAsTablewriter: any cells, split from the input on '|' (rows
// on ';'), print as tablewriter printed them.
func FuzzRenderAsTablewriter(f *testing.F) {
	f.Add("a|bb;ccc|d", uint8(3))
	f.Add("日本語|é;🚀|\x1b[31mx", uint8(0))
	f.Add(";|", uint8(7))
	f.Fuzz(func(t *testing.T, in string, flags uint8) {
		var rows [][]string
		ncol := 0
		for _, line := range strings.Split(in, ";") {
			cells := strings.Split(line, "|")
			ncol = max(ncol, len(cells))
			rows = append(rows, cells)
		}
		if ncol > 16 || len(rows) > 64 {
			return
		}
		for i := range rows {
			for len(rows[i]) < ncol {
				rows[i] = append(rows[i], "")
			}
		}
		cols := make([]Column[[]string], ncol)
		for i := range cols {
			i := i
			// Headers are our own words, never a control character.
			cols[i] = Column[[]string]{Header: Cell(rows[0][i], 0), Align: Align((int(flags) >> (i % 4)) & 1), Value: func(row []string) string { return row[i] }}
			if flags&0x80 != 0 && i%2 == 0 {
				cols[i].Max = 1 + i
			}
		}
		tab := Table[[]string]{Columns: cols, Style: func([]string) Style { return Failure }}
		o := RenderOptions{Header: flags&0x10 != 0, Color: flags&0x20 != 0}
		var want, got bytes.Buffer
		if err := renderTablewriter(tab, &want, rows[1:], o); err != nil {
			t.Skip()
		}
		if err := tab.Render(&got, rows[1:], o); err != nil {
			t.Fatal(err)
		}
		if want.String() != got.String() {
			t.Fatalf("rows %q, %+v:\ntablewriter %q\nRender      %q", rows, o, want.String(), got.String())
		}
	})
}
