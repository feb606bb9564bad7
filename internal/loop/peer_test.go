package loop_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// A Peer connects through its Connect until it is closed; Once connects
// once.
func TestPeerConnect(t *testing.T) {
	errDown := errors.New("down")
	tests := []struct {
		name string
		// peer makes the peer and the conn its first connect gives.
		peer func() (*loop.Peer, wire.Conn)
		// close closes the peer before connecting.
		close bool
		// want is the error of each connect in turn, nil for the conn.
		want []error
	}{
		{name: "once", peer: func() (*loop.Peer, wire.Conn) {
			c, _ := wire.Pipe()
			return loop.Once(c), c
		}, want: []error{nil, loop.ErrNoReconnect, loop.ErrNoReconnect}},
		{name: "once, no conn", peer: func() (*loop.Peer, wire.Conn) {
			return loop.Once(nil), nil
		}, want: []error{loop.ErrNoReconnect}},
		{name: "once, closed", close: true, peer: func() (*loop.Peer, wire.Conn) {
			c, _ := wire.Pipe()
			return loop.Once(c), c
		}, want: []error{loop.ErrNoReconnect}},
		{name: "connect fails, then succeeds", peer: func() (*loop.Peer, wire.Conn) {
			c, _ := wire.Pipe()
			n := 0
			return &loop.Peer{Connect: func() (wire.Conn, error) {
				n++
				if n == 1 {
					return nil, errDown
				}
				return c, nil
			}}, c
		}, want: []error{errDown, nil, nil}},
		{name: "closed", close: true, peer: func() (*loop.Peer, wire.Conn) {
			c, _ := wire.Pipe()
			return &loop.Peer{Connect: func() (wire.Conn, error) { return c, nil }}, c
		}, want: []error{loop.ErrNoReconnect}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, conn := tc.peer()
			if tc.close {
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for i, want := range tc.want {
				c, err := loop.Connect(p)
				if !errors.Is(err, want) {
					t.Fatalf("connect %d: %v, want %v", i+1, err, want)
				}
				if want == nil && c != conn {
					t.Fatalf("connect %d: another conn", i+1)
				}
			}
		})
	}
}

// Closing a peer closes its live connection, and it never connects again.
func TestPeerCloseEndsConn(t *testing.T) {
	c, other := wire.Pipe()
	p := &loop.Peer{Connect: func() (wire.Conn, error) { return c, nil }}
	if _, err := loop.Connect(p); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("the other end after Close: %v, want io.EOF", err)
	}
	if _, err := loop.Connect(p); !errors.Is(err, loop.ErrNoReconnect) {
		t.Errorf("connect after Close: %v, want ErrNoReconnect", err)
	}
}

// A scheduler that dies is connected again (RFC 27: a new scheduler takes
// over with a hello), and jobs submitted after are scheduled by it.
func TestSchedulerReconnects(t *testing.T) {
	st, err := store.Open(t.TempDir()+"/fluxq.db", store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var connects atomic.Int32
	schedPeer := &loop.Peer{Connect: func() (wire.Conn, error) {
		jmEnd, schedEnd := wire.Pipe()
		if connects.Add(1) == 1 {
			schedEnd.Close() // the first scheduler dies at once
			return jmEnd, nil
		}
		go func() {
			sched.Run(schedEnd, sched.Options{Default: sched.DefaultPolicy(), Limit: 8})
			schedEnd.Close()
		}()
		return jmEnd, nil
	}}
	execConn, execEnd := wire.Pipe()
	exec := newHeldExec(execEnd)
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
	var log syncBuffer
	l := loop.New(st, jobmgr.New(jobmgr.Config{Inventory: inv, Owner: 100}), schedPeer, loop.Once(execConn), slog.New(slog.NewTextHandler(&log, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		schedPeer.Close()
		execConn.Close()
		execEnd.Close()
	}()

	v, err := l.Do(context.Background(), submitOp(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	id := v.([]fluid.ID)[0]
	select {
	case got := <-exec.started:
		if got != id {
			t.Fatalf("started %s, want %s", got, id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not start within 30s: the scheduler was not connected again")
	}
	if n := connects.Load(); n < 2 {
		t.Errorf("the scheduler was connected %d times, want 2 or more", n)
	}
	if !strings.Contains(log.String(), "scheduler disconnected") {
		t.Errorf("the lost scheduler was not logged:\n%s", log.String())
	}
}
