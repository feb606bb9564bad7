package jobspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The canonical form: how free-form values and numbers are written so
// that writing, parsing and writing again gives the same bytes.

// canonicalNumber rewrites a JSON number literal the way flux-core's
// Python tools write it: integers in decimal, reals as Python's repr.
// Integers beyond int64 are refused, as jansson refuses them.
func canonicalNumber(lit string, isInt bool) (json.Number, error) {
	if isInt {
		i, err := strconv.ParseInt(lit, 10, 64)
		if err != nil {
			return "", fmt.Errorf("integer %s is out of range", lit)
		}
		if c := lit[0]; c == '+' || c == '-' || (c == '0' && len(lit) > 1) {
			return json.Number(strconv.FormatInt(i, 10)), nil
		}
		return json.Number(lit), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", fmt.Errorf("number %s is out of range", lit)
	}
	return json.Number(formatFloat(f)), nil
}

// isIntNumber reports whether a canonical json.Number is an integer:
// a canonical real always has a '.' or an exponent.
func isIntNumber(n json.Number) bool {
	for i := 0; i < len(n); i++ {
		if n[i] == '.' || n[i] == 'e' {
			return false
		}
	}
	return true
}

// formatFloat writes f as Python's float repr does (json.dumps uses it):
// shortest round-trip digits, positional notation for exponents in
// [-4, 16), always with a fraction ("3600.0"), else "1e+16" / "1.5e-05".
func formatFloat(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	b := strconv.AppendFloat(make([]byte, 0, 32), f, 'e', -1, 64)
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	epos := slices.Index(b, 'e')
	exp, _ := strconv.Atoi(string(b[epos+1:]))
	digits := make([]byte, 0, epos)
	for _, c := range b[:epos] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	decpt := exp + 1
	out := make([]byte, 0, 32)
	if neg {
		out = append(out, '-')
	}
	switch {
	case decpt <= -4 || decpt > 16:
		out = append(out, digits[0])
		if len(digits) > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		if exp < 0 {
			out = append(out, '-')
			exp = -exp
		} else {
			out = append(out, '+')
		}
		if exp < 10 {
			out = append(out, '0')
		}
		out = strconv.AppendInt(out, int64(exp), 10)
	case decpt <= 0:
		out = append(out, '0', '.')
		for i := 0; i < -decpt; i++ {
			out = append(out, '0')
		}
		out = append(out, digits...)
	case decpt >= len(digits):
		out = append(out, digits...)
		for i := len(digits); i < decpt; i++ {
			out = append(out, '0')
		}
		out = append(out, '.', '0')
	default:
		out = append(out, digits[:decpt]...)
		out = append(out, '.')
		out = append(out, digits[decpt:]...)
	}
	return string(out)
}

// appendString writes s as json.dumps(ensure_ascii=False) does: only '"',
// '\\' and control characters are escaped. Invalid UTF-8 (possible only in
// hand-built values) becomes U+FFFD so the output is always valid JSON.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendValue writes a free-form value canonically. Besides the parsed
// types it accepts the Go types a caller may put in a hand-built Jobspec
// (ints, floats, typed maps and slices), refusing what JSON cannot hold.
func appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nesting is deeper than %d levels", MaxDepth)
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		if v {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case string:
		return appendString(b, v), nil
	case json.Number:
		n, err := canonicalNumber(string(v), isIntLiteral(string(v)))
		if err != nil {
			return nil, err
		}
		return append(b, n...), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("number %v cannot be written as JSON", v)
		}
		return append(b, formatFloat(v)...), nil
	case float32:
		return appendValue(b, float64(v), depth)
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case json.RawMessage:
		tree, err := parseJSONValue(v)
		if err != nil {
			return nil, err
		}
		return appendValue(b, tree, depth)
	case map[string]any:
		keys := sortedKeys(v)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, v[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case map[string]string:
		b = append(b, '{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, v[k])
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case []string:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
		}
		return append(b, ']'), nil
	default:
		return nil, fmt.Errorf("value of type %T cannot be written as JSON", v)
	}
}

// checkValue reports whether appendValue can write v, without writing.
func checkValue(v any, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("nesting is deeper than %d levels", MaxDepth)
	}
	const bad = "string is not valid UTF-8"
	switch v := v.(type) {
	case nil, bool, int, int64, int32, uint, uint64, uint32:
		return nil
	case string:
		if !utf8.ValidString(v) {
			return errors.New(bad)
		}
		return nil
	case map[string]string:
		for k, e := range v {
			if !utf8.ValidString(k) || !utf8.ValidString(e) {
				return errors.New(bad)
			}
		}
		return nil
	case []string:
		for _, e := range v {
			if !utf8.ValidString(e) {
				return errors.New(bad)
			}
		}
		return nil
	case json.Number:
		_, err := canonicalNumber(string(v), isIntLiteral(string(v)))
		return err
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("number %v cannot be written as JSON", v)
		}
		return nil
	case float32:
		return checkValue(float64(v), depth)
	case json.RawMessage:
		_, err := parseJSONValue(v)
		return err
	case map[string]any:
		for k, e := range v {
			if !utf8.ValidString(k) {
				return errors.New(bad)
			}
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case []any:
		for _, e := range v {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	default:
		return fmt.Errorf("value of type %T cannot be written as JSON", v)
	}
}

// isIntLiteral reports whether a JSON number literal has no fraction or
// exponent.
func isIntLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// canonicalValue turns any value a caller may hand in (Go maps, slices,
// numbers, json.RawMessage, structs with json tags) into the canonical
// free-form tree, by writing it and parsing it back.
func canonicalValue(v any) (any, error) {
	b, err := appendValue(nil, v, 0)
	if err != nil {
		// Types appendValue does not know (structs, typed maps) go
		// through encoding/json first.
		raw, jerr := json.Marshal(v)
		if jerr != nil {
			return nil, err
		}
		b = raw
	}
	return parseJSONValue(b)
}

// CanonicalValue rewrites one JSON value in the canonical form free-form
// values (such as attributes.system.constraints) are kept in, so a value
// built elsewhere (a queue's constraints) reads back byte for byte.
func CanonicalValue(data []byte) (json.RawMessage, error) {
	v, err := parseJSONValue(data)
	if err != nil {
		return nil, err
	}
	return appendValue(nil, v, 0)
}
