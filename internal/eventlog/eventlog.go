// Package eventlog reads and writes RFC 18 event logs: one JSON object per
// line, each with a positive "timestamp", a "name" and an optional "context"
// object. Job eventlogs (RFC 21) are the main use.
package eventlog

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	json "github.com/goccy/go-json"
)

// Event is one eventlog entry.
type Event struct {
	Timestamp float64
	Name      string
	// Context is the event's data; nil when the event has none. Values are
	// what encoding/json decodes into any, except numbers, which stay
	// json.Number so that integers such as job ids keep every digit.
	Context map[string]any
}

// maxLine bounds one event, so a corrupt or hostile log cannot make a reader
// hold an unbounded line.
const maxLine = 1 << 20

// Validate checks the RFC 18 rules for one event.
func (e Event) Validate() error {
	switch {
	case math.IsNaN(e.Timestamp) || math.IsInf(e.Timestamp, 0) || e.Timestamp <= 0:
		return fmt.Errorf("event %q: timestamp must be greater than zero", e.Name)
	case e.Name == "":
		return fmt.Errorf("event has an empty name")
	}
	return nil
}

// MarshalJSON encodes the event as RFC 18 shows it: timestamp, name, then
// context, with the context's keys sorted.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.appendJSON(nil)
}

// appendJSON is MarshalJSON onto b. A job manager writes two events of
// every job a cancel of many takes, so the common shapes (a name, a
// context of short strings and integers) are written straight into b;
// anything else is what the JSON package writes, and the bytes are the
// same either way (TestAppendAsMarshal).
func (e Event) appendJSON(b []byte) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	b = append(b, `{"timestamp":`...)
	b = strconv.AppendFloat(b, e.Timestamp, 'f', -1, 64)
	b = append(b, `,"name":`...)
	b = appendString(b, e.Name)
	if e.Context != nil {
		b = append(b, `,"context":`...)
		var ok bool
		if b, ok = appendPlainContext(b, e.Context); !ok {
			ctx, err := json.Marshal(e.Context)
			if err != nil {
				return nil, fmt.Errorf("event %q: context: %w", e.Name, err)
			}
			b = append(b, ctx...)
		}
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, as the JSON package writes it.
func appendString(b []byte, s string) []byte {
	if !plain(s) {
		q, _ := json.Marshal(s) // a string always encodes
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plain reports whether s is written as it is between quotes: printable
// ASCII that the JSON package neither escapes nor, as HTML, replaces.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendPlainContext appends ctx, keys sorted, when each of its values is
// a string, a Go integer, a bool or null; it reports false, and leaves b
// as it was, for any other.
func appendPlainContext(b []byte, ctx map[string]any) ([]byte, bool) {
	var keys [8]string
	ks := keys[:0]
	for k, v := range ctx {
		switch v.(type) {
		case string, int, int64, uint32, uint64, bool, nil:
		default:
			return b, false
		}
		ks = append(ks, k)
	}
	slices.Sort(ks)
	start := len(b)
	b = append(b, '{')
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		switch v := ctx[k].(type) {
		case string:
			b = appendString(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case uint32:
			b = strconv.AppendUint(b, uint64(v), 10)
		case uint64:
			b = strconv.AppendUint(b, v, 10)
		case bool:
			b = strconv.AppendBool(b, v)
		case nil:
			b = append(b, "null"...)
		default:
			return b[:start], false
		}
	}
	return append(b, '}'), true
}

// UnmarshalJSON decodes one event and checks it.
func (e *Event) UnmarshalJSON(data []byte) error {
	if ev, ok := parsePlain(data); ok {
		if err := ev.Validate(); err != nil {
			return err
		}
		*e = ev
		return nil
	}
	ev, rawCtx, err := head(data)
	if err != nil {
		return err
	}
	if rawCtx != nil {
		dec := json.NewDecoder(bytes.NewReader(rawCtx))
		dec.UseNumber()
		var ctx map[string]any
		if err := dec.Decode(&ctx); err != nil || ctx == nil {
			return fmt.Errorf("event %q: context must be an object", ev.Name)
		}
		ev.Context = ctx
	}
	if err := ev.Validate(); err != nil {
		return err
	}
	*e = ev
	return nil
}

// head decodes an event's timestamp and name, checked as UnmarshalJSON
// checks them, and returns its context undecoded (nil if none).
func head(data []byte) (Event, json.RawMessage, error) {
	var raw struct {
		Timestamp json.RawMessage `json:"timestamp"`
		Name      *string         `json:"name"`
		Context   json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Event{}, nil, fmt.Errorf("invalid event: %w", err)
	}
	if raw.Timestamp == nil {
		return Event{}, nil, fmt.Errorf("event has no timestamp")
	}
	if raw.Name == nil {
		return Event{}, nil, fmt.Errorf("event has no name")
	}
	// A RawMessage keeps the JSON type: "1" (a string) is not a number.
	ts, err := strconv.ParseFloat(string(raw.Timestamp), 64)
	if err != nil || !isJSONNumber(raw.Timestamp) {
		return Event{}, nil, fmt.Errorf("event %q: timestamp %s is not a number", *raw.Name, raw.Timestamp)
	}
	return Event{Timestamp: ts, Name: *raw.Name}, raw.Context, nil
}

// LastName returns the name of an eventlog's last event, checked as Parse
// checks it (the others are not read), or "" for an empty log. It spares
// a reader that only asks whether a job has ended (its last event is
// "clean") decoding the event's context: a wait asks after every turn that
// touched the job.
func LastName(data []byte) (string, error) {
	if len(data) == 0 {
		return "", nil
	}
	if data[len(data)-1] != '\n' {
		return "", fmt.Errorf("eventlog line %d: not terminated by a newline", bytes.Count(data, []byte("\n"))+1)
	}
	lineno := bytes.Count(data, []byte("\n"))
	line := data[:len(data)-1]
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if len(line) > maxLine {
		return "", fmt.Errorf("eventlog line %d: longer than %d bytes", lineno, maxLine)
	}
	ev, rawCtx, err := head(line)
	if err == nil && rawCtx != nil && rawCtx[0] != '{' {
		// Valid JSON (head decoded it), so an object if it opens as one.
		err = fmt.Errorf("event %q: context must be an object", ev.Name)
	}
	if err == nil {
		err = ev.Validate()
	}
	if err != nil {
		return "", fmt.Errorf("eventlog line %d: %w", lineno, err)
	}
	return ev.Name, nil
}

func isJSONNumber(b []byte) bool {
	return len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9'))
}

// Append encodes events as eventlog lines, each ending in a newline, onto b.
func Append(b []byte, events ...Event) ([]byte, error) {
	for _, e := range events {
		var err error
		if b, err = e.appendJSON(b); err != nil {
			return nil, err
		}
		b = append(b, '\n')
	}
	return b, nil
}

// Parse decodes a whole eventlog. Every line must be a complete event
// ending in a newline: RFC 18 logs are only ever appended whole events, so a
// partial last line means corruption, and is reported rather than dropped.
func Parse(data []byte) ([]Event, error) {
	var events []Event
	if n := bytes.Count(data, []byte{'\n'}); n > 0 {
		events = make([]Event, 0, n) // one allocation, not one a doubling
	}
	for lineno := 1; len(data) > 0; lineno++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, fmt.Errorf("eventlog line %d: not terminated by a newline", lineno)
		}
		line := data[:i]
		data = data[i+1:]
		if len(line) > maxLine {
			return nil, fmt.Errorf("eventlog line %d: longer than %d bytes", lineno, maxLine)
		}
		var e Event
		if err := e.UnmarshalJSON(line); err != nil {
			return nil, fmt.Errorf("eventlog line %d: %w", lineno, err)
		}
		events = append(events, e)
	}
	return events, nil
}

// ContextKeys returns the event's context keys, sorted, for printing
// "name key=value ..." lines in a stable order.
func (e Event) ContextKeys() []string {
	keys := make([]string, 0, len(e.Context))
	for k := range e.Context {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
