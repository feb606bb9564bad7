package agentproto

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
)

// CgroupName names the folder that holds an instance's job cgroups, one
// per job named by its id in decimal: unique to the state directory (an
// absolute path), so that two instances on one machine never share one.
// The agent makes them; fluxsched reads them to tell which job a process
// belongs to (InJob).
func CgroupName(stateDir string) string {
	h := sha256.Sum256([]byte(stateDir))
	return "fluxq-" + hex.EncodeToString(h[:])[:12]
}

// InJob reports whether process pid runs inside job id of the instance
// in stateDir (an absolute path): whether one of its cgroups is the job's.
// A process cannot put itself into a job's cgroup, which the agent alone
// may write, so unlike an environment variable this cannot be claimed.
// Under the subreaper containment there is no cgroup, and no process is
// recognized (it is then a tool, not the job).
func InJob(stateDir string, id fluid.ID, pid int) bool {
	if pid <= 0 {
		return false
	}
	if abs, err := filepath.Abs(stateDir); err == nil {
		stateDir = abs
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	suffix := "/" + CgroupName(stateDir) + "/" + strconv.FormatUint(uint64(id), 10)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) == 3 && strings.HasSuffix(f[2], suffix) {
			return true
		}
	}
	return false
}
