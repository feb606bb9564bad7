package client

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Options say which instance to open.
type Options struct {
	StateDir string
	Timeout  time.Duration // for a busy store or an unreachable loop
}

// Open returns the instance: through fluxsched's socket when its loop
// runs, else the store directly.
func Open(ctx context.Context, o Options) (Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	sock := filepath.Join(o.StateDir, SocketFile)
	conn, err := dial(ctx, sock, o.Timeout)
	if err == nil {
		conn.Close()
		return &socket{path: sock, timeout: o.Timeout}, nil
	}
	// No socket, or a stale one from a loop that died: nobody serves, so
	// the store is ours to open (bbolt's lock still guards against a loop
	// that is just starting).
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		return newDirect(o), nil
	}
	return nil, err
}

func dial(ctx context.Context, path string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, ErrUnavailable
		}
		return nil, err
	}
	return c, nil
}
