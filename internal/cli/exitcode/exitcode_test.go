package exitcode

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
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
