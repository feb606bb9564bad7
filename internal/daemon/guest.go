package daemon

import (
	"errors"
	"fmt"
	"os"
)

// errGuestNeedsRoot refuses guest access to a fluxsched that could only
// run a guest's jobs as the owner (docs/architecture.md: guest jobs run as the
// guest, never as the owner).
var errGuestNeedsRoot = errors.New("[access] allow-guest-user requires fluxsched to run as root")

// guestDirMode lets other users pass through a directory, to the socket
// and to their own job folders, without listing it.
const guestDirMode = 0o711

// guestAccess prepares the state directory for [access] allow-guest-user:
// nothing when allow is false; otherwise it refuses unless fluxsched runs
// as root, and opens stateDir and jobsDir to be passed through. The store
// and each job folder keep their own, private modes.
func guestAccess(allow bool, stateDir, jobsDir string) error {
	return guestAccessAs(os.Geteuid(), allow, stateDir, jobsDir)
}

// guestAccessAs is guestAccess for a process of effective uid euid.
func guestAccessAs(euid int, allow bool, stateDir, jobsDir string) error {
	if !allow {
		return nil
	}
	if euid != 0 {
		return errGuestNeedsRoot
	}
	for _, d := range []struct{ what, path string }{{"state directory", stateDir}, {"jobs directory", jobsDir}} {
		if err := os.Chmod(d.path, guestDirMode); err != nil {
			return fmt.Errorf("%s: %w", d.what, err)
		}
	}
	return nil
}
