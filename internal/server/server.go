// Package server serves fluxsched's unix socket: the CLIs' requests, each
// answered on its own connection. Who is asking comes from the socket's
// peer credentials (SO_PEERCRED), never from the request. Reads run on
// store snapshots beside the loop; changes run inside the loop's turns.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/peercred"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Server answers the socket.
type Server struct {
	Store      *store.Store
	Loop       *loop.Loop
	JobsDir    string
	Owner      uint32 // the instance owner
	AllowGuest bool   // [access] allow-guest-user
	Log        *slog.Logger
	wg         sync.WaitGroup
	once       sync.Once
	t          *tracker
	// readTimeout replaces requestTimeout in tests.
	readTimeout time.Duration
}

// Listen creates the socket, replacing a stale one, private to the owner
// unless guests are allowed (ARCHITECTURE.md: 0600 by default).
func Listen(path string, allowGuest bool) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	old := unix.Umask(0o177)
	ln, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return nil, err
	}
	mode := os.FileMode(0o600)
	if allowGuest {
		mode = 0o666
	}
	if err := os.Chmod(path, mode); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Serve accepts connections until ctx ends, then closes them: those
// still sending their request at once, the others after shutdownGrace.
// A failing accept (out of descriptors) is retried, never the end.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	err := s.accept(ctx, ln)
	s.closeConns(false)
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		s.closeConns(true)
		<-done
	}
	return err
}

// accept runs until ctx ends. An accept that fails, as when fluxsched
// is out of descriptors (EMFILE, ENFILE), is tried again after a pause
// that grows to a second; a burst of failures is logged once, and once
// more when it ends.
func (s *Server) accept(ctx context.Context, ln net.Listener) error {
	var failed int
	var since time.Time
	pause := time.Duration(0)
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			if failed == 0 {
				since = time.Now()
				s.log().Error("cannot accept connections; retrying", "err", err)
			}
			failed++
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(pause):
			}
			continue
		}
		if failed > 0 {
			s.log().Warn("accepting connections again", "failed", failed, "for", time.Since(since).Round(time.Millisecond))
			failed, pause = 0, 0
		}
		uc := c.(*net.UnixConn)
		who, err := credentials(uc)
		if err != nil {
			s.log().Warn("cannot identify a caller", "err", err)
			uc.Close()
			continue
		}
		cn, why := s.admit(uc, who)
		if cn == nil {
			s.refuse(uc, who, why)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.forget(cn)
			s.serveConn(ctx, cn)
		}()
	}
}

// peer is who is calling.
type peer struct {
	uid uint32
	pid int32
}

func credentials(c *net.UnixConn) (peer, error) {
	cred, err := peercred.Of(c)
	if err != nil {
		return peer{}, err
	}
	return peer{uid: cred.Uid, pid: cred.Pid}, nil
}

func (s *Server) serveConn(ctx context.Context, cn *conn) {
	conn, who := cn.c, cn.who
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &writer{conn: conn}
	if who.uid != s.Owner && !s.AllowGuest {
		w.fail(fmt.Errorf("permission denied: the instance belongs to uid %d", s.Owner))
		return
	}
	guest := who.uid != s.Owner
	timeout := requestTimeout
	if s.readTimeout > 0 {
		timeout = s.readTimeout
	}
	conn.SetReadDeadline(time.Now().Add(timeout))
	line, done, err := s.readRequest(conn, guest)
	if err != nil {
		done()
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			w.fail(err)
		}
		return
	}
	var req client.Request
	err = json.Unmarshal(line, &req) // copies what it keeps
	size := len(line)
	line = nil
	done()
	if err != nil {
		w.fail(fmt.Errorf("bad request: %w", err))
		return
	}
	if size >= freeAfter {
		defer s.freeSoon()
	}
	// The request has arrived: streams may wait for as long as they
	// need from here. A caller that already gave up is not answered.
	conn.SetReadDeadline(time.Time{})
	if hungUp(conn) || !s.dispatching(cn) {
		return
	}
	// A client that hangs up ends its follow.
	go func() {
		buf := make([]byte, 1)
		conn.Read(buf)
		cancel()
	}()
	defer keepAlive(w, req)()
	s.dispatch(ctx, who, req, w)
}

