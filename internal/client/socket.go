package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
)

// socket talks to a running loop, one connection per call.
type socket struct {
	path        string
	timeout     time.Duration
	claim       string
	asScheduler bool
}

// maxResponse bounds one response line (a listing of 100,000 jobs fits).
const maxResponse = 1 << 30

// roundTrip sends one request and reads its answer: stream lines go to
// x.line, the final result is decoded into x.result. The timeout bounds
// fluxsched's silence: connecting, sending and the wait for the first
// line, then between two lines (fluxsched sends a sign of life while it
// works); a long stream (one that follows) is not bounded once answered.
func (s *socket) roundTrip(ctx context.Context, x *exchange) error {
	method := x.spec.Name
	long := x.spec.Stream
	if f, ok := x.params.(api.Following); ok {
		long = long && f.Following()
	}
	deadline := time.Now().Add(s.timeout)
	// Connect before encoding: with no loop serving, the store is the
	// way in, and a submission of 10,000 jobs is not encoded for nothing.
	conn, err := dial(ctx, s.path, deadline)
	if errors.Is(err, errNotServing) || errors.Is(err, ErrUnavailable) {
		return s.noAnswer(err, api.Spec{})
	}
	if errors.Is(err, ErrOwnersSocket) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer conn.Close()
	// A listing is taken in parts (api.Call.Parts), each decoded
	// beside the reading of the next.
	list, _ := x.result.(*[]api.JobSummary)
	var parts *partDecoder
	if list != nil {
		parts = &partDecoder{}
		defer parts.wait()
	}
	line, err := s.encode(method, x.params, parts != nil)
	if err != nil {
		return err
	}
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	// A request fluxsched refuses (too large, too many connections) is
	// answered with why before it hangs up: read that even when the
	// write failed.
	_, werr := conn.Write(line)
	if werr != nil && isTimeout(werr) && ctx.Err() == nil {
		return s.noAnswer(werr, x.spec)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		raw, err := readLine(r)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case isTimeout(err):
				return s.noAnswer(err, x.spec)
			case werr != nil:
				return fmt.Errorf("%w: %v", ErrUnavailable, werr)
			case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
				return fmt.Errorf("%w: the instance closed the connection", ErrUnavailable)
			}
			return err
		}
		// fluxsched is alive: a stream lasts as long as it needs to
		// from here, another request has the timeout again.
		if long {
			conn.SetDeadline(time.Time{})
		} else {
			conn.SetDeadline(time.Now().Add(s.timeout))
		}
		if ctx.Err() != nil {
			conn.SetDeadline(time.Unix(1, 0))
		}
		if part, ok := api.PartOf(raw); ok && parts != nil {
			parts.add(part)
			continue
		}
		var resp api.Reply
		if err := decodeReply(raw, &resp); err != nil {
			return fmt.Errorf("bad response from the instance: %w", err)
		}
		if resp.Working {
			continue
		}
		if resp.Event != nil || len(resp.Progress) > 0 {
			if err := x.line(&resp); err != nil {
				return err
			}
			continue
		}
		if err := resp.Err(); err != nil {
			return err
		}
		if parts != nil && len(parts.parts) > 0 {
			if len(resp.Result) > 0 {
				parts.add(resp.Result)
			}
			return parts.into(list)
		}
		if x.result != nil && len(resp.Result) > 0 {
			// The faster decoder, as for the reply around it: a listing
			// of 100,000 jobs is 50 MB of JSON, 0.56 s of encoding/json.
			if err := gojson.Unmarshal(resp.Result, x.result); err != nil {
				return fmt.Errorf("bad response from the instance: %w", err)
			}
		}
		return nil
	}
}

