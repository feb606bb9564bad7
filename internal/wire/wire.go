// Package wire carries the job manager's conversations with the scheduler
// (RFC 27) and the exec service (RFC 32): messages shaped like Flux's RFC 6
// requests and responses, over an in-process pipe or as JSON lines over a
// child process's stdin and stdout (`fluxsched run --sched-cmd PATH`).
//
// RFC 6's matchtag and flags are carried (a scheduler written from the
// RFCs sends them), but responses are still matched to requests by topic
// and by the job id in the payload, as RFC 27 and RFC 32 require. Keys
// beyond these are ignored, as an RFC 6 peer ignores what it does not
// know: a newer peer's key must not cost the conversation.
package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	json "github.com/goccy/go-json"
)

// Type says whether a message asks or answers.
type Type string

// Message types.
const (
	Request  Type = "request"
	Response Type = "response"
)

// Errnum values the protocols use (Linux numbering, as Flux sends them).
const (
	EINVAL  = 22 // a message was well formed but its content cannot be taken (a SUCCESS whose R does not fit)
	ENOSYS  = 38 // no such service: the scheduler is not loaded
	ENODATA = 61 // end of a streaming response (RFC 27 hello)
	EPROTO  = 71 // the peer broke the protocol
)

// FlagStreaming is RFC 6's FLUX_MSGFLAG_STREAMING (flux-core's message.h):
// a request that opens a stream of responses, and each response of it.
const FlagStreaming = 0x40