// writer writes response lines.
type writer struct {
	mu    sync.Mutex
	conn  net.Conn
	final bool // the final line is written: nothing follows it
}

// send writes one line; a caller that does not take it within
// writeTimeout is given up on.
func (w *writer) send(r client.Response) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.final {
		return net.ErrClosed
	}
	w.final = r.Final
	w.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	return json.NewEncoder(w.conn).Encode(r)
}

// sendLine writes an encoded response line.
func (w *writer) sendLine(line []byte, final bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.final {
		return net.ErrClosed
	}
	w.final = final
	w.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := w.conn.Write(line)
	return err
}

func (w *writer) fail(err error) {
	w.send(client.Response{Error: err.Error(), Status: statusOf(err), Errno: client.Errno(err), Final: true})
}

func (w *writer) result(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		return
	}
	// The line json.Encoder would make of Response{Result: b, Final:
	// true}, without scanning b again: a listing of 100,000 jobs is
	// tens of megabytes.
	line := make([]byte, 0, len(b)+32)
	line = append(line, `{"result":`...)
	line = append(line, b...)
	line = append(line, ",\"final\":true}\n"...)
	w.sendLine(line, true)
}

func decode[T any](req client.Request) (T, error) {
	var v T
	if len(req.Params) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(req.Params, &v); err != nil {
		return v, fmt.Errorf("%s: bad parameters: %w", req.Method, err)
	}
	return v, nil
}

func (s *Server) dispatch(ctx context.Context, who peer, req client.Request, w *writer) {
	var err error
	switch req.Method {
	case client.MethodSubmit:
		err = s.submit(ctx, who, req, w)
	case client.MethodJobs:
		var q client.JobsQuery
		if q, err = decode[client.JobsQuery](req); err == nil {
			var out []state.Summary
			err = s.Store.View(func(tx *store.Tx) error {
				out, err = client.ListJobs(tx, who.uid, q)
				return err
			})
			if err == nil {
				w.result(out)
			}
		}
	case client.MethodJob:
		var p client.IDParams
		if p, err = decode[client.IDParams](req); err == nil {
			var info *client.JobInfo
			err = s.Store.View(func(tx *store.Tx) error {
				info, err = client.LoadJobInfo(tx, p.ID, s.JobsDir)
				if err == nil {
					err = s.mayRead(who, info.Summary.UserID)
				}
				return err
			})
			if err == nil {
				w.result(info)
			}
		}
	case client.MethodCancel:
		err = s.cancel(ctx, who, req, w)
	case client.MethodUrgency:
		var p client.UrgencyParams
		if p, err = decode[client.UrgencyParams](req); err == nil {
			_, err = s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
				return nil, jm.Urgency(tx, p.ID, who.uid, p.Urgency)
			})
			if err == nil {
				w.result(nil)
			}
		}
	case client.MethodEvents, client.MethodWait:
		err = s.follow(ctx, who, req, w)
	case client.MethodStats:
		var st *client.Stats
		err = s.Store.View(func(tx *store.Tx) error {
			st, err = client.CountJobs(tx)
			return err
		})
		if err == nil {
			w.result(st)
		}
	case client.MethodResources:
		var res *client.Resources
		err = s.Store.View(func(tx *store.Tx) error {
			res, err = client.LoadResources(tx)
			return err
		})
		if err == nil {
			w.result(res)
		}
	case client.MethodDrain, client.MethodUndrain:
		err = s.drain(ctx, who, req, w)
	case client.MethodQueues:
		var qi *client.QueueInfo
		if qi, err = s.queues(ctx); err == nil {
			w.result(qi)
		}
	case client.MethodQueueSet:
		err = s.changeQueues(ctx, who, req, w)
	case client.MethodQueueWait:
		err = s.waitQueues(ctx, req, w)
	case client.MethodReserve:
		err = s.reserve(ctx, who, req, w)
	case client.MethodReservations:
		err = s.reservations(req, w)
	case client.MethodToolEvents:
		err = s.toolEvents(ctx, who, req, w)
	case client.MethodSpareAdd, client.MethodNodeRemove:
		err = s.spares(ctx, who, req, w)
	default:
		err = fmt.Errorf("unknown method %q", req.Method)
	}
	if err != nil {
		w.fail(err)
	}
}

