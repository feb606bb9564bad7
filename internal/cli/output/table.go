package output

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/fluxq/fluxq/internal/cli/printable"
)

// Align is a column's alignment.
type Align int

// Alignments: text to the left, numbers to the right, as flux jobs does.
const (
	Left Align = iota
	Right
)

// Column is one column of a table.
type Column[T any] struct {
	Header string
	Align  Align
	// Max is the widest a value may print (0: no limit); a longer one is
	// cut and ends in "+", as flux jobs' "{name:<10.10+}" does.
	Max int
	// Value is the cell text of a row.
	Value func(T) string
}

// Table is a table preset: its columns and how a row is coloured.
type Table[T any] struct {
	Description string // for -o help
	Columns     []Column[T]
	// Style picks a row's colour; nil colours nothing.
	Style func(T) Style
}

// RenderOptions say how to render a table.
type RenderOptions struct {
	Header bool // print the header line
	Color  bool // apply the rows' styles
}

// Style is a row's colour.
type Style int

// The styles flux jobs uses: completed green, failed and timeout red,
// canceled grey.
const (
	Plain   Style = iota
	Success       // bold green
	Failure       // bold red
	Muted         // grey
	Notice        // bold blue
)

var styleAttrs = map[Style][]color.Attribute{
	Success: {color.Bold, color.FgGreen},
	Failure: {color.Bold, color.FgRed},
	Muted:   {color.FgWhite},
	Notice:  {color.Bold, color.FgBlue},
}

// Paint returns s in style st (s itself for Plain). It ignores fatih/color's
// global switches: the caller decided with ColorEnabled.
func Paint(st Style, s string) string {
	attrs, ok := styleAttrs[st]
	if !ok || s == "" {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor()
	return c.Sprint(s)
}

// Render writes the table: columns separated by one space, no borders,
// headers as given, no trailing blanks. A table with no rows still prints
// its header, as flux jobs does.
func (t Table[T]) Render(w io.Writer, rows []T, o RenderOptions) error {
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
		// One space between columns: each cell is padded on its right.
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
	return trimLines(w, &buf)
}

// Cell makes s fit one table cell: control characters (which would break
// the line or smuggle terminal escapes) become '?', as in every text
// output (printable.String), and a value longer than max runes (when
// max > 0) is cut to end in "+".
func Cell(s string, max int) string {
	s = printable.String(s)
	if max > 0 && utf8.RuneCountInString(s) > max {
		rs := []rune(s)
		if max == 1 {
			return "+"
		}
		s = string(rs[:max-1]) + "+"
	}
	return s
}

// trimLines copies the rendered table to w without trailing blanks (the
// padding after the last column), which flux jobs does not print either.
func trimLines(w io.Writer, r io.Reader) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	sc := bufio.NewScanner(r)
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

// KeyValues writes rows of a key and a value, the keys aligned in a left
// column: the human form of one object (fluxq info).
func KeyValues(w io.Writer, rows [][2]string) error {
	t := Table[[2]string]{Columns: []Column[[2]string]{
		{Header: "KEY", Value: func(r [2]string) string { return r[0] }},
		{Header: "VALUE", Value: func(r [2]string) string { return r[1] }},
	}}
	return t.Render(w, rows, RenderOptions{})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
