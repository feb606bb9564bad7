package eventlog

import (
	"strconv"

	json "github.com/goccy/go-json"
)

// parsePlain decodes an event written in the form appendJSON writes for
// the common shapes: {"timestamp":N,"name":"S"} with, after it,
// ,"context":{"K":V,...}, no white space, every string printable ASCII
// without escapes, and every value a number, such a string, true, false
// or null. ok is false for anything else, which UnmarshalJSON leaves to
// the JSON package, and what parsePlain gives is what that decodes
// (FuzzPlainAsPackage).
//
// Why: fluxsched's start and a direct cancel read every active job's
// eventlog, four or more events a job; through the JSON package an
// event cost a decoding of its head, a Decoder set up for its context
// (a stream and its buffer) and a map built by reflection, 1.2 µs and
// 12 allocations an event, most of the time it took to take up 100,000
// pending jobs (BenchmarkParse).
func parsePlain(b []byte) (Event, bool) {
	p := plainReader{b: b}
	if !p.lit(`{"timestamp":`) {
		return Event{}, false
	}
	num, ok := p.number()
	if !ok {
		return Event{}, false
	}
	ts, err := strconv.ParseFloat(string(num), 64)
	if err != nil || !p.lit(`,"name":`) {
		return Event{}, false
	}
	name, ok := p.str()
	if !ok {
		return Event{}, false
	}
	ev := Event{Timestamp: ts, Name: string(name)}
	if p.lit(`}`) {
		return ev, p.i == len(b)
	}
	if !p.lit(`,"context":{`) {
		return Event{}, false
	}
	ev.Context = map[string]any{}
	for first := true; !p.lit(`}`); first = false {
		if !first && !p.lit(`,`) {
			return Event{}, false
		}
		k, ok := p.str()
		if !ok || !p.lit(`:`) {
			return Event{}, false
		}
		v, ok := p.value()
		if !ok {
			return Event{}, false
		}
		ev.Context[string(k)] = v // a key given twice: the last one, as the package does
	}
	return ev, p.lit(`}`) && p.i == len(b)
}

// plainReader reads parsePlain's form from b, at i.
type plainReader struct {
	b []byte
	i int
}

// lit reads s if it comes next.
func (p *plainReader) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str reads a string of printable ASCII with no escape, and returns what
// is between its quotes.
func (p *plainReader) str() ([]byte, bool) {
	if !p.lit(`"`) {
		return nil, false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// number reads a JSON number (RFC 8259's grammar) and returns its text.
func (p *plainReader) number() ([]byte, bool) {
	b, start := p.b, p.i
	digits := func() int {
		n := 0
		for p.i < len(b) && b[p.i] >= '0' && b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(b) && b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(b) && b[p.i] == '0':
		p.i++
	case digits() == 0:
		return nil, false
	}
	if p.i < len(b) && b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(b) && (b[p.i] == 'e' || b[p.i] == 'E') {
		p.i++
		if p.i < len(b) && (b[p.i] == '+' || b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return b[start:p.i], true
}

// value reads a context value of the plain form: a number (as
// json.Number, as a Decoder with UseNumber gives it), a string, true,
// false or null.
func (p *plainReader) value() (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch p.b[p.i] {
	case '"':
		s, ok := p.str()
		return string(s), ok
	case 't':
		return true, p.lit("true")
	case 'f':
		return false, p.lit("false")
	case 'n':
		return nil, p.lit("null")
	}
	n, ok := p.number()
	return json.Number(n), ok
}