func (s *Server) submit(ctx context.Context, who peer, req client.Request, w *writer) error {
	p, err := decode[client.SubmitParams](req)
	if err != nil {
		return err
	}
	reqs := make([]state.SubmitRequest, len(p.Jobs))
	for i, j := range p.Jobs {
		reqs[i] = state.SubmitRequest{Jobspec: j.Jobspec, UserID: who.uid, Owner: who.uid == s.Owner, Urgency: j.Urgency}
	}
	// A plain submission is a tool's, and Submit names the tool only if
	// the job targets a reservation.
	if req.Job != "" || req.AsScheduler {
		me, err := s.identify(who, req)
		if err != nil {
			return err
		}
		for i := range reqs {
			reqs[i].Who = &me
		}
	}
	v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := state.Submit(tx, jm.Now(), reqs, jm.Reservations())
		if err != nil {
			return nil, err
		}
		return ids, jm.Submitted(tx, recs)
	})
	if err != nil {
		return err
	}
	w.result(v)
	return nil
}

func (s *Server) cancel(ctx context.Context, who peer, req client.Request, w *writer) error {
	p, err := decode[client.CancelParams](req)
	if err != nil {
		return err
	}
	msgs := make([]string, len(p.IDs))
	_, err = s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		for i, id := range p.IDs {
			if err := jm.Cancel(tx, id, who.uid, p.Note); err != nil {
				msgs[i] = err.Error()
			}
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	return w.send(client.Response{Errors: msgs, Final: true})
}

func (s *Server) drain(ctx context.Context, who peer, req client.Request, w *writer) error {
	if who.uid != s.Owner {
		return fmt.Errorf("permission denied: only the instance owner may drain or undrain")
	}
	p, err := decode[client.DrainParams](req)
	if err != nil {
		return err
	}
	_, err = s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		var err error
		if req.Method == client.MethodDrain {
			_, err = state.Drain(tx, p.Ranks, p.Reason, p.Force, jm.Now())
		} else {
			_, err = state.Undrain(tx, p.Ranks)
		}
		if err != nil {
			return nil, err
		}
		drained, err := state.Drained(tx)
		if err != nil {
			return nil, err
		}
		jm.SetDown(drained)
		return nil, nil
	})
	if err != nil {
		return err
	}
	w.result(nil)
	return nil
}

// follow streams a job's events (events, with follow) or waits for its
// end (wait), reading the store after every turn that posted events.
func (s *Server) follow(ctx context.Context, who peer, req client.Request, w *writer) error {
	p, err := decode[client.EventsParams](req)
	if err != nil {
		return err
	}
	err = s.Store.View(func(tx *store.Tx) error {
		owner, err := state.Owner(tx, p.ID)
		if err == nil {
			err = s.mayRead(who, owner)
		}
		return err
	})
	if err != nil {
		return err
	}
	wait := req.Method == client.MethodWait
	seen := 0
	for {
		changed := s.Loop.JobChanged(p.ID)
		var evs []eventlog.Event
		var done bool
		err := s.Store.View(func(tx *store.Tx) error {
			var err error
			if wait {
				done, err = client.Ended(tx, p.ID)
			} else {
				evs, done, err = client.NewEvents(tx, p.ID, seen)
			}
			return err
		})
		if err != nil {
			return err
		}
		seen += len(evs)
		if !wait {
			for i := range evs {
				if err := w.send(client.Response{Event: &evs[i]}); err != nil {
					return nil // the client is gone
				}
			}
		}
		if done || (!wait && !p.Follow) {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
	if !wait {
		w.result(nil)
		return nil
	}
	var sum *state.Summary
	err = s.Store.View(func(tx *store.Tx) error {
		var err error
		sum, err = client.EndSummary(tx, p.ID)
		return err
	})
	if err != nil {
		return err
	}
	w.result(sum)
	return nil
}

// do runs op in the loop, unless the caller hung up before its turn
// came: a request its client gave up on (--timeout) is not carried out
// behind its back.
func (s *Server) do(ctx context.Context, op func(tx *store.Tx, jm *jobmgr.Manager) (any, error)) (any, error) {
	return s.Loop.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return op(tx, jm)
	})
}

