package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
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

var binaryID = sync.OnceValue(func() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", version.String())
	if f, err := os.Open("/proc/self/exe"); err == nil {
		io.Copy(h, f)
		f.Close()
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
})

// BinaryID names this build by what it is, not where it lies: 12 hex
// digits of a hash of its version and of its file's bytes. It is what
// hosts reached over ssh are compared by (`fluxsched agent --attach
// --build`): BuildID names the file (its inode), which differs on every
// machine the same binary is copied to. Reading the file takes tens of
// milliseconds, once, and only where other machines are used.
func BinaryID() string { return binaryID() }
