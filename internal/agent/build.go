package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/version"
)

var buildID = sync.OnceValue(func() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", version.String())
	// The running binary's file: an upgrade installs a new file (a new
	// inode, size or time), even under the same version string.
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err == nil {
		fmt.Fprintf(h, "%d %d %d %d.%09d\n", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
})

// BuildID names this build of the binary: 12 hex digits of a hash of its
// version and of the file it runs from. Agents of one build share nothing
// with another's but the journal format; fluxsched retires agents of
// another build.
func BuildID() string { return buildID() }
