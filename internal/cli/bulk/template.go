package bulk

import (
	"fmt"
	"strconv"
	"strings"
)

// A Template is one argument or option value with its replacement fields,
// in the syntax of Python's str.format that flux bulksubmit uses:
//
//	{}  {.ATTR}          the next input (numbered from 0 within the string)
//	{N} {N.ATTR}         input N
//	{seq} {seq1}         the job's sequence number from 0, from 1;
//	                     {seq:03} pads it with zeros to 3 digits
//	{cc}                 left for the --cc pass (submit's {cc}); "" without --cc
//	{{ }}                kept as they are: the job shell's mustache tags
//
// ATTR is one of % (no extension), / (base name), // (directory), /%
// (base name without extension), or a NAME of --define. Flux's other
// Python (format specs on inputs, !r, [index]) is refused, naming it.
type Template struct {
	src   string
	parts []part
}

type part struct {
	lit string
	f   *field // nil for a literal
}

type field struct {
	src   string // as written, braces included
	input int    // the input's index, or -1 for a name
	name  string // seq, seq1, cc
	attr  string // "" for the input itself
	width int    // {seq:N}: at least N digits
	zero  bool   // {seq:0N}: padded with zeros, not spaces
}

// Builtin attributes of an input.
const (
	AttrNoExt     = "%"
	AttrBase      = "/"
	AttrDir       = "//"
	AttrBaseNoExt = "/%"
)

// The names a field may take in place of an input.
const (
	nameSeq  = "seq"
	nameSeq1 = "seq1"
	nameCC   = "cc"
	// nameX is the input in a --define template.
	nameX = "x"
)

// Parser parses templates against a set of --define names.
type Parser struct {
	defines map[string]*Template
}

// NewParser makes a parser knowing the --define NAME=TEMPLATE given, in
// order; a define's template may use {x} (the input), its builtin
// attributes ({x.%}...), {seq} and {seq1}, never another define.
func NewParser(defines []string) (*Parser, error) {
	p := &Parser{defines: map[string]*Template{}}
	for _, d := range defines {
		name, code, ok := strings.Cut(d, "=")
		if !ok {
			return nil, fmt.Errorf("--define %q: want NAME=TEMPLATE, e.g. stem='{x./%%}'", d)
		}
		if !isIdent(name) {
			return nil, fmt.Errorf("--define %q: NAME must be letters, digits and _, not starting with a digit", d)
		}
		if _, dup := p.defines[name]; dup {
			return nil, fmt.Errorf("--define %s is given twice", name)
		}
		t, err := parse(code, nil, true)
		if err != nil {
			return nil, fmt.Errorf("--define %s: %w", name, err)
		}
		if !t.usesX() {
			// Flux evaluates CODE as Python; fluxq runs no code, and a
			// template that never names the input is Python written for
			// Flux more often than it is a constant.
			return nil, fmt.Errorf("--define %s=%s: TEMPLATE never uses the input {x} (fluxq evaluates no Python: a define is a template such as '{x./%%}.out')", name, code)
		}
		p.defines[name] = t
	}
	return p, nil
}

// Parse reads one template.
func (p *Parser) Parse(s string) (*Template, error) { return parse(s, p.defines, false) }

func parse(s string, defines map[string]*Template, inDefine bool) (*Template, error) {
	t := &Template{src: s}
	var lit strings.Builder
	auto, manual := 0, false
	usedAuto := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{' && strings.HasPrefix(s[i:], "{{"):
			lit.WriteString("{{")
			i += 2
			continue
		case c == '}' && strings.HasPrefix(s[i:], "}}"):
			lit.WriteString("}}")
			i += 2
			continue
		case c == '}':
			return nil, fmt.Errorf("single '}' in %q (a literal brace is not possible; {{ and }} are kept for output templates)", s)
		case c != '{':
			lit.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexAny(s[i+1:], "{}")
		if end < 0 {
			return nil, fmt.Errorf("'{' not closed in %q", s)
		}
		if s[i+1+end] == '{' {
			return nil, fmt.Errorf("a '{' inside a field in %q (fields do not nest)", s)
		}
		body := s[i+1 : i+1+end]
		f, err := parseField(body, defines, inDefine)
		if err != nil {
			return nil, fmt.Errorf("{%s} in %q: %w", body, s, err)
		}
		if f.input == -2 {
			// {} or {.ATTR}: the next input.
			f.input = auto
			auto++
			usedAuto = true
		} else if f.input >= 0 && !inDefine {
			manual = true
		}
		if usedAuto && manual {
			return nil, fmt.Errorf("%q mixes {} and numbered fields such as {0}: number them all", s)
		}
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{lit: lit.String()})
			lit.Reset()
		}
		t.parts = append(t.parts, part{f: f})
		i += end + 2
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, part{lit: lit.String()})
	}
	return t, nil
}