// streams are the methods whose answer may take as long as a job: their
// callers' --timeout bounds only the wait for the first line.
var streams = map[string]bool{
	client.MethodEvents: true, client.MethodWait: true,
	client.MethodQueueWait: true, client.MethodToolEvents: true,
}

// keepAlive shows a caller that gave its --timeout (the request's
// Timeout) that fluxsched is alive and at work on its request, so that
// the caller's bound is on fluxsched's silence, not on the work: a
// stream hears it once, at once; another request every quarter of the
// timeout until its answer. A stopped fluxsched says nothing, and its
// callers give up in time. Older clients, which give no timeout, would
// take the line for an answer: they hear none.
func keepAlive(w *writer, req client.Request) (stop func()) {
	if req.Timeout <= 0 {
		return func() {}
	}
	alive := client.Response{Working: true}
	if streams[req.Method] {
		w.send(alive)
		return func() {}
	}
	every := time.Duration(req.Timeout * float64(time.Second) / 4)
	t := time.NewTicker(min(max(every, 20*time.Millisecond), 2*time.Second))
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if w.send(alive) != nil {
					return
				}
			}
		}
	}()
	return func() {
		t.Stop()
		close(done)
	}
}

// errNotYours refuses a job's jobspec, eventlog and output to anyone but
// its owner and the instance owner, as Flux does (EPERM).
var errNotYours = errors.New("permission denied: only the job's owner and the instance owner may read it")

// mayRead says whether who may read the whole of a job of owner.
func (s *Server) mayRead(who peer, owner uint32) error {
	if who.uid == s.Owner || who.uid == owner {
		return nil
	}
	return errNotYours
}

// SocketPath is the socket of a state directory.
func SocketPath(stateDir string) string { return filepath.Join(stateDir, client.SocketFile) }

// queues reads the queues with the job manager's counts, which know the
// alloc requests outstanding.
func (s *Server) queues(ctx context.Context) (*client.QueueInfo, error) {
	v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		qi, err := client.LoadQueues(tx)
		if err != nil {
			return nil, err
		}
		return countQueues(qi, jm), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*client.QueueInfo), nil
}

func countQueues(qi *client.QueueInfo, jm *jobmgr.Manager) *client.QueueInfo {
	for _, name := range qi.Set.Names() {
		qi.Counts[name] = jm.Counts([]string{name})
	}
	return qi
}

func (s *Server) changeQueues(ctx context.Context, who peer, req client.Request, w *writer) error {
	if who.uid != s.Owner {
		return fmt.Errorf("permission denied: only the instance owner may change queue state")
	}
	c, err := decode[state.QueueChange](req)
	if err != nil {
		return err
	}
	v, err := s.do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		names, set, states, err := state.ChangeQueues(tx, c)
		if err != nil {
			return nil, err
		}
		jm.SetQueues(set, states)
		qi := client.NewQueueInfo(set, states)
		qi.Changed = names
		return countQueues(qi, jm), nil
	})
	if err != nil {
		return err
	}
	w.result(v)
	return nil
}

// waitQueues answers flux queue drain and idle: a progress line whenever
// the counts change, and the final counts once the wait is satisfied.
func (s *Server) waitQueues(ctx context.Context, req client.Request, w *writer) error {
	q, err := decode[client.QueueWait](req)
	if err != nil {
		return err
	}
	// Only a restart changes the configuration: the names are resolved
	// once, not at every turn the wait sees.
	var names []string
	err = s.Store.View(func(tx *store.Tx) error {
		set, err := state.QueueSet(tx)
		if err == nil {
			names, err = q.Names(set)
		}
		return err
	})
	if err != nil {
		return err
	}
	var last *client.QueueCounts
	for {
		changed := s.Loop.Changed()
		v, err := s.do(ctx, func(_ *store.Tx, jm *jobmgr.Manager) (any, error) {
			return jm.Counts(names), nil
		})
		if err != nil {
			return err
		}
		c := v.(client.QueueCounts)
		if q.Done(c) {
			w.result(c)
			return nil
		}
		if last == nil || *last != c {
			b, _ := json.Marshal(c)
			if err := w.send(client.Response{Progress: b}); err != nil {
				return nil // the client is gone
			}
			last = &c
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}
