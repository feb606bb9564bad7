// Package output is the one place where fluxq, fluxsched and fluxres print
// formatted data (docs/cli.md, "Common to every binary"): tables styled like
// `flux jobs` (plain aligned columns, no borders, numbers to the right),
// colour that honours --color and NO_COLOR, --json (one document on stdout
// and nothing else), -o/--format (a Go template over the --json fields, or
// a named preset) and -n/--no-header. Every function writes to the
// io.Writer it is given, never to os.Stdout itself, so tests can read it.
package output

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"

	gojson "github.com/goccy/go-json"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// Names of the output flags, shared by every listing command.
const (
	FlagJSON     = "json"
	FlagFormat   = "format"
	FlagNoHeader = "no-header"
	// FlagColor is the global --color flag (internal/cli/instance defines it).
	FlagColor = "color"
)

// The --color modes.
const (
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// JSONFlag is --json.
func JSONFlag() cli.Flag {
	return &cli.BoolFlag{Name: FlagJSON, Usage: "print one JSON document on stdout", DisableDefaultText: true}
}

// FormatFlag is -o/--format; presets names the named formats it accepts.
func FormatFlag(presets ...string) cli.Flag {
	usage := "`FMT`: a Flux format ('{name:<10} {state}') or a Go template ('{{.name}}') over the fields -o help lists (see 'help formats')"
	if len(presets) > 0 {
		usage += ", or a named format:"
		for _, p := range presets {
			usage += " " + p
		}
	}
	// The default is the human table, whose preset is named "default"
	// where a command has presets.
	def := "the table"
	if slices.Contains(presets, Default) {
		def = Default
	}
	return &cli.StringFlag{Name: FlagFormat, Aliases: []string{"o"}, Usage: usage, DefaultText: def}
}

// NoHeaderFlag is -n/--no-header.
func NoHeaderFlag() cli.Flag {
	return &cli.BoolFlag{Name: FlagNoHeader, Aliases: []string{"n"}, Usage: "print tables without the header line", DisableDefaultText: true}
}

// ListFlags are the output flags of a listing command: --json, -o and -n.
func ListFlags(presets ...string) []cli.Flag {
	return []cli.Flag{JSONFlag(), FormatFlag(presets...), NoHeaderFlag()}
}

// Printer prints one command's data in the form its flags ask for.
type Printer struct {
	Out      io.Writer
	JSON     bool   // --json
	Format   string // -o: a preset name or a template; "" is the default preset
	NoHeader bool   // -n
	Color    bool   // colour is on (see ColorEnabled)
}

// FromContext builds the Printer of a command from its flags (those it does
// not define read as unset) and the global --color, writing to the app's
// Writer. NO_COLOR is read from the environment.
func FromContext(c *cli.Context) (*Printer, error) {
	w := c.App.Writer
	if w == nil {
		w = os.Stdout
	}
	on, err := ColorEnabled(c.String(FlagColor), w, os.Getenv("NO_COLOR"))
	if err != nil {
		return nil, err
	}
	p := &Printer{Out: w, JSON: c.Bool(FlagJSON), Format: c.String(FlagFormat), NoHeader: c.Bool(FlagNoHeader), Color: on}
	if p.JSON && p.Format != "" {
		return nil, exitcode.UsageErrorf("--json and --format are mutually exclusive")
	}
	return p, nil
}

// ColorEnabled decides whether to colour output to w: "always" and "never"
// say so; "auto" (or "") colours only a terminal, and only when NO_COLOR is
// unset or empty (no-color.org: an explicit flag wins over the variable).
func ColorEnabled(mode string, w io.Writer, noColor string) (bool, error) {
	switch mode {
	case ColorAlways:
		return true, nil
	case ColorNever:
		return false, nil
	case ColorAuto, "":
		if noColor != "" {
			return false, nil
		}
		return IsTerminal(w), nil
	}
	return false, exitcode.UsageErrorf("--color: %q is not auto, always or never", mode)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// WriteJSON writes v as one JSON document and a newline: docs/cli.md's --json.
// HTML characters are not escaped, since the reader is a program or a
// terminal, not a browser. The encoder is goccy/go-json's, whose bytes
// are encoding/json's (TestWriteJSONAsEncodingJSON) in a third of the
// time: `fluxq jobs -a --json` of 100,000 jobs spent 0.3 s encoding.
func WriteJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := gojson.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	return bw.Flush()
}

// List says how a listing prints: its table presets, its --json document
// and the fields of one item, which templates see.
type List[T any] struct {
	// Tables are the named presets; "default" is used when -o is not given.
	Tables map[string]Table[T]
	// Order lists the preset names for -o help (else they are sorted).
	Order []string
	// Doc builds the --json document from the items.
	Doc func(items []T) any
	// DocKey and DocList, when set, write the --json document instead of
	// Doc, for a document that is one list of the items under one key
	// ({"DocKey":[...]}): DocList gives the list of a run of the items,
	// and the runs are encoded on every core (WriteJSONList). The bytes
	// are Doc's document's.
	DocKey  string
	DocList func(items []T) any
	// Item is one item as --json shows it; a template runs over its fields.
	Item func(item T) any
	// Fields are the fields a Flux format may name besides Item's (and
	// the headings and help of Item's), for -o '{id.f58}' and -o help.
	Fields []Field[T]
	// Shape is a zero value of what Item returns: -o help lists its
	// fields and a format's names are checked against it, items or none.
	Shape any
	// Prefixes are aliases of Flux formats' names: a name starting with
	// a key reads from its value instead ("sched." for "annotations.sched.").
	Prefixes map[string]string
}

// sample is a value of Item's type: Shape, or the first item's.
func (l List[T]) sample(items []T) any {
	if l.Shape != nil {
		return l.Shape
	}
	if len(items) > 0 && l.Item != nil {
		return l.Item(items[0])
	}
	return nil
}

// Default is the name of the preset used when -o is not given.
const Default = "default"

// PrintList prints items as p's flags ask: the --json document, a preset
// table, or a template executed once per item (a newline is added after
// each item unless the template ends with one). `-o help` lists the
// presets.
func PrintList[T any](p *Printer, l List[T], items []T) error {
	if p.JSON && l.DocList != nil {
		return WriteJSONList(p.Out, l.DocKey, items, l.DocList)
	}
	if p.JSON {
		return WriteJSON(p.Out, l.Doc(items))
	}
	name := p.Format
	if name == "" {
		name = Default
	}
	if t, ok := l.Tables[name]; ok {
		return t.Render(p.Out, items, RenderOptions{Header: !p.NoHeader, Color: p.Color})
	}
	if name == "help" {
		return writeHelp(p.Out, l.Order, l.Tables, l.sample(items), l.Fields)
	}
	if isFluxFormat(name) {
		return printFlux(p, l, name, items)
	}
	if !isTemplate(name) {
		return exitcode.UsageErrorf("--format: no such format %q (try -o help)", name)
	}
	tmpl, err := parseTemplate(name)
	if err != nil {
		return err
	}
	var deep map[string]bool
	if len(items) > 0 {
		if deep, err = schemaOf(reflect.TypeOf(l.Item(items[0]))).check(tmpl); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(p.Out, 64<<10)
	for _, it := range items {
		if err := execTemplate(bw, tmpl, deep, l.Item(it)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// PrintObject prints one object (a job's info, counts): v as the --json
// document, a template executed once over v's fields, a Flux format (one
// line; fields names those it may name besides v's), or human when
// neither flag is given. -o help lists the fields.
func PrintObject(p *Printer, v any, human func(w io.Writer) error, fields ...Field[any]) error {
	if p.JSON {
		return WriteJSON(p.Out, v)
	}
	if p.Format == "" || p.Format == Default {
		return human(p.Out)
	}
	if p.Format == "help" {
		return writeHelp[struct{}](p.Out, nil, nil, v, fields)
	}
	if isFluxFormat(p.Format) {
		return printFluxObject(p.Out, p.Format, v, fields)
	}
	if !isTemplate(p.Format) {
		return exitcode.UsageErrorf("--format: no such format %q (try -o help)", p.Format)
	}
	tmpl, err := parseTemplate(p.Format)
	if err != nil {
		return err
	}
	deep, err := schemaOf(reflect.TypeOf(v)).check(tmpl)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(p.Out)
	if err := execTemplate(bw, tmpl, deep, v); err != nil {
		return err
	}
	return bw.Flush()
}

// writeHelp is -o help: the named formats, then every field.
func writeHelp[T, F any](w io.Writer, order []string, tables map[string]Table[T], sample any, fields []Field[F]) error {
	names := order
	if len(names) == 0 {
		names = sortedKeys(tables)
	}
	bw := bufio.NewWriter(w)
	if len(names) > 0 {
		fmt.Fprintln(bw, "Named formats (-o NAME):")
		for _, n := range names {
			t := tables[n]
			fmt.Fprintf(bw, "  %-10s %s\n", n, t.Description)
		}
	}
	writeFields(bw, sample, fields)
	return bw.Flush()
}