// parseField reads what is between the braces: NAME[.ATTR][:SPEC]. An
// input without a number is marked -2 for the caller to number.
func parseField(body string, defines map[string]*Template, inDefine bool) (*field, error) {
	f := &field{src: "{" + body + "}", input: -1}
	if strings.Contains(body, "!") {
		return nil, fmt.Errorf("conversions such as !r are not supported")
	}
	if strings.Contains(body, "[") {
		return nil, fmt.Errorf("indexing an input with [...] is not supported")
	}
	body, spec, hasSpec := strings.Cut(body, ":")
	name, attr, hasAttr := strings.Cut(body, ".")
	if hasAttr {
		if strings.Contains(attr, ".") && !isBuiltin(attr) {
			return nil, fmt.Errorf("one attribute per field")
		}
		if attr == "" {
			return nil, fmt.Errorf("the attribute after '.' is missing")
		}
		f.attr = attr
	}
	switch {
	case inDefine && name == nameX:
		f.input = 0
	case inDefine && (name == "" || isDigits(name)):
		return nil, fmt.Errorf("in --define the input is {x}")
	case name == "":
		f.input = -2
	case isDigits(name):
		n, err := strconv.Atoi(name)
		if err != nil || n > MaxInputs {
			return nil, fmt.Errorf("input %s: there are at most %d input lists", name, MaxInputs)
		}
		f.input = n
	case name == nameSeq || name == nameSeq1 || name == nameCC:
		f.name = name
		if hasAttr {
			return nil, fmt.Errorf("{%s} takes no attribute", name)
		}
	default:
		names := "{seq}, {seq1}, {cc}"
		if inDefine {
			names = "{x}, " + names
		}
		return nil, fmt.Errorf("unknown name %q (an input is {}, {0}, {1}...; names: %s)", name, names)
	}
	if f.input != -1 && hasAttr && !isBuiltin(attr) {
		if inDefine {
			return nil, fmt.Errorf("unknown attribute .%s (in --define: %%, /, //, /%%)", attr)
		}
		if _, ok := defines[attr]; !ok {
			return nil, fmt.Errorf("unknown attribute .%s (%%, /, //, /%%, or a --define NAME)", attr)
		}
	}
	if hasSpec {
		if f.name != nameSeq && f.name != nameSeq1 {
			return nil, fmt.Errorf("a format spec (:%s) applies only to {seq} and {seq1}", spec)
		}
		w, zero, err := parseWidth(spec)
		if err != nil {
			return nil, err
		}
		f.width, f.zero = w, zero
	}
	return f, nil
}

// MaxInputs bounds an input's number in a field: far more lists than any
// command line holds, small enough that no index overflows.
const MaxInputs = 1 << 16

// maxWidth bounds {seq:N}: a width is for file names, not for padding a
// command line to gigabytes.
const maxWidth = 64

// parseWidth reads {seq}'s spec: [0]WIDTH[d], as Python formats an int.
func parseWidth(spec string) (int, bool, error) {
	s := strings.TrimSuffix(spec, "d")
	zero := strings.HasPrefix(s, "0") && len(s) > 1
	if zero {
		s = s[1:]
	}
	if !isDigits(s) {
		return 0, false, fmt.Errorf("format spec %q: want a width, e.g. {seq:03} (at most %d)", spec, maxWidth)
	}
	w, err := strconv.Atoi(s)
	if err != nil || w > maxWidth {
		return 0, false, fmt.Errorf("format spec %q: a width is at most %d", spec, maxWidth)
	}
	return w, zero, nil
}

