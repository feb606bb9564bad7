// Package fluxformat reads and applies the -o format strings of Flux's
// listing tools (flux-jobs(1), "OUTPUT FORMAT"): Python's str.format syntax,
// {field!conv:spec}, with Flux's additions. A Flux user's format works
// unchanged, with Flux's field names: the caller names the fields and
// supplies their values; this package knows nothing of jobs.
//
// What is read:
//   - text, where "{{" and "}}" are a literal brace;
//   - {name}, {name!c}, {name:spec}, {name!c:spec}: name is a field, dotted
//     for a part of one (exception.type, annotations.sched.reason_pending);
//   - the conversions !d (a time, the spec is a strftime layout, then "::"
//     and a spec for the result), !D (ISO 8601 time), !F (Flux standard
//     duration), !H (hours:minutes:seconds), !P (percent) and !s;
//   - Python's format spec [[fill]align][sign][#][0][width][,|_][.precision][type]
//     with Flux's suffixes h (an empty or zero value prints "-") and + (a
//     value cut by the precision ends in "+");
//   - before a field, ?: (drop the column when it is empty in every row),
//     +: (widen it to its widest value) or ?+: (both);
//   - a leading sort:KEY[,-KEY...] and one space: rows sorted on those
//     fields, - for descending.
package fluxformat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format is a parsed format string.
type Format struct {
	Sort  []SortKey
	Parts []Part
	// Names are the fields the format names, sort keys first, each once;
	// a row's values are given in this order.
	Names []string
}

// SortKey is one key of a sort: prefix.
type SortKey struct {
	Field   string
	Arg     int // the field's index in Names
	Reverse bool
}

// Part is a run of text and the field after it (none at the end).
type Part struct {
	Text  string // literal text before the field, escapes resolved
	Field string // "" for trailing text
	Arg   int    // the field's index in Names
	Conv  byte   // 0 or one of d D F H P s
	// TimeLayout is a !d field's strftime layout ("" for %FT%T).
	TimeLayout string
	Spec       Spec
	Drop       bool // ?: drop the column when every row is empty
	Widen      bool // +: widen the column to its widest value
}

// Spec is a parsed Python format spec with Flux's suffixes.
type Spec struct {
	Fill      rune // 0: a space
	Align     byte // 0, '<', '>', '^' or '='
	Sign      byte // 0, '+', '-' or ' '
	Alt       bool // '#'
	Zero      bool // '0' before the width
	Width     int
	Grouping  byte // 0, ',' or '_'
	Precision int  // -1: none
	Type      byte // 0 or one of bcdeEfFgGnosxX%
	Hyphen    bool // Flux's h: an empty value prints "-"
	Mark      bool // Flux's +: a cut value ends in "+"
}

// conversions are the ! conversions Flux's formatter knows, and s.
const conversions = "dDFHPs"

// Parse reads a format string. Errors say what is wrong in the user's words.
func Parse(s string) (*Format, error) {
	f := &Format{}
	rest := s
	if strings.HasPrefix(rest, "sort:") {
		var err error
		if rest, err = f.parseSort(rest); err != nil {
			return nil, err
		}
	}
	var text strings.Builder
	for len(rest) > 0 {
		c := rest[0]
		switch {
		case c == '{' && strings.HasPrefix(rest, "{{"):
			text.WriteByte('{')
			rest = rest[2:]
		case c == '}' && strings.HasPrefix(rest, "}}"):
			text.WriteByte('}')
			rest = rest[2:]
		case c == '}':
			return nil, fmt.Errorf("a single '}' in the text: write '}}' for a brace")
		case c == '{':
			body, after, err := fieldBody(rest)
			if err != nil {
				return nil, err
			}
			p, err := parseField(body)
			if err != nil {
				return nil, err
			}
			p.Text, p.Drop, p.Widen = sentinel(text.String())
			p.Arg = f.arg(p.Field)
			f.Parts = append(f.Parts, p)
			text.Reset()
			rest = after
		default:
			text.WriteByte(c)
			rest = rest[1:]
		}
	}
	if text.Len() > 0 || len(f.Parts) == 0 {
		f.Parts = append(f.Parts, Part{Text: text.String(), Arg: -1})
	}
	return f, nil
}

