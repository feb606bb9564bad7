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
	return &auto{
		sock:    &socket{path: filepath.Join(o.StateDir, SocketFile), timeout: o.Timeout},
		direct:  newDirect(o),
		timeout: o.Timeout,
	}, nil
}

// serving reports whether a loop answers on the socket. No socket, or a
// stale one from a loop that died, means nobody serves.
func (s *socket) serving(ctx context.Context) bool {
	conn, err := dial(ctx, s.path, s.timeout)
	if err != nil {
		return !(errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT))
	}
	conn.Close()
	return true
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
