package output

import (
	"bufio"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/fluxformat"
	"github.com/fluxq/fluxq/internal/cli/help"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/suggest"
)

// Field is a -o field. With a Value, it is one a Flux format may name
// besides the --json fields, under the name Flux's tools give it (id.f58,
// state_single, contextual_time), computed from the item. Without one, it
// documents a --json field: its heading and what it means.
type Field[T any] struct {
	Name    string
	Heading string // the column's header; "" is the name in capitals
	Help    string // one line for -o help
	Value   func(T) any
}

// isFluxFormat tells Flux's format strings ({id.f58:>12}) from a Go
// template ({{.id_f58}}) and a preset name: a brace and no "{{".
func isFluxFormat(s string) bool {
	return !isTemplate(s) && strings.ContainsAny(s, "{}")
}

// fluxFields resolves the names of a Flux format for items of type T.
type fluxFields[T any] struct {
	item     func(T) any // the --json form, for the fields not computed
	computed map[string]Field[T]
	prefixes map[string]string
	schema   *schema
	// named are the fields documented for an item whose type does not
	// say them (a map): a name must be one of them, or under one.
	named []string
}

func newFluxFields[T any](item func(T) any, sample any, fields []Field[T], prefixes map[string]string) *fluxFields[T] {
	ff := &fluxFields[T]{item: item, computed: map[string]Field[T]{}, prefixes: prefixes}
	if sample != nil {
		ff.schema = schemaOf(reflect.TypeOf(sample))
	}
	for _, f := range fields {
		if f.Value != nil {
			ff.computed[f.Name] = f
		}
	}
	if ff.schema != nil && ff.schema.open {
		for _, f := range fields {
			ff.named = append(ff.named, f.Name)
		}
	}
	return ff
}

// resolve rewrites an alias prefix (Flux's sched. for annotations.sched.).
func (ff *fluxFields[T]) resolve(name string) string {
	for from, to := range ff.prefixes {
		if name == strings.TrimSuffix(from, ".") {
			return strings.TrimSuffix(to, ".")
		}
		if strings.HasPrefix(name, from) {
			return to + name[len(from):]
		}
	}
	return name
}

// check returns a usage error for a name no item can have.
func (ff *fluxFields[T]) check(name string, all []string) error {
	if _, ok := ff.computed[name]; ok {
		return nil
	}
	if ff.schema == nil {
		return nil // no items: nothing to say about their fields
	}
	unknown := func() error {
		msg := fmt.Sprintf("--format: no field %q", name)
		if dym := help.DidYouMean(suggest.Names(name, all), func(s string) string { return "'" + s + "'" }); dym != "" {
			msg += ". " + dym
		}
		return exitcode.UsageErrorf("%s (-o help lists the fields)", msg)
	}
	if len(ff.named) > 0 {
		for _, n := range ff.named {
			if name == n || strings.HasPrefix(name, n+".") {
				return nil
			}
		}
		return unknown()
	}
	s := ff.schema
	for _, part := range strings.Split(ff.resolve(name), ".") {
		if s == nil || s.open {
			return nil
		}
		sub, ok := s.fields[part]
		if !ok {
			return unknown()
		}
		s = sub
	}
	return nil
}

