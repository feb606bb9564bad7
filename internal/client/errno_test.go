package client

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// An error answered over the socket keeps its system error: the message
// is the instance's, and errors.Is still finds ENOSPC.
func TestRemoteErrorKeepsErrno(t *testing.T) {
	sent := fmt.Errorf("cannot write the store /s/fluxq.db: %w", syscall.ENOSPC)
	got := remoteError(sent.Error(), Errno(sent))
	if got.Error() != sent.Error() || !errors.Is(got, syscall.ENOSPC) {
		t.Errorf("remote error = %q (ENOSPC: %v), want %q, ENOSPC", got, errors.Is(got, syscall.ENOSPC), sent)
	}
	plain := remoteError("unknown job id", Errno(errors.New("unknown job id")))
	var errno syscall.Errno
	if errors.As(plain, &errno) {
		t.Errorf("a refusal gained an errno: %v", errno)
	}
}
