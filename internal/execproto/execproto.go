// Package execproto is RFC 32, the job execution protocol between the job
// manager and an exec service: its topics, and its payloads as Go types
// whose JSON keys are exactly the RFC's.
//
// Beyond the RFC: a start request carries the job's R under "R" (an exec
// service here has no KVS to read it from), and two notifications,
// <service>.exception and <service>.kill, tell the exec service about a
// job's fatal exception and ask it to signal a job; flux-core carries the
// same information in its job-exception event and job-exec.kill RPC.
package execproto

import (
	"fmt"
	"math"
	"sync"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// TopicHello is the exec service's registration with the job manager.
const TopicHello = "job-manager.exec-hello"

// Topic returns the topic of a method of the named exec service.
// The topics of the services seen are kept (up to maxTopics), so that the
// job manager's messages, one or more for every job, do not each make one.
func Topic(service, method string) string {
	k := [2]string{service, method}
	topics.mu.RLock()
	t, ok := topics.m[k]
	topics.mu.RUnlock()
	if ok {
		return t
	}
	t = service + "." + method
	topics.mu.Lock()
	if len(topics.m) < maxTopics {
		topics.m[k] = t
	}
	topics.mu.Unlock()
	return t
}

const maxTopics = 256

var topics = struct {
	mu sync.RWMutex
	m  map[[2]string]string
}{m: map[[2]string]string{}}

// Methods of an exec service.
const (
	MethodStart     = "start"
	MethodException = "exception"
	MethodKill      = "kill"
	// MethodExpiration is a notification from the job manager: a running
	// job's time limit changed (fluxq update duration=), and its R's
	// expiration with it. It goes beyond RFC 32, whose exec service reads
	// the expiration from R once, at the start.
	MethodExpiration = "expiration"
	// MethodAck is a notification from the job manager: it has committed
	// these jobs' final releases, so the exec service (and the agent
	// holding them) may forget their ends.
	MethodAck = "ack"
)

// Hello is the exec-hello request.
type Hello struct {
	Service string `json:"service"`
	// Ended are jobs whose end the exec service holds and the job
	// manager has not acknowledged. The job manager acknowledges at once
	// those it will not take back (they are no longer active, or their
	// final release is committed), and takes the others back with a
	// start request, whose stream then reports their end.
	Ended []fluid.ID `json:"ended,omitempty"`
}

// Start is the <service>.start request.
type Start struct {
	ID       fluid.ID        `json:"id"`
	UserID   uint32          `json:"userid"`
	Jobspec  json.RawMessage `json:"jobspec"`
	Reattach bool            `json:"reattach"`
	R        json.RawMessage `json:"R,omitempty"`
}

// Response types of <service>.start.
const (
	TypeStart     = "start"
	TypeRelease   = "release"
	TypeException = "exception"
	TypeFinish    = "finish"
)

// Response is one <service>.start response.
type Response struct {
	ID   fluid.ID        `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
	// Value is the data as the value it was built from (Release,
	// Exception, Finish; nil for {}), in a response that stays in the
	// process (NewTypedResponse) in place of Data: Data is encoded from it
	// only if the response leaves (MarshalJSON).
	Value any `json:"-"`
}

// MarshalJSON encodes r, with Data encoded from Value when Data is not
// set: a typed response leaves the process as NewResponse's would.
func (r Response) MarshalJSON() ([]byte, error) {
	type plain Response // the same keys, without this method
	if len(r.Data) == 0 {
		v := r.Value
		if v == nil {
			v = struct{}{}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		r.Data = b
	}
	return json.Marshal(plain(r))
}

// Release is the data of a release response.
type Release struct {
	Ranks string `json:"ranks"` // an idset, or "all"
	Final bool   `json:"final"`
}

// Exception is the data of an exception response.
type Exception struct {
	Severity int    `json:"severity"`
	Type     string `json:"type"`
	Note     string `json:"note,omitempty"`
}

// ExceptionNotice is the <service>.exception notification: a job got a
// fatal exception and its tasks must end.
type ExceptionNotice struct {
	ID       fluid.ID `json:"id"`
	Severity int      `json:"severity"`
	Type     string   `json:"type"`
	Note     string   `json:"note,omitempty"`
}

// Finish is the data of a finish response: RFC 32's status, and what the
// job's processes consumed when the exec service measured it. Timestamp,
// when given, is when the processes ended (seconds since the epoch): an
// end may reach the job manager long after (a journal that could not be
// written, a fluxsched that was down), and the finish event, and so the
// job's run time, are the processes' own.
type Finish struct {
	Status    int     `json:"status"`
	Usage     *Usage  `json:"usage,omitempty"`
	Timestamp float64 `json:"timestamp,omitempty"`
}

// Usage is what a job's processes consumed, from the wait (rusage) of its
// tasks or from the job's cgroup, as sacct reports it.
type Usage struct {
	UserCPU float64 `json:"user_cpu"` // seconds
	SysCPU  float64 `json:"sys_cpu"`  // seconds
	MaxRSS  int64   `json:"max_rss"`  // bytes: the largest resident set of any one process
}

// Ack is the <service>.ack notification.
type Ack struct {
	IDs []fluid.ID `json:"ids"`
}

// Kill is the <service>.kill request: send a signal to the job's tasks.
type Kill struct {
	ID     fluid.ID `json:"id"`
	Signal int      `json:"signal"`
}

// Expiration is the <service>.expiration notification: the job's new
// time limit, as R's expiration (seconds since the epoch).
type Expiration struct {
	ID         fluid.ID `json:"id"`
	Expiration float64  `json:"expiration"`
}

// DecodeExpiration reads an expiration notification; an expiration that
// is not a time after the epoch is refused.
func DecodeExpiration(m wire.Message) (Expiration, error) {
	var e Expiration
	if err := wire.Decode(m, &e, "id", "expiration"); err != nil {
		return e, err
	}
	if !(e.Expiration > 0) || math.IsInf(e.Expiration, 0) {
		return e, fmt.Errorf("expiration %v is not a time", e.Expiration)
	}
	return e, nil
}

// NewResponse builds a <service>.start response with typed data.
// NewTypedResponse is NewResponse for an exec service in the job
// manager's process (fluxsched sim's): the response and its data stay
// values (wire.NewTypedResponse), decoded as they are by DecodeResponse
// and encoded only if they leave the process. data is a Release,
// Exception or Finish, or nil for a start.
func NewTypedResponse(service string, id fluid.ID, typ string, data any) wire.Message {
	return wire.NewTypedResponse(Topic(service, MethodStart), Response{ID: id, Type: typ, Value: data})
}

func NewResponse(service string, id fluid.ID, typ string, data any) (wire.Message, error) {
	if data == nil {
		data = struct{}{}
	}
	b, err := json.Marshal(data)
	if err != nil {
		return wire.Message{}, err
	}
	return wire.NewResponse(Topic(service, MethodStart), Response{ID: id, Type: typ, Data: b})
}

// DecodeHello reads an exec-hello request.
func DecodeHello(m wire.Message) (Hello, error) {
	h, err := wire.DecodeTyped[Hello](m, keysHello...)
	if err != nil {
		return h, err
	}
	if h.Service == "" {
		return h, fmt.Errorf("%s: service name is empty", m.Topic)
	}
	return h, nil
}

// DecodeStart reads a start request.
func DecodeStart(m wire.Message) (Start, error) {
	return wire.DecodeTyped[Start](m, keysStart...)
}

// DecodeResponse reads a start response and its data by type, returning
// the data as *Release, *Exception, *Finish, or nil for start.
func DecodeResponse(m wire.Message) (Response, any, error) {
	if r, ok := m.Body.(Response); ok && len(r.Data) == 0 && !m.IsError() {
		if d, ok := typedData(r); ok {
			return r, d, checkData(m.Topic, d)
		}
	}
	r, err := wire.DecodeTyped[Response](m, keysResponse...)
	if err != nil {
		return r, nil, err
	}
	if len(r.Data) == 0 {
		// A typed response whose value is not its type's: as its JSON
		// would be read.
		enc, err := m.Encoded()
		if err != nil {
			return r, nil, err
		}
		return DecodeResponse(enc)
	}
	if r.Type == TypeStart {
		if !wire.IsObject(r.Data) {
			return r, nil, fmt.Errorf("%s: start data must be an object", m.Topic)
		}
		return r, nil, nil
	}
	// The data's own topic names the type, for its errors.
	dm := wire.Message{Topic: m.Topic + " " + r.Type, Type: wire.Response, Payload: r.Data}
	switch r.Type {
	case TypeRelease:
		var d Release
		if err := wire.Decode(dm, &d, "ranks", "final"); err != nil {
			return r, nil, err
		}
		return r, &d, nil
	case TypeException:
		var d Exception
		if err := wire.Decode(dm, &d, "severity", "type"); err != nil {
			return r, nil, err
		}
		if d.Severity < 0 || d.Severity > 7 {
			return r, nil, fmt.Errorf("%s: exception severity %d is not 0-7", m.Topic, d.Severity)
		}
		return r, &d, nil
	case TypeFinish:
		var d Finish
		if err := wire.Decode(dm, &d, "status"); err != nil {
			return r, nil, err
		}
		return r, &d, nil
	}
	return r, nil, fmt.Errorf("%s: unknown response type %q", m.Topic, r.Type)
}

// DecodeException reads a <service>.exception notification.
// typedData is a typed response's data as DecodeResponse returns it,
// false when its Value is not of its type's data.
func typedData(r Response) (any, bool) {
	switch v := r.Value.(type) {
	case nil:
		return nil, r.Type == TypeStart
	case Release:
		return &v, r.Type == TypeRelease
	case Exception:
		return &v, r.Type == TypeException
	case Finish:
		return &v, r.Type == TypeFinish
	}
	return nil, false
}

// checkData is what DecodeResponse checks of data beyond its keys.
func checkData(topic string, d any) error {
	if x, ok := d.(*Exception); ok && (x.Severity < 0 || x.Severity > 7) {
		return fmt.Errorf("%s: exception severity %d is not 0-7", topic, x.Severity)
	}
	return nil
}

func DecodeException(m wire.Message) (ExceptionNotice, error) {
	var e ExceptionNotice
	return e, wire.Decode(m, &e, "id", "severity", "type")
}

// DecodeAck reads a <service>.ack notification.
func DecodeAck(m wire.Message) (Ack, error) {
	var a Ack
	return a, wire.Decode(m, &a, "ids")
}

// DecodeKill reads a <service>.kill request.
func DecodeKill(m wire.Message) (Kill, error) {
	var k Kill
	return k, wire.Decode(m, &k, "id", "signal")
}

// TopicHostDrain is a notification beyond RFC 32, from the exec service
// to the job manager, never answered: a host's agent cannot be reached
// (Drain, with the launcher's own words), or answers again (not Drain).
// The job manager's loop drains or undrains the host through the drain
// write of internal/writes, so the scheduler places nothing on a host
// that cannot start it.
const TopicHostDrain = "job-manager.exec-host-drain"

// HostDrain is TopicHostDrain's payload.
type HostDrain struct {
	Host   string `json:"host"`
	Drain  bool   `json:"drain"`
	Reason string `json:"reason,omitempty"`
}

// The keys each message must have, made once: a variadic list at each
// call is an allocation for every message decoded.
var (
	keysHello    = []string{"service"}
	keysStart    = []string{"id", "userid", "jobspec", "reattach"}
	keysResponse = []string{"id", "type", "data"}
)
