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

	gojson "github.com/goccy/go-json"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/exec"
	"github.com/fluxq/fluxq/internal/inorder"
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

	// GuestMaxActive is [access] guest-max-active-jobs: the active jobs
	// a guest may hold (0: no cap).
	GuestMaxActive int
	// Output reads jobs' output from the exec agents of other machines,
	// when the launcher is one for them (nil: jobs run here, and their
	// output is in JobsDir).
	Output *exec.Outputs
}

// Listen creates the socket, replacing a stale one, private to the owner
// unless guests are allowed (docs/architecture.md: 0600 by default).
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
		w.fail(api.Errorf(api.CodePermission, "permission denied: the instance belongs to uid %d", s.Owner))
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
	var req api.Call
	err = json.Unmarshal(line, &req) // copies what it keeps
	size := len(line)
	line = nil
	done()
	if err != nil {
		w.fail(fmt.Errorf("bad request: %w", err))
		return
	}
	w.parts = req.Parts
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
	// parts: the caller takes a long listing in parts (api.Call.Parts).
	parts bool
}

// send writes one line; a caller that does not take it within
// writeTimeout is given up on.
func (w *writer) send(r api.Reply) error {
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
	w.send(api.Failure(err))
}

func (w *writer) result(v any) {
	if list, ok := v.([]api.JobSummary); ok && w.parts && len(list) > listChunk {
		w.resultInParts(list)
		return
	}
	// The line json.Encoder would make of Response{Result: v, Final:
	// true}, without scanning the result again: a listing of 100,000
	// jobs is tens of megabytes.
	line := append(make([]byte, 0, 64<<10), `{"result":`...)
	line, err := appendResult(line, v)
	if err != nil {
		w.fail(err)
		return
	}
	line = append(line, ",\"final\":true}\n"...)
	w.sendLine(line, true)
}

// listChunk is how many jobs of a long listing one goroutine encodes,
// and how many a part of it carries.
const listChunk = 8192

// resultInParts sends a long listing as api.Call.Parts says: a part line
// for each chunk but the last, then the final line with the last. The
// chunks are encoded on every core and each is sent as soon as those
// before it are, so the caller decodes the first while the rest are
// encoded; no line of the whole listing is made.
func (w *writer) resultInParts(list []api.JobSummary) {
	n := (len(list) + listChunk - 1) / listChunk
	// A caller gone: sendLine's error stops the workers at their next chunk.
	sendFailed := false
	err := inorder.Each(n, func(i int) ([]byte, error) {
		return gojson.Marshal(list[i*listChunk : min(len(list), (i+1)*listChunk)])
	}, func(i int, chunk []byte) error {
		var line []byte
		if i < n-1 {
			line = api.AppendPartLine(make([]byte, 0, len(chunk)+16), chunk)
		} else {
			line = append(make([]byte, 0, len(chunk)+32), `{"result":`...)
			line = append(append(line, chunk...), ",\"final\":true}\n"...)
		}
		if err := w.sendLine(line, i == n-1); err != nil {
			sendFailed = true
			return err
		}
		return nil
	})
	if err != nil && !sendFailed {
		w.fail(err) // an encoding's; a caller that is gone is told nothing
	}
}

// appendResult appends v's JSON to dst, with the faster encoder: a
// listing of 100,000 jobs took encoding/json 0.17 s of fluxsched's CPU
// (the client reads it with the decoder of the same package, socket.go).
// A long listing is encoded in chunks on every core, as its summaries
// were decoded (each summary stands alone), and the chunks joined.
func appendResult(dst []byte, v any) ([]byte, error) {
	list, ok := v.([]api.JobSummary)
	if !ok || len(list) <= listChunk {
		b, err := gojson.Marshal(v)
		return append(dst, b...), err
	}
	dst = append(dst, '[')
	err := inorder.Each((len(list)+listChunk-1)/listChunk, func(i int) ([]byte, error) {
		return gojson.Marshal(list[i*listChunk : min(len(list), (i+1)*listChunk)])
	}, func(i int, c []byte) error {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c[1:len(c)-1]...) // without the chunk's brackets
		return nil
	})
	if err != nil {
		return dst, err
	}
	return append(dst, ']'), nil
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

// keepAlive shows a caller that gave its --timeout (the request's
// Timeout) that fluxsched is alive and at work on its request, so that
// the caller's bound is on fluxsched's silence, not on the work: a
// stream hears it once, at once; another request every quarter of the
// timeout until its answer. A stopped fluxsched says nothing, and its
// callers give up in time. Older clients, which give no timeout, would
// take the line for an answer: they hear none.
func keepAlive(w *writer, req api.Call) (stop func()) {
	if req.Timeout <= 0 {
		return func() {}
	}
	alive := api.Reply{Working: true}
	if spec, _ := api.Lookup(req.Method); spec.Stream {
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

// SocketPath is the socket of a state directory.
func SocketPath(stateDir string) string { return filepath.Join(stateDir, state.SocketFile) }
