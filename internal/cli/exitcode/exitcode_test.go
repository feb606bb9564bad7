package exitcode

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/reservation"
)

// A full filesystem is its own exit status (74, sysexits EX_IOERR), so a
// script can tell it from a refused request and try again later, however
// deeply the no-space error is wrapped.
func TestCodeNoSpace(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"enospc", fmt.Errorf("submit: %w", &os.PathError{Op: "write", Path: "/s/fluxq.db", Err: syscall.ENOSPC}), IOError},
		{"edquot", fmt.Errorf("submit: %w", syscall.EDQUOT), IOError},
		{"other errno", fmt.Errorf("submit: %w", syscall.EIO), Failed},
		{"refused", errors.New("unknown job id"), Failed},
		{"explicit wins", WithCode(Unavailable, syscall.ENOSPC), Unavailable},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Each error kind of the api has one exit status, whether the error was
// made here or decoded from the socket (api.Wire).
func TestCodeKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"unknown job", api.ErrUnknownJob, Failed},
		{"permission", api.Errorf(api.CodePermission, "permission denied: not yours"), Failed},
		{"inactive", api.ErrInactive, Failed},
		{"urgency running", api.ErrUrgencyRunning, Failed},
		{"needs instance", api.ErrNeedsInstance, Failed},
		{"bad request", api.Errorf(api.CodeBadRequest, "unknown method"), Failed},
		{"unavailable", fmt.Errorf("%w: store is busy", api.ErrUnavailable), Unavailable},
		{"no space", fmt.Errorf("commit: %w", syscall.ENOSPC), IOError},
		{"reservation", &reservation.Error{Status: reservation.BadParam, Msg: "bad"}, int(reservation.BadParam)},
		{"no kind", errors.New("jobspec: no tasks"), Failed},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code = %d, want %d", tc.name, got, tc.want)
		}
		if got := Code(api.Wire(tc.err)); got != tc.want {
			t.Errorf("%s over the wire: Code = %d, want %d", tc.name, got, tc.want)
		}
	}
}