func isBuiltin(a string) bool {
	return a == AttrNoExt || a == AttrBase || a == AttrDir || a == AttrBaseNoExt
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isIdent(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (t *Template) usesX() bool {
	for _, p := range t.parts {
		if p.f != nil && p.f.input == 0 {
			return true
		}
	}
	return false
}

// String is the template as written.
func (t *Template) String() string { return t.src }

// HasFields reports whether anything in t is replaced.
func (t *Template) HasFields() bool {
	for _, p := range t.parts {
		if p.f != nil {
			return true
		}
	}
	return false
}

// MaxIndex is the highest input t names, or -1.
func (t *Template) MaxIndex() int {
	m := -1
	for _, p := range t.parts {
		if p.f != nil && p.f.input > m {
			m = p.f.input
		}
	}
	return m
}

// Env is what one job's fields are replaced with.
type Env struct {
	Inputs []string // the job's inputs, one per list
	Seq    int      // its sequence number, from 0
	// NoCC says no --cc or --bcc is given: {cc} is then "", as Flux
	// replaces it.
	NoCC bool
}

// Expand replaces t's fields for one job. {cc} is left as it is written,
// for the --cc pass after this one (or is "" with env.NoCC).
func (p *Parser) Expand(t *Template, env Env) (string, error) {
	var b strings.Builder
	for _, pt := range t.parts {
		if pt.f == nil {
			b.WriteString(pt.lit)
			continue
		}
		s, err := p.value(pt.f, env)
		if err != nil {
			return "", fmt.Errorf("%s in %q: %w", pt.f.src, t.src, err)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func (p *Parser) value(f *field, env Env) (string, error) {
	switch f.name {
	case nameCC:
		if env.NoCC {
			return "", nil
		}
		return "{cc}", nil
	case nameSeq, nameSeq1:
		n := env.Seq
		if f.name == nameSeq1 {
			n++
		}
		s := strconv.Itoa(n)
		if pad := f.width - len(s); pad > 0 {
			fill := " "
			if f.zero {
				fill = "0"
			}
			s = strings.Repeat(fill, pad) + s
		}
		return s, nil
	}
	if f.input >= len(env.Inputs) {
		return "", fmt.Errorf("there %s only %d input list%s ({0}%s)", isAre(len(env.Inputs)), len(env.Inputs), plural(len(env.Inputs)), upTo(len(env.Inputs)))
	}
	x := env.Inputs[f.input]
	switch f.attr {
	case "":
		return x, nil
	case AttrNoExt:
		return splitExt(x), nil
	case AttrBase:
		return baseName(x), nil
	case AttrDir:
		return dirName(x), nil
	case AttrBaseNoExt:
		return baseName(splitExt(x)), nil
	}
	d := p.defines[f.attr]
	if d == nil {
		return "", fmt.Errorf("unknown attribute .%s", f.attr)
	}
	return p.Expand(d, Env{Inputs: []string{x}, Seq: env.Seq, NoCC: env.NoCC})
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func upTo(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" to {%d}", n-1)
}

// splitExt is s without its extension, as Python's os.path.splitext: the
// last dot of the base name, unless the base name's dots all lead it
// (".bashrc" has none).
func splitExt(s string) string {
	base := strings.LastIndexByte(s, '/') + 1
	dot := strings.LastIndexByte(s, '.')
	if dot <= base {
		return s
	}
	for i := base; i < dot; i++ {
		if s[i] != '.' {
			return s[:dot]
		}
	}
	return s
}

// baseName is what follows the last slash, as Python's os.path.basename
// ("a/b/" has "", not Go's "b").
func baseName(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }

// dirName is what precedes the last slash, its trailing slashes removed
// unless it is all slashes, as Python's os.path.dirname.
func dirName(s string) string {
	head := s[:strings.LastIndexByte(s, '/')+1]
	if strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head
}
