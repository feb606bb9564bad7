package constraint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ParseJSON decodes and validates an RFC 31 constraint object. Errors use
// flux-core's wording, e.g. "unknown constraint operator: foo"; objects
// nested deeper than MaxDepth are refused.
func ParseJSON(data []byte) (Constraint, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return Constraint{}, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Constraint{}, errors.New("invalid JSON: data after the constraint object")
	}
	n, err := decodeNode(raw, 1)
	if err != nil {
		return Constraint{}, err
	}
	if n.op == "" {
		return Constraint{}, nil
	}
	return Constraint{root: n}, nil
}

func jsonError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at offset %d: %v", se.Offset, err)
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return errors.New("invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// decodeNode validates one constraint object at nesting level depth, in
// document order, so the first error is the one flux would report.
func decodeNode(raw json.RawMessage, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("constraint nesting exceeds %d levels", MaxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("constraint must be JSON object")
	}
	// Duplicate keys collapse, the last value winning, as in jansson.
	var key string
	var val json.RawMessage
	keys := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(err)
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(err)
		}
		if keys == 0 || k != key {
			keys++
		}
		key, val = k, v
		if keys > 1 {
			return nil, errors.New("constraint must only contain 1 element")
		}
	}
	if keys == 0 {
		return &node{depth: 1}, nil
	}
	n := &node{op: key, depth: 1}
	switch key {
	case opProperties:
		elems, ok := decodeArray(val)
		if !ok {
			return nil, errors.New("properties value must be an array")
		}
		n.values = make([]string, 0, len(elems))
		for _, e := range elems {
			var s string
			if e[0] != '"' || json.Unmarshal(e, &s) != nil {
				return nil, errors.New("non-string property specified")
			}
			if err := checkProperty(s); err != nil {
				return nil, err
			}
			n.values = append(n.values, s)
		}
	case opHostlist, opRanks:
		elems, ok := decodeArray(val)
		if !ok {
			what := "hostlist"
			if key == opRanks {
				what = "idset"
			}
			return nil, fmt.Errorf("%s operator argument not an array", what)
		}
		n.values = make([]string, 0, len(elems))
		for _, e := range elems {
			var s string
			if e[0] != '"' || json.Unmarshal(e, &s) != nil {
				what := "hostlist"
				if key == opRanks {
					what = "idset"
				}
				return nil, fmt.Errorf("invalid %s '%s' in %s", what, printable(compact(e)), printable(dumpRaw(elems)))
			}
			n.values = append(n.values, s)
		}
		if err := checkLeaf(n); err != nil {
			return nil, err
		}
	case opAnd, opOr, opNot:
		elems, ok := decodeArray(val)
		if !ok {
			return nil, fmt.Errorf("%s operator value must be an array", key)
		}
		n.kids = make([]*node, 0, len(elems))
		for _, e := range elems {
			k, err := decodeNode(e, depth+1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, k)
			n.depth = max(n.depth, k.depth+1)
		}
	default:
		return nil, fmt.Errorf("unknown constraint operator: %s", printable(key))
	}
	return n, nil
}

// decodeArray splits a JSON array into its raw elements.
func decodeArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, false
	}
	var elems []json.RawMessage
	for dec.More() {
		var e json.RawMessage
		if err := dec.Decode(&e); err != nil {
			return nil, false
		}
		elems = append(elems, e)
	}
	return elems, true
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func dumpRaw(elems []json.RawMessage) string {
	parts := make([]string, len(elems))
	for i, e := range elems {
		parts[i] = compact(e)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// MarshalJSON encodes c as canonical RFC 31 JSON: compact, one key per
// object, operands as written; the empty constraint is {}.
func (c Constraint) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if c.root == nil {
		b.WriteString("{}")
	} else {
		writeNode(&b, c.root)
	}
	return b.Bytes(), nil
}

// UnmarshalJSON decodes with ParseJSON, so a jobspec's
// attributes.system.constraints can be decoded in place.
func (c *Constraint) UnmarshalJSON(data []byte) error {
	v, err := ParseJSON(data)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

func writeNode(b *bytes.Buffer, n *node) {
	if n.op == "" {
		b.WriteString("{}")
		return
	}
	b.WriteString(`{"`)
	b.WriteString(n.op)
	b.WriteString(`":[`)
	if n.isLeaf() {
		for i, v := range n.values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteJSON(v))
		}
	} else {
		for i, k := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			writeNode(b, k)
		}
	}
	b.WriteString("]}")
}

// quoteJSON encodes s as a JSON string without HTML escaping, so that
// "a&b" stays readable.
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
