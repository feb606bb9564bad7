// Package server serves fluxsched's unix socket: the CLIs' requests, each
// answered on its own connection. Who is asking comes from the socket's
// peer credentials (SO_PEERCRED), never from the request. Reads run on
// store snapshots beside the loop; changes run inside the loop's turns.
package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/ops"
	"github.com/fluxq/fluxq/internal/store"
)

// maxRequest bounds one request line: 10,000 jobspecs of a --cc fit.
const maxRequest = 256 << 20

// Server answers the socket.
type Server struct {
	Store      *store.Store
	Loop       *loop.Loop
	JobsDir    string
	Owner      uint32 // the instance owner
	AllowGuest bool   // [access] allow-guest-user
	Log        *slog.Logger
	wg         sync.WaitGroup
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

// Serve accepts connections until ctx ends, then waits for the open ones.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	defer s.wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, conn.(*net.UnixConn))
		}()
	}
}

// peer is who is calling.
type peer struct {
	uid uint32
	pid int32
}

func credentials(c *net.UnixConn) (peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return peer{}, err
	}
	var cred *unix.Ucred
	var cerr error
	err = raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err != nil {
		return peer{}, err
	}
	if cerr != nil {
		return peer{}, cerr
	}
	return peer{uid: cred.Uid, pid: cred.Pid}, nil
}

func (s *Server) serveConn(ctx context.Context, conn *net.UnixConn) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &writer{enc: json.NewEncoder(conn)}
	who, err := credentials(conn)
	if err != nil {
		w.fail(fmt.Errorf("cannot identify the caller: %w", err))
		return
	}
	if who.uid != s.Owner && !s.AllowGuest {
		w.fail(fmt.Errorf("permission denied: the instance belongs to uid %d", s.Owner))
		return
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxRequest {
			w.fail(fmt.Errorf("request longer than %d bytes", maxRequest))
			return
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return
		}
		break
	}
	var req client.Request
	if err := json.Unmarshal(line, &req); err != nil {
		w.fail(fmt.Errorf("bad request: %w", err))
		return
	}
	// A client that hangs up ends its follow.
	go func() {
		buf := make([]byte, 1)
		conn.Read(buf)
		cancel()
	}()
	s.dispatch(ctx, who, req, w)
}

// writer writes response lines.
type writer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (w *writer) send(r client.Response) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enc.Encode(r)
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
	w.send(client.Response{Result: b, Final: true})
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
			var out []ops.Summary
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
			_, err = s.Loop.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
				return nil, jm.Urgency(tx, p.ID, who.uid, p.Urgency)
			})
			if err == nil {
				w.result(nil)
			}
		}
	case client.MethodEvents, client.MethodWait:
		err = s.follow(ctx, req, w)
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
	reqs := make([]ops.SubmitRequest, len(p.Jobs))
	for i, j := range p.Jobs {
		reqs[i] = ops.SubmitRequest{Jobspec: j.Jobspec, UserID: who.uid, Owner: who.uid == s.Owner, Urgency: j.Urgency}
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
	v, err := s.Loop.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := ops.Submit(tx, jm.Now(), reqs, jm.Reservations())
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
	_, err = s.Loop.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
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
	_, err = s.Loop.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		var err error
		if req.Method == client.MethodDrain {
			_, err = ops.Drain(tx, p.Ranks, p.Reason, p.Force, jm.Now())
		} else {
			_, err = ops.Undrain(tx, p.Ranks)
		}
		if err != nil {
			return nil, err
		}
		drained, err := ops.Drained(tx)
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
func (s *Server) follow(ctx context.Context, req client.Request, w *writer) error {
	p, err := decode[client.EventsParams](req)
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
			evs, done, err = client.NewEvents(tx, p.ID, seen)
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
	var sum *ops.Summary
	err = s.Store.View(func(tx *store.Tx) error {
		info, err := client.LoadJobInfo(tx, p.ID, "")
		if err == nil {
			sum = &info.Summary
		}
		return err
	})
	if err != nil {
		return err
	}
	w.result(sum)
	return nil
}

// SocketPath is the socket of a state directory.
func SocketPath(stateDir string) string { return filepath.Join(stateDir, client.SocketFile) }

// queues reads the queues with the job manager's counts, which know the
// alloc requests outstanding.
func (s *Server) queues(ctx context.Context) (*client.QueueInfo, error) {
	v, err := s.Loop.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
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
	c, err := decode[ops.QueueChange](req)
	if err != nil {
		return err
	}
	v, err := s.Loop.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		names, set, states, err := ops.ChangeQueues(tx, c)
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
		set, err := ops.QueueSet(tx)
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
		v, err := s.Loop.Do(ctx, func(_ *store.Tx, jm *jobmgr.Manager) (any, error) {
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
