package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
)

// InJob reports whether process pid runs inside job id of the instance
// whose jobs' cgroups are grouped under cgroupName (Options.CgroupName):
// whether one of its cgroups is that job's, <...>/<cgroupName>/<id>, or a
// slot of the pool, <...>/<cgroupName>/slot.<n>, marked with the job's id
// (see pool.go). This is what a FLUXQ_JOB_ID claim is checked against: a
// process can leave or enter a cgroup, and a slot's mark can be set, only
// with write access to the cgroups involved, and a runner's cgroups are
// its owner's, so a guest cannot forge it, and the owner's own jobs can
// only claim each other. Where jobs are not in cgroups (subreaper
// containment) it is false.
func InJob(pid int, cgroupName string, id fluid.ID) bool {
	if pid <= 0 || cgroupName == "" || strings.Contains(cgroupName, "/") {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	dec := strconv.FormatUint(uint64(id), 10)
	suffix := "/" + cgroupName + "/" + dec
	for _, line := range strings.Split(string(b), "\n") {
		// hierarchy-id:controllers:path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if strings.HasSuffix(f[2], suffix) {
			return true
		}
		if f[0] == "0" && f[1] == "" && isSlot(f[2]) && filepath.Base(filepath.Dir(f[2])) == cgroupName &&
			slotMarked(f[2], dec) {
			return true
		}
	}
	return false
}

// slotMarked reports whether the slot of the v2 hierarchy at path is
// marked with the job id dec.
func slotMarked(path, dec string) bool {
	dir, err := hierarchyDir("", path)
	if err != nil {
		return false
	}
	var buf [32]byte
	n, err := unix.Getxattr(dir, jobAttr, buf[:])
	return err == nil && string(buf[:n]) == dec
}
