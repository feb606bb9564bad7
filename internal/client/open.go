package client

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fluxq/fluxq/internal/state"
)

// Options say which instance to open.
type Options struct {
	StateDir string
	Timeout  time.Duration // for a busy store, or for the loop to answer
	// JobClaim is the caller's FLUXQ_JOB_ID, if it runs inside a job;
	// AsScheduler asks to act as the scheduler (reservations).
	JobClaim    string
	AsScheduler bool
}

// Open returns the instance: through fluxsched's socket when its loop
// runs, else the store directly.
func Open(ctx context.Context, o Options) (Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	return &conn{t: &auto{
		sock:    &socket{path: filepath.Join(o.StateDir, state.SocketFile), timeout: o.Timeout, claim: o.JobClaim, asScheduler: o.AsScheduler},
		direct:  newDirect(o),
		timeout: o.Timeout,
	}}, nil
}

// errNotServing: no loop listens on the socket (none, or a stale one from
// a loop that died), so the store is the way in. Nothing was sent.
var errNotServing = errors.New("no loop serves the socket")

// The files of an instance's state directory, for the commands.
const (
	StoreFile  = state.StoreFile
	SocketFile = state.SocketFile
	JobsFolder = state.JobsFolder
)

// dial connects before deadline. A full listen backlog (EAGAIN: the
// loop is not accepting, stopped or swamped) is tried again until then.
func dial(ctx context.Context, path string, deadline time.Time) (net.Conn, error) {
	for {
		d := net.Dialer{Deadline: deadline}
		c, err := d.DialContext(ctx, "unix", path)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return nil, errNotServing
		}
		if errors.Is(err, syscall.EACCES) {
			return nil, ErrOwnersSocket
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, ErrUnavailable
		}
		if !errors.Is(err, syscall.EAGAIN) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, ErrUnavailable
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
