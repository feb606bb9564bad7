// Package api is the contract between the commands and an instance: every
// request fluxsched's socket answers, one table entry each (its name, its
// parameter, result and stream types, who may call it), the wire format of
// a call and its answer, and the error kinds an answer carries beside its
// message, so that errors.Is gives the same answer whether a command went
// through the socket or opened the store itself.
//
// It holds types only: it imports no package of the loop, the store or the
// command line, so the server, the client and the state package can all
// stand on it.
package api

import (
	"bytes"
	"encoding/json"
	"errors"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/eventlog"
)

// Access says who may call a method.
type Access struct {
	// ownerOnly: guests are refused, with what they may not do.
	ownerOnly bool
	what      string
}

// Anyone may call a method: the instance owner, and guests when the
// instance allows them (the operation may still refuse them a job that is
// not theirs).
var Anyone = Access{}

// OwnerOnly refuses guests; what completes "only the instance owner may …".
func OwnerOnly(what string) Access { return Access{ownerOnly: true, what: what} }

// Check refuses a caller that is not the owner when the method is the
// owner's.
func (a Access) Check(owner bool) error {
	if !a.ownerOnly || owner {
		return nil
	}
	return &Error{Code: CodePermission, Message: "permission denied: only the instance owner may " + a.what}
}

// OwnerOnly reports whether guests are refused.
func (a Access) OwnerOnly() bool { return a.ownerOnly }

// Spec is what a table entry says whatever its types.
type Spec struct {
	Name   string
	Access Access
	// Stream: lines (of the entry's stream type) may come before the
	// final answer, for as long as a job lasts; the caller's timeout
	// bounds only the wait for the first line.
	Stream bool
	// ReadOnly: the method changes nothing, so a caller that gives up on
	// it leaves nothing in doubt.
	ReadOnly bool
}

// Method is one entry of the table: P is its parameters, R its result, S
// the type of its stream lines (None when it has none).
type Method[P, R, S any] struct{ Spec }

// None is the type of what a method does not have: no parameters, no
// result, or no stream lines.
type None struct{}

// Following is the parameters of a stream whose caller may ask only for
// what is there now: the stream is long only when it follows.
type Following interface{ Following() bool }

// Call is one request line on the socket.
type Call struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// Job is the caller's FLUXQ_JOB_ID: a claim the instance verifies
	// against the caller's process session before it believes it.
	Job string `json:"job,omitempty"`
	// AsScheduler asks to act as the scheduler (the owner only).
	AsScheduler bool `json:"as_scheduler,omitempty"`
	// Timeout is the caller's --timeout in seconds: fluxsched shows it
	// is alive (Working lines) well within it while it answers.
	Timeout float64 `json:"timeout,omitempty"`
	// Parts: the caller takes a long listing's result in parts (Part
	// lines, then the final line with the last part), so that it decodes
	// the first while fluxsched encodes the next. A fluxsched that does
	// not know it answers in one line, which the caller reads as before.
	Parts bool `json:"parts,omitempty"`
}

// Reply is one line of an answer: a stream line, or the final result or
// error.
type Reply struct {
	// Event is a stream line of the events method.
	Event *eventlog.Event `json:"event,omitempty"`
	// Progress is a stream line of another method.
	Progress json.RawMessage `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Part is a piece of a list result, sent only to a caller that asked
	// for Parts: the list is the Part lines' elements in order, then the
	// final line's Result's (AppendPartLine, PartOf).
	Part json.RawMessage `json:"part,omitempty"`
	// Error is the message of a failed request; Code, Status and Errno
	// say what kind of error it is (Error's fields).
	Error  string `json:"error,omitempty"`
	Code   Code   `json:"code,omitempty"`
	Status int    `json:"status,omitempty"`
	Errno  int    `json:"errno,omitempty"`
	Final  bool   `json:"final,omitempty"`
	// Working is a sign of life, no answer: fluxsched has the request
	// and is at work on it (sent only to callers that give a Timeout).
	Working bool `json:"working,omitempty"`
}

// Failure is the final line of a failed request.
func Failure(err error) Reply {
	e := Encode(err)
	return Reply{Error: e.Message, Code: e.Code, Status: e.Status, Errno: e.Errno, Final: true}
}

// Err is the error a final line carries, nil if it carries none.
func (r *Reply) Err() error {
	if r.Error == "" {
		return nil
	}
	return Decode(&Error{Message: r.Error, Code: r.Code, Status: r.Status, Errno: r.Errno})
}

// StreamLine is the reply line of one stream value: the events method's
// lines are events, the others' progress.
func StreamLine(v any) (Reply, error) {
	if e, ok := v.(eventlog.Event); ok {
		return Reply{Event: &e}, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return Reply{}, err
	}
	return Reply{Progress: raw}, nil
}

// AppendProgressLine appends the reply line of a stream value already
// encoded as compact JSON (one line, as json.Marshal writes it): the line
// encoding/json writes for Reply{Progress: v}, without decoding v to encode
// it again. Used for the summaries a wait streams straight from the store.
func AppendProgressLine(b []byte, v json.RawMessage) []byte {
	b = append(b, `{"progress":`...)
	b = append(b, v...)
	return append(b, "}\n"...)
}

// AppendPartLine appends the line of one part of a list result: part is
// a JSON array, compact, on one line (as the encoder writes it).
func AppendPartLine(b []byte, part []byte) []byte {
	b = append(b, partPrefix...)
	b = append(b, part...)
	return append(b, "}\n"...)
}

const partPrefix = `{"part":`

// PartOf is the array a line written by AppendPartLine carries (without
// its newline), found without decoding the line: a part is thousands of
// jobs, decoded once, by the caller, beside the reading of the next.
// ok is false for any other line.
func PartOf(line []byte) (part []byte, ok bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if !bytes.HasPrefix(line, []byte(partPrefix+"[")) || !bytes.HasSuffix(line, []byte("]}")) {
		return nil, false
	}
	return line[len(partPrefix) : len(line)-1], true
}

// StreamValue decodes a stream line into what it carries.
func StreamValue[S any](r *Reply) (S, error) {
	var v S
	if r.Event != nil {
		if e, ok := any(r.Event).(*S); ok {
			return *e, nil
		}
		return v, errors.New("bad response from the instance: an event where none was expected")
	}
	// The server's own encoding: the faster decoder.
	err := gojson.Unmarshal(r.Progress, &v)
	return v, err
}
