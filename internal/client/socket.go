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
	"strconv"
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/state"
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

// stream receives the lines of an answer before its final one. A long
// stream (a follow, a wait) is bounded by the timeout only until its
// first line.
type stream struct {
	event    func(eventlog.Event) error
	progress func(json.RawMessage) error
	long     bool
}

// call sends one request and reads its answer; st receives stream lines.
// The final result is decoded into result when not nil. The timeout
// bounds fluxsched's silence: connecting, sending and the wait for the
// first line, then between two lines (fluxsched sends a sign of life
// while it works); a long stream is not bounded once answered.
func (s *socket) call(ctx context.Context, method string, params any, result any, st *stream) (*Response, error) {
	deadline := time.Now().Add(s.timeout)
	// Connect before encoding: with no loop serving, the store is the
	// way in, and a submission of 10,000 jobs is not encoded for nothing.
	conn, err := dial(ctx, s.path, deadline)
	if errors.Is(err, errNotServing) || errors.Is(err, ErrUnavailable) {
		return nil, s.noAnswer(err, "")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer conn.Close()
	line, err := s.encode(method, params)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	// A request fluxsched refuses (too large, too many connections) is
	// answered with why before it hangs up: read that even when the
	// write failed.
	_, werr := conn.Write(line)
	if werr != nil && isTimeout(werr) && ctx.Err() == nil {
		return nil, s.noAnswer(werr, method)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		raw, err := readLine(r)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case isTimeout(err):
				return nil, s.noAnswer(err, method)
			case werr != nil:
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, werr)
			case errors.Is(err, io.EOF):
				return nil, fmt.Errorf("%w: the instance closed the connection", ErrUnavailable)
			}
			return nil, err
		}
		// fluxsched is alive: a stream lasts as long as it needs to
		// from here, another request has the timeout again.
		if st != nil && st.long {
			conn.SetDeadline(time.Time{})
		} else {
			conn.SetDeadline(time.Now().Add(s.timeout))
		}
		if ctx.Err() != nil {
			conn.SetDeadline(time.Unix(1, 0))
		}
		var resp Response
		if err := json.Unmarshal(raw, &resp); err != nil {
			return nil, fmt.Errorf("bad response from the instance: %w", err)
		}
		if resp.Working {
			continue
		}
		if resp.Event != nil {
			if st != nil && st.event != nil {
				if err := st.event(*resp.Event); err != nil {
					return nil, err
				}
			}
			continue
		}
		if len(resp.Progress) > 0 {
			if st != nil && st.progress != nil {
				if err := st.progress(resp.Progress); err != nil {
					return nil, err
				}
			}
			continue
		}
		if resp.Error != "" {
			if resp.Status != 0 {
				msg := strings.TrimPrefix(resp.Error, reservation.Status(resp.Status).String()+": ")
				return &resp, &reservation.Error{Status: reservation.Status(resp.Status), Msg: msg}
			}
			return &resp, remoteError(resp.Error, resp.Errno)
		}
		if result != nil && len(resp.Result) > 0 {
			if err := json.Unmarshal(resp.Result, result); err != nil {
				return nil, fmt.Errorf("bad response from the instance: %w", err)
			}
		}
		return &resp, nil
	}
}

// noAnswer is the error of a call whose timeout passed: method is the
// request sent, "" if none was.
func (s *socket) noAnswer(err error, method string) error {
	if !isTimeout(err) && !errors.Is(err, ErrUnavailable) {
		return err
	}
	return &NoAnswerError{Timeout: s.timeout, Sent: method != "" && !readOnly[method]}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// readOnly are the methods that change nothing: giving up on them
// leaves nothing in doubt.
var readOnly = map[string]bool{
	MethodJobs: true, MethodJob: true, MethodEvents: true, MethodWait: true,
	MethodStats: true, MethodResources: true, MethodQueues: true,
	MethodQueueWait: true, MethodReservations: true, MethodToolEvents: true,
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

func (s *socket) Submit(ctx context.Context, jobs []SubmitJob) ([]fluid.ID, error) {
	var ids []fluid.ID
	_, err := s.call(ctx, MethodSubmit, SubmitParams{Jobs: jobs}, &ids, nil)
	return ids, err
}

func (s *socket) Jobs(ctx context.Context, q JobsQuery) ([]state.Summary, error) {
	var out []state.Summary
	_, err := s.call(ctx, MethodJobs, q, &out, nil)
	return out, err
}

func (s *socket) Job(ctx context.Context, id fluid.ID) (*JobInfo, error) {
	var info JobInfo
	if _, err := s.call(ctx, MethodJob, IDParams{ID: id}, &info, nil); err != nil {
		return nil, err
	}
	return &info, nil
}

func (s *socket) Cancel(ctx context.Context, ids []fluid.ID, note string) ([]error, error) {
	resp, err := s.call(ctx, MethodCancel, CancelParams{IDs: ids, Note: note}, nil, nil)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(ids))
	for i := range ids {
		if i < len(resp.Errors) && resp.Errors[i] != "" {
			errs[i] = errors.New(resp.Errors[i])
		}
	}
	return errs, nil
}

func (s *socket) Urgency(ctx context.Context, id fluid.ID, urgency int) error {
	_, err := s.call(ctx, MethodUrgency, UrgencyParams{ID: id, Urgency: urgency}, nil, nil)
	return err
}

func (s *socket) Events(ctx context.Context, id fluid.ID, follow bool, fn func(eventlog.Event) error) error {
	_, err := s.call(ctx, MethodEvents, EventsParams{ID: id, Follow: follow}, nil, &stream{event: fn, long: follow})
	return err
}

func (s *socket) Wait(ctx context.Context, id fluid.ID) (*state.Summary, error) {
	var sum state.Summary
	if _, err := s.call(ctx, MethodWait, IDParams{ID: id}, &sum, &stream{long: true}); err != nil {
		return nil, err
	}
	return &sum, nil
}

func (s *socket) Stats(ctx context.Context) (*Stats, error) {
	var st Stats
	_, err := s.call(ctx, MethodStats, nil, &st, nil)
	return &st, err
}

func (s *socket) Resources(ctx context.Context) (*Resources, error) {
	var res Resources
	_, err := s.call(ctx, MethodResources, nil, &res, nil)
	return &res, err
}

func (s *socket) Drain(ctx context.Context, ranks, reason string, force bool) error {
	_, err := s.call(ctx, MethodDrain, DrainParams{Ranks: ranks, Reason: reason, Force: force}, nil, nil)
	return err
}

func (s *socket) Undrain(ctx context.Context, ranks string) error {
	_, err := s.call(ctx, MethodUndrain, DrainParams{Ranks: ranks}, nil, nil)
	return err
}

func (s *socket) Close() error { return nil }

// encode makes the request line of a call. Params are encoded once and
// put in the line as they are: json.Marshal would scan and copy them a
// second time as a json.RawMessage.
func (s *socket) encode(method string, params any) ([]byte, error) {
	line, err := json.Marshal(Request{Method: method, Job: s.claim, AsScheduler: s.asScheduler, Timeout: s.timeout.Seconds()})
	if err != nil {
		return nil, err
	}
	if params == nil {
		return append(line, '\n'), nil
	}
	var p []byte
	if sp, ok := params.(SubmitParams); ok {
		p, err = sp.encode()
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

// encode writes a submission with each jobspec as it is: the jobspecs
// are most of a large submission's bytes, and already JSON. One that is
// not valid JSON on one line is left to json.Marshal, to be refused in
// its words.
func (p SubmitParams) encode() ([]byte, error) {
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