// Message is one request or response. A response with a nonzero Errnum is
// a conventional error response; its Payload is empty.
type Message struct {
	Topic   string          `json:"topic"`
	Type    Type            `json:"type"`
	Errnum  int             `json:"errnum,omitempty"`
	Errstr  string          `json:"errstr,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	// RFC 6's matchtag and flags, last so that a line without them (every
	// exec agent's) keeps the shape parseSent reads.
	Matchtag uint32 `json:"matchtag,omitempty"`
	Flags    int    `json:"flags,omitempty"`
	// Body is the payload as the protocol's Go value, for a message that
	// stays in the process (NewTypedRequest, NewTypedResponse): its JSON
	// is made only where it leaves (Encoded, which a line connection's
	// Send calls), and a decoder of the same type takes the value as it
	// is (DecodeTyped). Payload is then empty. It carries exactly what
	// the JSON would: the value is the protocol package's own type, the
	// one that is encoded when it crosses a socket.
	Body any `json:"-"`
}

// Streaming reports whether m has RFC 6's streaming flag.
func (m Message) Streaming() bool { return m.Flags&FlagStreaming != 0 }

// Answering returns r made the answer to req as RFC 6 answers a request:
// with req's matchtag, and the streaming flag if req had it.
func (r Message) Answering(req Message) Message {
	r.Matchtag = req.Matchtag
	if req.Streaming() {
		r.Flags |= FlagStreaming
	}
	return r
}

// NewRequest builds a request whose payload is v encoded as JSON (nil for
// an empty payload).
func NewRequest(topic string, v any) (Message, error) { return build(topic, Request, v) }

// NewResponse builds a successful response whose payload is v.
func NewResponse(topic string, v any) (Message, error) { return build(topic, Response, v) }

// NewError builds a conventional error response.
func NewError(topic string, errnum int, errstr string) Message {
	return Message{Topic: topic, Type: Response, Errnum: errnum, Errstr: errstr}
}

// NewTypedRequest builds a request whose payload is v itself (Body), left
// unencoded until the message leaves the process (Encoded). v must be a
// value JSON encodes; nil is an empty payload.
func NewTypedRequest(topic string, v any) Message {
	return Message{Topic: topic, Type: Request, Body: v}
}

// NewTypedResponse is NewTypedRequest for a successful response.
func NewTypedResponse(topic string, v any) Message {
	return Message{Topic: topic, Type: Response, Body: v}
}

// Encoded returns m with its Body encoded as its Payload, as it must be
// before it is written out; a message without a Body is returned as it
// is.
func (m Message) Encoded() (Message, error) {
	if m.Body == nil {
		return m, nil
	}
	b, err := json.Marshal(m.Body)
	if err != nil {
		return Message{}, fmt.Errorf("%s: %w", m.Topic, err)
	}
	m.Payload, m.Body = b, nil
	return m, nil
}

// DecodeTyped is Decode into a value of type T: a Body of type T is taken
// as it is (its required keys are there, since T encodes them), anything
// else is decoded from JSON.
func DecodeTyped[T any](m Message, required ...string) (T, error) {
	if b, ok := m.Body.(T); ok && !m.IsError() {
		return b, nil
	}
	var v T
	err := Decode(m, &v, required...)
	return v, err
}

func build(topic string, t Type, v any) (Message, error) {
	m := Message{Topic: topic, Type: t}
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return Message{}, fmt.Errorf("%s: %w", topic, err)
		}
		m.Payload = b
	}
	return m, nil
}

// IsError reports whether m is a conventional error response.
func (m Message) IsError() bool { return m.Type == Response && m.Errnum != 0 }

// Err returns the error an error response carries, or nil.
func (m Message) Err() error {
	if !m.IsError() {
		return nil
	}
	return &Error{Topic: m.Topic, Errnum: m.Errnum, Errstr: m.Errstr}
}

// Error is an error response as a Go error.
type Error struct {
	Topic  string
	Errnum int
	Errstr string
}

func (e *Error) Error() string {
	if e.Errstr != "" {
		return fmt.Sprintf("%s: %s", e.Topic, e.Errstr)
	}
	return fmt.Sprintf("%s: error %d", e.Topic, e.Errnum)
}

// Validate checks the envelope.
func (m Message) Validate() error {
	switch {
	case m.Topic == "":
		return errors.New("message has no topic")
	case m.Type != Request && m.Type != Response:
		return fmt.Errorf("%s: message type %q is neither request nor response", m.Topic, m.Type)
	case m.Type == Request && m.Errnum != 0:
		return fmt.Errorf("%s: a request cannot carry an error", m.Topic)
	}
	return nil
}

// Conn is one end of a conversation. Send and Recv may be called from
// different goroutines; Recv returns io.EOF once the other end has closed
// and everything it sent has been received.
type Conn interface {
	Send(Message) error
	Recv() (Message, error)
	Close() error
}

// ErrClosed is returned by Send on a closed connection.
var ErrClosed = errors.New("connection closed")

// Pipe returns two connected in-process ends. Sends never block: each
// direction is an unbounded queue, so two loops that each send to the other
// cannot deadlock, which is the property the job manager and the scheduler
// need when both may have many messages in flight.
func Pipe() (Conn, Conn) {
	ab, ba := newQueue(), newQueue()
	return &pipeEnd{in: ba, out: ab}, &pipeEnd{in: ab, out: ba}
}

type pipeEnd struct {
	in, out *queue
}

func (p *pipeEnd) Send(m Message) error {
	if err := m.Validate(); err != nil {
		return err
	}
	return p.out.put(m)
}

func (p *pipeEnd) Recv() (Message, error) { return p.in.get() }

// Close ends both directions, as closing a socket would.
func (p *pipeEnd) Close() error {
	p.in.close()
	p.out.close()
	return nil
}

type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	msgs   []Message
	closed bool
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) put(m Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.msgs = append(q.msgs, m)
	q.cond.Signal()
	return nil
}

func (q *queue) get() (Message, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.msgs) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.msgs) == 0 {
		return Message{}, io.EOF
	}
	m := q.msgs[0]
	q.msgs[0] = Message{}
	q.msgs = q.msgs[1:]
	return m, nil
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// MaxLine bounds one JSON-lines message; a jobspec with a large environment
// or the R of a large instance fits many times over.
const MaxLine = 64 << 20

// NewLineConn speaks JSON lines: one Message per line on w, read from r.
// closer, if not nil, is called by Close (e.g. to close a child's stdin).
func NewLineConn(r io.Reader, w io.Writer, closer func() error) Conn {
	return &lineConn{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer}
}

type lineConn struct {
	r      *bufio.Reader
	rmu    sync.Mutex
	wmu    sync.Mutex
	w      io.Writer
	closer func() error
	once   sync.Once
	closed bool
}

func (c *lineConn) Send(m Message) error {
	if err := m.Validate(); err != nil {
		return err
	}
	m, err := m.Encoded() // a message built in process leaves as JSON
	if err != nil {
		return err
	}
	// No HTML escaping: a peer should see "&" as sent, not "\u0026".
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil { // Encode ends the line
		return fmt.Errorf("%s: %w", m.Topic, err)
	}
	b := buf.Bytes()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("sending %s: %w", m.Topic, err)
	}
	return nil
}

func (c *lineConn) Recv() (Message, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		line, err := c.readLine()
		if err != nil {
			return Message{}, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue // a hand-written peer may send blank lines
		}
		m, err := decodeLine(line)
		if err != nil {
			return Message{}, &BadMessageError{Topic: topicOf(line), Line: truncate(line), Err: err}
		}
		return m, nil
	}
}

// BadMessageError is a line that does not read as a message. Lines are
// framed by their newlines, so the connection is still in step: the
// caller may answer it (on Topic, when the line names one) and read on.
type BadMessageError struct {
	Topic string // the line's topic, if it has one that reads
	Line  string // the line, cut short for a log
	Err   error
}

func (e *BadMessageError) Error() string { return e.Err.Error() }
func (e *BadMessageError) Unwrap() error { return e.Err }

// topicOf is the topic a bad line names, if any, so that it can be
// answered on that topic.
func topicOf(line []byte) string {
	var t struct {
		Topic any `json:"topic"`
	}
	if json.Unmarshal(line, &t) != nil {
		return ""
	}
	s, _ := t.Topic.(string)
	return s
}

// decodeLine reads one message line, spaces around it trimmed.
func decodeLine(line []byte) (Message, error) {
	if m, ok := parseSent(line); ok {
		if err := m.Validate(); err != nil {
			return Message{}, err
		}
		return m, nil
	}
	return decodeFull(line)
}

// decodeFull reads a message line of any shape. A key it does not know is
// skipped (RFC 6); a known key of the wrong type is an error.
func decodeFull(line []byte) (Message, error) {
	var m Message
	if !isObject(line) {
		return Message{}, fmt.Errorf("bad message %q: not a JSON object", truncate(line))
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return Message{}, fmt.Errorf("bad message %q: %w", truncate(line), err)
	}
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	if len(m.Payload) > 0 {
		// Keep payloads compact, whatever spacing the peer used, so a
		// message reads the same whichever transport carried it.
		var compact bytes.Buffer
		if err := json.Compact(&compact, m.Payload); err != nil {
			return Message{}, fmt.Errorf("%s: bad payload: %w", m.Topic, err)
		}
		m.Payload = compact.Bytes()
	}
	return m, nil
}

// parseSent reads a line in the shape Send writes it, with no decoder: the
// keys in Message's order, no space, the strings without escapes or
// non-ASCII bytes, the payload compact JSON. Those are an exec agent's
// lines, several per job, which the decoder took most of Recv's time to
// read. Anything else, valid or not, it declines (ok false), and Recv
// decodes the line in full, so every line reads as the decoder reads it
// and every error is the decoder's (TestParseSentAsDecoder, FuzzParseSent).
// The payload is a slice of line, which Recv does not reuse.
func parseSent(line []byte) (m Message, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"topic":`))
	if !ok {
		return m, false
	}
	if m.Topic, rest, ok = plainString(rest); !ok {
		return m, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"type":`)); !ok {
		return m, false
	}
	var typ string
	if typ, rest, ok = plainString(rest); !ok {
		return m, false
	}
	m.Type = Type(typ)
	if r, found := bytes.CutPrefix(rest, []byte(`,"errnum":`)); found {
		if m.Errnum, rest, ok = plainInt(r); !ok || m.Errnum == 0 {
			return m, false // Send leaves a zero out
		}
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"errstr":`)); found {
		if m.Errstr, rest, ok = plainString(r); !ok || m.Errstr == "" {
			return m, false
		}
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"payload":`)); found {
		end := skipValue(r, 0)
		if end <= 0 || end >= len(r) || !compact(r[:end]) || !json.Valid(r[:end]) || string(r[:end]) == "null" {
			return m, false
		}
		m.Payload, rest = r[:end:end], r[end:]
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"matchtag":`)); found {
		var tag int
		if tag, rest, ok = plainInt(r); !ok || tag <= 0 {
			return m, false
		}
		m.Matchtag = uint32(tag)
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"flags":`)); found {
		if m.Flags, rest, ok = plainInt(r); !ok || m.Flags == 0 {
			return m, false
		}
	}
	return m, string(rest) == "}"
}

// plainString reads a JSON string with no escape and printable ASCII alone
// at the start of b, and returns it and what follows.
func plainString(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return string(b[1:i]), b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return "", nil, false
		}
	}
	return "", nil, false
}

// plainInt reads a small JSON integer at the start of b.
func plainInt(b []byte) (int, []byte, bool) {
	i, neg := 0, false
	if len(b) > 0 && b[0] == '-' {
		i, neg = 1, true
	}
	start, n := i, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && i-start < 9; i++ {
		n = 10*n + int(b[i]-'0')
	}
	if i == start || b[start] == '0' && i > start+1 || i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, nil, false
	}
	if neg {
		n = -n
	}
	return n, b[i:], true
}

// compact reports whether b has no white space outside its strings, as
// json.Compact leaves it.
func compact(b []byte) bool {
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			i = skipString(b, i)
			continue
		case ' ', '\t', '\r', '\n':
			return false
		}
		i++
	}
	return true
}

func (c *lineConn) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := c.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			return nil, fmt.Errorf("message longer than %d bytes", MaxLine)
		}
		line = append(line, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(bytes.TrimSpace(line)) > 0:
			return nil, fmt.Errorf("connection closed inside a message")
		case err != nil:
			return nil, err
		}
		return line, nil
	}
}

func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		c.wmu.Lock()
		c.closed = true
		c.wmu.Unlock()
		if c.closer != nil {
			err = c.closer()
		}
	})
	return err
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// Decode unmarshals m's payload into v after checking that every required
// key is present, so a peer that leaves out a REQUIRED key of RFC 27 or
// RFC 32 is caught by name instead of read as a zero value.
func Decode(m Message, v any, required ...string) error {
	if m.IsError() {
		return m.Err()
	}
	if m.Body != nil {
		// A typed message read as another type: as its JSON would be.
		var err error
		if m, err = m.Encoded(); err != nil {
			return err
		}
	}
	if len(m.Payload) == 0 {
		if len(required) > 0 {
			return fmt.Errorf("%s: payload is missing (want %s)", m.Topic, required[0])
		}
		return nil
	}
	// The payload is read once: the required keys are then looked for
	// in what is known to be valid JSON. Anything else (not an object,
	// not valid, not v's shape) is told by decodeChecked, in its words.
	if len(required) > 0 && !isObject(m.Payload) {
		return decodeChecked(m, v, required)
	}
	if err := json.Unmarshal(m.Payload, v); err != nil {
		if len(required) > 0 {
			return decodeChecked(m, v, required)
		}
		return fmt.Errorf("%s: %w", m.Topic, err)
	}
	if len(required) == 0 {
		return nil
	}
	for _, k := range required {
		if !hasKey(m.Payload, k) {
			return fmt.Errorf("%s: payload has no %q", m.Topic, k)
		}
	}
	return nil
}

// decodeChecked decodes a payload whose keys must include required,
// checking them first.
func decodeChecked(m Message, v any, required []string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(m.Payload, &keys); err != nil {
		return fmt.Errorf("%s: payload must be an object: %w", m.Topic, err)
	}
	for _, k := range required {
		if _, ok := keys[k]; !ok {
			return fmt.Errorf("%s: payload has no %q", m.Topic, k)
		}
	}
	if err := json.Unmarshal(m.Payload, v); err != nil {
		return fmt.Errorf("%s: %w", m.Topic, err)
	}
	return nil
}