// parseSort reads the sort: prefix (keys end at a space or a brace, and
// one space after them is part of the prefix, as in Flux).
func (f *Format) parseSort(s string) (string, error) {
	s = s[len("sort:"):]
	end := strings.IndexAny(s, "{ \t\n")
	if end < 0 {
		end = len(s)
	}
	keys := s[:end]
	s = s[end:]
	if strings.HasPrefix(s, " ") {
		s = s[1:]
	}
	for _, k := range strings.Split(keys, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		key := SortKey{Field: k}
		if strings.HasPrefix(k, "-") {
			key = SortKey{Field: k[1:], Reverse: true}
		}
		if err := checkName(key.Field); err != nil {
			return "", fmt.Errorf("sort key %q: %w", k, err)
		}
		key.Arg = f.arg(key.Field)
		f.Sort = append(f.Sort, key)
	}
	if len(f.Sort) == 0 {
		return "", fmt.Errorf("sort: names no field (sort:KEY,-KEY...)")
	}
	return s, nil
}

// sentinel splits the ?:, +: or ?+: that may end the text before a field.
func sentinel(text string) (string, bool, bool) {
	switch {
	case strings.HasSuffix(text, "?+:"):
		return text[:len(text)-3], true, true
	case strings.HasSuffix(text, "?:"):
		return text[:len(text)-2], true, false
	case strings.HasSuffix(text, "+:"):
		return text[:len(text)-2], false, true
	}
	return text, false, false
}

// fieldBody returns what is between s's leading '{' and its matching '}'.
func fieldBody(s string) (body, rest string, err error) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[1:i], s[i+1:], nil
			}
		}
	}
	return "", "", fmt.Errorf("%q has no closing '}'", clip(s))
}

func parseField(body string) (Part, error) {
	field := "{" + body + "}"
	name, tail := body, ""
	if i := strings.IndexAny(body, "!:"); i >= 0 {
		name, tail = body[:i], body[i:]
	}
	if err := checkName(name); err != nil {
		return Part{}, fmt.Errorf("%s: %w", field, err)
	}
	p := Part{Field: name}
	if strings.HasPrefix(tail, "!") {
		if len(tail) < 2 {
			return Part{}, fmt.Errorf("%s: '!' needs a conversion: one of !d !D !F !H !P", field)
		}
		p.Conv = tail[1]
		if !strings.ContainsRune(conversions, rune(p.Conv)) {
			return Part{}, fmt.Errorf("%s: no conversion !%s (there are !d time, !D ISO time, !F duration, !H h:mm:ss, !P percent)", field, firstRune(tail[1:]))
		}
		tail = tail[2:]
		if tail != "" && tail[0] != ':' {
			return Part{}, fmt.Errorf("%s: expected ':' or '}' after !%c", field, p.Conv)
		}
	}
	spec := strings.TrimPrefix(tail, ":")
	if strings.ContainsAny(spec, "{}") {
		return Part{}, fmt.Errorf("%s: a field inside a format spec is not supported", field)
	}
	if p.Conv == 'd' {
		// A time's spec is its strftime layout, then "::" and the spec
		// of the text it makes.
		layout, after, _ := strings.Cut(spec, "::")
		if err := checkLayout(layout); err != nil {
			return Part{}, fmt.Errorf("%s: %w", field, err)
		}
		p.TimeLayout, spec = layout, after
	}
	var err error
	if p.Spec, err = ParseSpec(spec); err != nil {
		return Part{}, fmt.Errorf("%s: %w", field, err)
	}
	return p, nil
}

// checkName refuses a name no field can have: empty, or with the indexing
// and spaces Python's syntax would read differently.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("no field name (write {name}, e.g. {id.f58})")
	case strings.ContainsAny(name, "[]{}!: \t\n\"'"):
		return fmt.Errorf("field name %q: only letters, digits, '_', '-' and '.' are allowed", name)
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, ".."):
		return fmt.Errorf("field name %q: an empty part between dots", name)
	}
	return nil
}

