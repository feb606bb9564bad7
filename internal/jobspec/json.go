package jobspec

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A free-form value (attributes.user, extra system keys, shell options,
// constraints) is held as a tree of map[string]any, []any, string, bool,
// nil and json.Number. Parsing puts every json.Number in canonical form
// (see canonicalNumber), so writing the tree back is canonical too.

// jsonParser is a strict RFC 8259 parser. It exists, rather than
// encoding/json, for speed (parse+validate of a typical jobspec is a hot
// path), for nesting and size limits, for rejecting duplicate keys, and so
// integers keep their exact value (reals go through float64, as in Python).
type jsonParser struct {
	data []byte
	// src is data as one string: unescaped strings are substrings of it,
	// which saves an allocation per string (most of a jobspec's).
	src   string
	pos   int
	depth int
	nodes int
	// keys[d] is the key whose value the object at depth d is parsing
	// ("" for an array), enough to recognise attributes.system.environment.
	keys [4]string
}

// parseJSONValue parses data as exactly one JSON value.
func parseJSONValue(data []byte) (any, error) {
	p := jsonParser{data: data, src: string(data)}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected %s after the top-level value", p.describe())
	}
	return v, nil
}

func (p *jsonParser) errorf(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.data[:min(p.pos, len(p.data))] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &Error{Msg: fmt.Sprintf("json: line %d column %d: %s", line, col, fmt.Sprintf(format, args...))}
}

func (p *jsonParser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	c := p.data[p.pos]
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	if p.nodes++; p.nodes > MaxNodes {
		return nil, p.errorf("more than %d values", MaxNodes)
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	default:
		return nil, p.errorf("unexpected %s", p.describe())
	}
}

func (p *jsonParser) literal(word string) bool {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errorf("nesting is deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *jsonParser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	m := make(map[string]any, 4)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return m, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a string key, found %s", p.describe())
		}
		kpos := p.pos
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			p.pos = kpos
			return nil, p.errorf("duplicate key %q", k)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after object key, found %s", p.describe())
		}
		p.pos++
		p.skipSpace()
		if p.depth < len(p.keys) {
			p.keys[p.depth] = k
		}
		var v any
		if p.depth == 3 && k == "environment" && p.keys[1] == "attributes" && p.keys[2] == "system" {
			// The environment is most of a jobspec's strings; a typed
			// map saves boxing each value in an interface.
			if env, ok, err := p.stringObject(); err != nil {
				return nil, err
			} else if ok {
				v = env
			}
		}
		if v == nil {
			if v, err = p.value(); err != nil {
				return nil, err
			}
		}
		m[k] = v
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return m, nil
		default:
			return nil, p.errorf("expected ',' or '}' in object, found %s", p.describe())
		}
	}
}

func (p *jsonParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	if p.depth < len(p.keys) {
		p.keys[p.depth] = ""
	}
	p.pos++ // '['
	a := make([]any, 0, 2)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return a, nil
	}
	for {
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return a, nil
		default:
			return nil, p.errorf("expected ',' or ']' in array, found %s", p.describe())
		}
	}
}

// stringObject parses an object whose values are all strings into a
// map[string]string. If a value is not a string it returns ok false with
// the position unchanged, for the caller to parse the object generically.
func (p *jsonParser) stringObject() (map[string]string, bool, error) {
	start := p.pos
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return nil, false, nil
	}
	p.pos++
	// An empty object (a jobspec built without an environment, as every
	// replayed job is) gets an empty map, not room for 32: that was a
	// tenth of a replay's allocation.
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return map[string]string{}, true, nil
	}
	m := make(map[string]string, 32)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			break
		}
		kpos := p.pos
		k, err := p.str()
		if err != nil {
			return nil, false, err
		}
		if _, dup := m[k]; dup {
			p.pos = kpos
			return nil, false, p.errorf("duplicate key %q", k)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			break
		}
		p.pos++
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			break
		}
		v, err := p.str()
		if err != nil {
			return nil, false, err
		}
		if p.nodes++; p.nodes > MaxNodes {
			return nil, false, p.errorf("more than %d values", MaxNodes)
		}
		m[k] = v
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return m, true, nil
		}
		break
	}
	p.pos = start
	return nil, false, nil
}

// str parses a string starting at the opening quote. Invalid UTF-8 and
// lone surrogate escapes are rejected, as jansson rejects them, so every
// string held is valid UTF-8 and writes back unchanged.
func (p *jsonParser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	ascii := true
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			s := p.src[start:p.pos]
			if !ascii && !utf8.ValidString(s) {
				return "", p.errorf("invalid UTF-8 in string")
			}
			p.pos++
			return s, nil
		case c == '\\':
			return p.strSlow(start)
		case c < 0x20:
			return "", p.errorf("control character 0x%02x in string", c)
		case c >= 0x80:
			ascii = false
		}
		p.pos++
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) strSlow(start int) (string, error) {
	buf := make([]byte, 0, p.pos-start+16)
	buf = append(buf, p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return "", p.errorf("invalid UTF-8 in string")
			}
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("control character 0x%02x in string", c)
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.data) {
			break
		}
		e := p.data[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("invalid \\u escape in string")
			}
			if utf16.IsSurrogate(r) {
				lo, ok := rune(0), false
				if r < 0xdc00 && p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					p.pos += 2
					lo, ok = p.hex4()
				}
				r = utf16.DecodeRune(r, lo)
				if !ok || r == utf8.RuneError {
					return "", p.errorf("invalid surrogate pair in string")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.pos--
			return "", p.errorf("invalid escape %s in string", p.describe())
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

func (p *jsonParser) number() (any, error) {
	start := p.pos
	d := p.data
	isInt := true
	if d[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(d) && d[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		isInt = false
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		isInt = false
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	n, err := canonicalNumber(p.src[start:p.pos], isInt)
	if err != nil {
		p.pos = start
		return nil, p.errorf("%v", err)
	}
	return n, nil
}