// value is the named field of an item whose --json form decoded to doc.
func (ff *fluxFields[T]) value(name string, it T, doc func() any) any {
	if f, ok := ff.computed[name]; ok {
		return clean(f.Value(it))
	}
	v := doc()
	for _, part := range strings.Split(ff.resolve(name), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	if _, none := v.(*noValue); none {
		return nil
	}
	return v
}

// jsonFields is v's --json form as a Flux format reads it: decoded, the
// fields it omits there as no value, its texts made printable.
func jsonFields(v any) any {
	d, err := Fields(v)
	if err != nil {
		return map[string]any{}
	}
	return printable.Tree(schemaOf(reflect.TypeOf(v)).fill(d, nil, ""))
}

// clean makes a computed text printable, as Fields' are.
func clean(v any) any {
	if s, ok := v.(string); ok {
		return printable.String(s)
	}
	return v
}

// fieldNames lists every field of a listing: the --json ones (objects'
// parts dotted) and the computed ones, sorted.
func fieldNames[T any](sample any, fields []Field[T]) []string {
	seen := map[string]bool{}
	if sample != nil {
		var walk func(s *schema, prefix string)
		walk = func(s *schema, prefix string) {
			for _, n := range s.names() {
				sub := s.fields[n]
				if sub != nil && sub.fields != nil && len(sub.fields) > 0 {
					walk(sub, prefix+n+".")
					continue
				}
				seen[prefix+n] = true
			}
		}
		if s := schemaOf(reflect.TypeOf(sample)); s.fields != nil {
			walk(s, "")
		}
	}
	for _, f := range fields {
		seen[f.Name] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// parseFlux parses a Flux format and checks its names.
func parseFlux[T any](format string, ff *fluxFields[T], all []string) (*fluxformat.Format, error) {
	f, err := fluxformat.Parse(format)
	if err != nil {
		return nil, exitcode.UsageErrorf("--format: %v", err)
	}
	for _, n := range f.Names {
		if err := ff.check(n, all); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// printFlux prints items by a Flux format as flux jobs does: a header line
// of the fields' headings (unless -n), then one line per item (a line
// that comes out blank is left out), after dropping the ?: columns empty
// in every line, widening the +: ones, and sorting by a sort: prefix.
func printFlux[T any](p *Printer, l List[T], format string, items []T) error {
	sample := l.sample(items)
	ff := newFluxFields(l.Item, sample, l.Fields, l.Prefixes)
	f, err := parseFlux(format, ff, fieldNames(sample, l.Fields))
	if err != nil {
		return err
	}
	rows := make([][]any, len(items))
	for i, it := range items {
		var doc any
		get := func() any {
			if doc == nil {
				doc = jsonFields(l.Item(it))
			}
			return doc
		}
		row := make([]any, len(f.Names)+1)
		for j, n := range f.Names {
			row[j] = ff.value(n, it, get)
		}
		row[len(f.Names)] = i // the item, to colour its line
		rows[i] = row
	}
	f.SortRows(rows)
	headings := make([]string, len(f.Names))
	for j, n := range f.Names {
		headings[j] = heading(n, l.Fields)
	}
	fit, err := f.Fit(rows, headings, !p.NoHeader, time.Local)
	if err != nil {
		return exitcode.UsageErrorf("--format: %v", err)
	}
	var style func(T) Style
	if t, ok := l.Tables[Default]; ok && p.Color {
		style = t.Style
	}
	bw := bufio.NewWriterSize(p.Out, 64<<10)
	if !p.NoHeader {
		bw.WriteString(fit.Header(headings))
		bw.WriteByte('\n')
	}
	for _, row := range rows {
		line, err := fit.Row(row, time.Local)
		if err != nil {
			return exitcode.UsageErrorf("--format: %v", err)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if style != nil {
			line = Paint(style(items[row[len(f.Names)].(int)]), line)
		}
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// printFluxObject prints one object by a Flux format: one line, no header
// (a single object's command has no -n to turn one off).
func printFluxObject(w io.Writer, format string, v any, fields []Field[any]) error {
	ff := newFluxFields(func(x any) any { return x }, v, fields, nil)
	f, err := parseFlux(format, ff, fieldNames(v, fields))
	if err != nil {
		return err
	}
	var doc any
	get := func() any {
		if doc == nil {
			doc = jsonFields(v)
		}
		return doc
	}
	row := make([]any, len(f.Names))
	for j, n := range f.Names {
		row[j] = ff.value(n, v, get)
	}
	fit, err := f.Fit([][]any{row}, nil, false, time.Local)
	if err != nil {
		return exitcode.UsageErrorf("--format: %v", err)
	}
	line, err := fit.Row(row, time.Local)
	if err != nil {
		return exitcode.UsageErrorf("--format: %v", err)
	}
	_, err = io.WriteString(w, line+"\n")
	return err
}

// heading is a field's column header: its Field's, else the name in
// capitals, without "annotations." (annotations.user.x: USER.X), as Flux
// heads the fields it does not know.
func heading[T any](name string, fields []Field[T]) string {
	for _, f := range fields {
		if f.Name == name && f.Heading != "" {
			return f.Heading
		}
	}
	return strings.ToUpper(strings.TrimPrefix(name, "annotations."))
}

// Bind makes fields of an item into fields of one object, for PrintObject.
func Bind[T any](fields []Field[T], item T) []Field[any] {
	out := make([]Field[any], len(fields))
	for i, f := range fields {
		out[i] = Field[any]{Name: f.Name, Heading: f.Heading, Help: f.Help}
		if f.Value != nil {
			v := f.Value
			out[i].Value = func(any) any { return v(item) }
		}
	}
	return out
}

// writeFields lists the fields -o may name, for -o help.
func writeFields[T any](w *bufio.Writer, sample any, fields []Field[T]) {
	names := fieldNames(sample, fields)
	if len(names) == 0 {
		return
	}
	byName := map[string]Field[T]{}
	for _, f := range fields {
		byName[f.Name] = f
	}
	fmt.Fprintln(w, "Fields (-o '{FIELD}' in Flux's syntax, e.g. '{FIELD:>10}'; -o '{{.FIELD}}' in a template):")
	rows := make([][3]string, 0, len(names))
	computed := false
	for _, n := range names {
		f := byName[n]
		name := n
		if f.Value != nil {
			name += " *"
			computed = true
		}
		rows = append(rows, [3]string{name, heading(n, fields), f.Help})
	}
	t := Table[[3]string]{Columns: []Column[[3]string]{
		{Value: func(r [3]string) string { return "  " + r[0] }},
		{Value: func(r [3]string) string { return r[1] }},
		{Value: func(r [3]string) string { return r[2] }},
	}}
	t.Render(w, rows, RenderOptions{})
	if computed {
		fmt.Fprintln(w, "* only in Flux's syntax, in this form: --json and templates have it in another form, or not at all.")
	}
}