// ParseSpec reads a Python format spec with Flux's h and + suffixes.
func ParseSpec(s string) (Spec, error) {
	sp := Spec{Precision: -1}
	orig := s
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("format spec %q: %s", orig, why)
	}
	// Flux's suffixes come last: h, then +.
	if strings.HasSuffix(s, "+") {
		sp.Mark, s = true, s[:len(s)-1]
	}
	if strings.HasSuffix(s, "h") {
		sp.Hyphen, s = true, s[:len(s)-1]
	}
	// [[fill]align]: a fill is any one character before an align.
	if r, n := utf8.DecodeRuneInString(s); n > 0 && n < len(s) && isAlign(s[n]) {
		sp.Fill, sp.Align, s = r, s[n], s[n+1:]
	} else if s != "" && isAlign(s[0]) {
		sp.Align, s = s[0], s[1:]
	}
	if s != "" && strings.IndexByte("+- ", s[0]) >= 0 {
		sp.Sign, s = s[0], s[1:]
	}
	if s != "" && s[0] == '#' {
		sp.Alt, s = true, s[1:]
	}
	if s != "" && s[0] == '0' {
		sp.Zero, s = true, s[1:]
	}
	w, s := digits(s)
	if w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || n > maxWidth {
			return bad(fmt.Sprintf("width over %d", maxWidth))
		}
		sp.Width = n
	}
	if s != "" && (s[0] == ',' || s[0] == '_') {
		sp.Grouping, s = s[0], s[1:]
	}
	if s != "" && s[0] == '.' {
		var p string
		p, s = digits(s[1:])
		if p == "" {
			return bad("'.' needs a precision")
		}
		n, err := strconv.Atoi(p)
		if err != nil || n > maxWidth {
			return bad(fmt.Sprintf("precision over %d", maxWidth))
		}
		sp.Precision = n
	}
	if s != "" {
		if len(s) > 1 || strings.IndexByte(specTypes, s[0]) < 0 {
			return bad(fmt.Sprintf("unexpected %q (a spec is [[fill]align][sign][#][0][width][,][.precision][type][h][+], e.g. >12 or <10.10+)", s))
		}
		sp.Type = s[0]
	}
	return sp, nil
}

// specTypes are the presentation types of Python's format spec.
const specTypes = "bcdeEfFgGnosxX%"

// maxWidth bounds widths and precisions, so a typo cannot ask for gigabytes.
const maxWidth = 1000

func isAlign(c byte) bool { return c == '<' || c == '>' || c == '^' || c == '=' }

func digits(s string) (string, string) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

func firstRune(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return string(r)
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > 30 {
		return string([]rune(s)[:29]) + "…"
	}
	return s
}

// arg is the index of a field in Names, added when new.
func (f *Format) arg(name string) int {
	for i, n := range f.Names {
		if n == name {
			return i
		}
	}
	f.Names = append(f.Names, name)
	return len(f.Names) - 1
}

// String writes the format back in the syntax Parse reads: Parse of it
// gives f again.
func (f *Format) String() string {
	var b strings.Builder
	if len(f.Sort) > 0 {
		b.WriteString("sort:")
		for i, k := range f.Sort {
			if i > 0 {
				b.WriteByte(',')
			}
			if k.Reverse {
				b.WriteByte('-')
			}
			b.WriteString(k.Field)
		}
		b.WriteByte(' ')
	}
	for _, p := range f.Parts {
		b.WriteString(strings.NewReplacer("{", "{{", "}", "}}").Replace(p.Text))
		if p.Field == "" {
			continue
		}
		switch {
		case p.Drop && p.Widen:
			b.WriteString("?+:")
		case p.Drop:
			b.WriteString("?:")
		case p.Widen:
			b.WriteString("+:")
		}
		b.WriteString("{" + p.Field)
		if p.Conv != 0 {
			b.WriteString("!" + string(p.Conv))
		}
		spec := p.Spec.String()
		switch {
		case p.Conv == 'd' && spec != "":
			b.WriteString(":" + p.TimeLayout + "::" + spec)
		case p.Conv == 'd' && p.TimeLayout != "":
			b.WriteString(":" + p.TimeLayout)
		case spec != "":
			b.WriteString(":" + spec)
		}
		b.WriteByte('}')
	}
	return b.String()
}

// String writes the spec back as ParseSpec reads it.
func (sp Spec) String() string {
	var b strings.Builder
	if sp.Align != 0 {
		if sp.Fill != 0 {
			b.WriteRune(sp.Fill)
		}
		b.WriteByte(sp.Align)
	}
	if sp.Sign != 0 {
		b.WriteByte(sp.Sign)
	}
	if sp.Alt {
		b.WriteByte('#')
	}
	if sp.Zero {
		b.WriteByte('0')
	}
	if sp.Width > 0 {
		b.WriteString(strconv.Itoa(sp.Width))
	}
	if sp.Grouping != 0 {
		b.WriteByte(sp.Grouping)
	}
	if sp.Precision >= 0 {
		b.WriteString("." + strconv.Itoa(sp.Precision))
	}
	if sp.Type != 0 {
		b.WriteByte(sp.Type)
	}
	if sp.Hyphen {
		b.WriteByte('h')
	}
	if sp.Mark {
		b.WriteByte('+')
	}
	return b.String()
}