// noAnswer is the error of a call whose timeout passed: sent is the
// entry of the request sent, empty if none was.
func (s *socket) noAnswer(err error, sent api.Spec) error {
	if !isTimeout(err) && !errors.Is(err, ErrUnavailable) {
		return err
	}
	return &NoAnswerError{Timeout: s.timeout, Sent: sent.Name != "" && !sent.ReadOnly}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// NoAnswerError: fluxsched took the connection but did not answer within
// the timeout (stopped, or swamped). It is an ErrUnavailable (exit 69).
type NoAnswerError struct {
	Timeout time.Duration
	// Sent: a request that changes something was sent, and may yet be
	// carried out.
	Sent bool
}

func (e *NoAnswerError) Error() string {
	msg := "fluxsched did not answer within " + strconv.FormatFloat(e.Timeout.Seconds(), 'f', -1, 64) + "s"
	if e.Sent {
		msg += " (the request may still be carried out)"
	}
	return msg
}

func (e *NoAnswerError) Is(target error) bool { return target == ErrUnavailable }

// partDecoder decodes the parts of a listing as they arrive, each on a
// goroutine of its own (at most one a core), in order once joined.
type partDecoder struct {
	wg    sync.WaitGroup
	sem   chan struct{}
	parts []*decodedPart
}

type decodedPart struct {
	jobs []api.JobSummary
	err  error
}

// add decodes one part (a JSON array of jobs) beside the caller.
func (d *partDecoder) add(part []byte) {
	if d.sem == nil {
		d.sem = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	p := &decodedPart{}
	d.parts = append(d.parts, p)
	d.wg.Add(1)
	d.sem <- struct{}{}
	go func() {
		defer func() { <-d.sem; d.wg.Done() }()
		p.err = gojson.Unmarshal(part, &p.jobs)
	}()
}

// wait waits for the parts being decoded.
func (d *partDecoder) wait() { d.wg.Wait() }

// into puts the parts, in order, in list.
func (d *partDecoder) into(list *[]api.JobSummary) error {
	d.wait()
	n := 0
	for _, p := range d.parts {
		if p.err != nil {
			return fmt.Errorf("bad response from the instance: %w", p.err)
		}
		n += len(p.jobs)
	}
	all := make([]api.JobSummary, 0, n)
	for _, p := range d.parts {
		all = append(all, p.jobs...)
	}
	*list = all
	return nil
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxResponse {
			return nil, fmt.Errorf("response longer than %d bytes", maxResponse)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		return line, nil
	}
}

// encode makes the request line of a call. Params are encoded once and
// put in the line as they are: json.Marshal would scan and copy them a
// second time as a json.RawMessage.
func (s *socket) encode(method string, params any, parts bool) ([]byte, error) {
	line, err := json.Marshal(api.Call{Method: method, Job: s.claim, AsScheduler: s.asScheduler, Timeout: s.timeout.Seconds(), Parts: parts})
	if err != nil {
		return nil, err
	}
	if _, none := params.(api.None); params == nil || none {
		return append(line, '\n'), nil
	}
	var p []byte
	if sp, ok := params.(api.SubmitParams); ok {
		p, err = encodeSubmit(sp)
	} else {
		p, err = json.Marshal(params)
	}
	if err != nil {
		return nil, err
	}
	// The object is never empty: it has its method.
	line = append(line[:len(line)-1], `,"params":`...)
	line = append(line, p...)
	return append(line, '}', '\n'), nil
}

// encodeSubmit writes a submission with each jobspec as it is: the jobspecs
// are most of a large submission's bytes, and already JSON. One that is
// not valid JSON on one line is left to json.Marshal, to be refused in
// its words.
func encodeSubmit(p api.SubmitParams) ([]byte, error) {
	n := 16
	for _, j := range p.Jobs {
		if len(j.Jobspec) == 0 || bytes.IndexByte(j.Jobspec, '\n') >= 0 || !json.Valid(j.Jobspec) {
			return json.Marshal(p)
		}
		n += len(j.Jobspec) + 32
	}
	b := make([]byte, 0, n)
	b = append(b, `{"jobs":[`...)
	for i, j := range p.Jobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"jobspec":`...)
		b = append(b, j.Jobspec...)
		b = append(b, `,"urgency":`...)
		b = strconv.AppendInt(b, int64(j.Urgency), 10)
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

// decodeReply decodes one line of fluxsched's answer: the server's own
// encoding, read for every line of a stream (a wait --all's thousands),
// so the faster decoder.
func decodeReply(raw []byte, resp *api.Reply) error {
	return gojson.Unmarshal(raw, resp)
}
