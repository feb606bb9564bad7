package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/connlimit"
	"github.com/fluxq/fluxq/internal/state"
)

// flaky fails its first accepts as a process out of descriptors does.
type flaky struct {
	net.Listener
	fails int
}

func (l *flaky) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// syncBuffer is a log a test reads while the server writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// serve starts s on a fresh socket and returns its path and a stop that
// waits for Serve and returns its error.
func serve(t *testing.T, s *Server, fails int) (string, func() error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := Listen(path, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, &flaky{Listener: ln, fails: fails}) }()
	stop := func() error {
		cancel()
		select {
		case err := <-served:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return within 10s of its context's end")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	return path, stop
}

// answer sends line (no newline added) and reads the answer's first
// line, or fails after 5s.
func answer(t *testing.T, path, line string) string {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	return got
}

// Issue 13: running out of descriptors made accept fail and Serve return,
// silently, for good. It must pause, log the burst once, and go on.
func TestServeSurvivesAcceptErrors(t *testing.T) {
	var log syncBuffer
	// Not the owner, no guests: every caller is answered at once
	// without the store.
	s := &Server{Owner: uint32(os.Getuid()) + 1, Log: slog.New(slog.NewTextHandler(&log, nil))}
	path, stop := serve(t, s, 5)
	got := answer(t, path, "")
	if !strings.Contains(got, "permission denied") {
		t.Errorf("answer = %q, want permission denied", got)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if n := strings.Count(log.String(), "cannot accept connections; retrying"); n != 1 {
		t.Errorf("burst logged %d times, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "accepting connections again") || !strings.Contains(log.String(), "failed=5") {
		t.Errorf("log does not say the burst ended after 5 failures:\n%s", log.String())
	}
}

// Issue 13: a request must arrive whole in a bounded time.
func TestRequestDeadline(t *testing.T) {
	s := &Server{Owner: uint32(os.Getuid()), readTimeout: 100 * time.Millisecond}
	path, stop := serve(t, s, 0)
	got := answer(t, path, `{"method":"st`)
	if !strings.Contains(got, "request not received whole in time") {
		t.Errorf("answer = %q", got)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// Issue 13: a half-sent request held shutdown (and the store) until its
// sender left. Serve closes it and returns.
func TestShutdownClosesConnections(t *testing.T) {
	s := &Server{Owner: uint32(os.Getuid())}
	path, stop := serve(t, s, 0)
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(`{"method":"st`)); err != nil {
		t.Fatal(err)
	}
	// The server has the connection once it counts it.
	for i := 0; ; i++ {
		s.tracker().mu.Lock()
		n := len(s.t.conns)
		s.tracker().mu.Unlock()
		if n == 1 {
			break
		}
		if i > 500 {
			t.Fatal("the connection was never accepted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve = %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("connection still open after shutdown: read = %v", err)
	}
}

// Issue 13: a caller over its cap is refused at once, with why; the
// instance owner still has room.
func TestConnectionCaps(t *testing.T) {
	s := &Server{Owner: 0}
	caps := s.tracker().Caps()
	caps.Conns, caps.GuestConns, caps.PerGuest = 4, 3, 2
	s.tracker().SetCaps(caps)
	guest := peer{uid: 1000}
	var admitted []*conn
	for range 2 {
		cn, why := s.admit(nil, guest)
		if cn == nil {
			t.Fatalf("refused a guest under its cap: %s", why)
		}
		admitted = append(admitted, cn)
	}
	if cn, why := s.admit(nil, guest); cn != nil || !strings.Contains(why, "too many connections from uid 1000 (2 open)") {
		t.Errorf("third connection of uid 1000: %v, %q", cn, why)
	}
	other, _ := s.admit(nil, peer{uid: 1001})
	if cn, why := s.admit(nil, peer{uid: 1002}); cn != nil || !strings.Contains(why, "too many connections from guests") {
		t.Errorf("guests over their share: %v, %q", cn, why)
	}
	owner, why := s.admit(nil, peer{uid: 0})
	if owner == nil {
		t.Fatalf("the owner was refused: %s", why)
	}
	if cn, why := s.admit(nil, peer{uid: 0}); cn != nil || !strings.Contains(why, "too many connections (4 open)") {
		t.Errorf("over the total: %v, %q", cn, why)
	}
	s.forget(admitted[0])
	if cn, why := s.admit(nil, guest); cn == nil {
		t.Errorf("a closed connection was not counted out: %s", why)
	}
	s.forget(other)
	s.forget(owner)
}

// readLine feeds data to readRequest through a pipe.
func readLine(s *Server, data []byte, guest bool) ([]byte, error) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		b.Write(data)
		b.Close()
	}()
	line, done, err := s.readRequest(a, guest)
	line = bytes.Clone(line)
	done()
	return line, err
}

// Issue 13: six guests sending 250 MB each took 3.4 GB. A request is
// bounded (a guest's more tightly), and so is what all of them buffer.
func TestRequestBounds(t *testing.T) {
	big := func(n int) []byte { return append(bytes.Repeat([]byte("x"), n-1), '\n') }
	s := &Server{}
	if _, err := readLine(s, big(guestRequestMax+1), true); err == nil || err.Error() != "request longer than 32 MiB (the limit for guests)" {
		t.Errorf("guest, one byte over: %v", err)
	}
	if line, err := readLine(s, big(guestRequestMax), true); err != nil || len(line) != guestRequestMax {
		t.Errorf("guest, at the limit: %d bytes, %v", len(line), err)
	}
	if _, err := readLine(s, big(ownerRequestMax+1), false); err == nil || err.Error() != "request longer than 128 MiB" {
		t.Errorf("owner, one byte over: %v", err)
	}
	if line, err := readLine(s, big(40<<20), false); err != nil || len(line) != 40<<20 {
		t.Errorf("owner, 40 MiB: %d bytes, %v", len(line), err)
	}

	// Guests' share of the budget spent: a large guest request is
	// refused, a small one and the owner's are not.
	if !s.takeBudget(guestBufferedMax, true) {
		t.Fatal("the budget was not free")
	}
	if _, err := readLine(s, big(1<<20), true); !errors.Is(err, errBusy) {
		t.Errorf("guest, budget spent: %v, want %v", err, errBusy)
	}
	if _, err := readLine(s, big(connlimit.FreeRead), true); err != nil {
		t.Errorf("small guest request, budget spent: %v", err)
	}
	if _, err := readLine(s, big(1<<20), false); err != nil {
		t.Errorf("owner, guests' budget spent: %v", err)
	}
	s.giveBudget(guestBufferedMax, true)
	if buffered, guestBuf := s.t.Buffered(); buffered != 0 || guestBuf != 0 {
		t.Errorf("budget not given back: %d buffered, %d by guests", buffered, guestBuf)
	}
}

// Issue 13: a caller's --timeout bounds fluxsched's silence, so a long
// request is kept alive by signs of life until its answer, and a stream
// hears one at once. A caller that gives no timeout hears none.
func TestKeepAlive(t *testing.T) {
	lines := func(req api.Call, wait time.Duration) []string {
		a, b := net.Pipe()
		defer a.Close()
		w := &writer{conn: a}
		got := make(chan []string)
		go func() {
			var ls []string
			r := bufio.NewReader(b)
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					got <- ls
					return
				}
				ls = append(ls, strings.TrimSpace(l))
			}
		}()
		stop := keepAlive(w, req)
		time.Sleep(wait)
		stop()
		w.send(api.Reply{Final: true})
		w.send(api.Reply{Working: true}) // after the final line: dropped
		a.Close()
		return <-got
	}
	ls := lines(api.Call{Method: api.Submit.Name, Timeout: 0.2}, 500*time.Millisecond)
	if len(ls) < 4 || ls[0] != `{"working":true}` || ls[len(ls)-1] != `{"final":true}` {
		t.Errorf("submit, timeout 0.2s, 0.5s of work: %q", ls)
	}
	ls = lines(api.Call{Method: api.Events.Name, Timeout: 0.2}, 500*time.Millisecond)
	if want := []string{`{"working":true}`, `{"final":true}`}; !slices.Equal(ls, want) {
		t.Errorf("events: %q, want %q", ls, want)
	}
	ls = lines(api.Call{Method: api.Submit.Name}, 200*time.Millisecond)
	if want := []string{`{"final":true}`}; !slices.Equal(ls, want) {
		t.Errorf("no timeout given: %q, want %q", ls, want)
	}
}

// A result line reads as json.Encoder writes the Response it stands for,
// though the result is not encoded a second time.
func TestResultLine(t *testing.T) {
	for _, v := range []any{nil, []int{1, 2}, map[string]string{"a": "<&>"}, "x\ny", state.Summary{ID: 7, Name: "true"}} {
		a, b := net.Pipe()
		got := make(chan string, 1)
		go func() {
			l, _ := bufio.NewReader(b).ReadString('\n')
			got <- l
		}()
		(&writer{conn: a}).result(v)
		raw, _ := json.Marshal(v)
		var want bytes.Buffer
		json.NewEncoder(&want).Encode(api.Reply{Result: raw, Final: true})
		if g := <-got; g != want.String() {
			t.Errorf("result(%v): %q, want %q", v, g, want.String())
		}
		a.Close()
		b.Close()
	}
}
