package runner

import (
	"os"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
)

// InJob reports whether process pid runs inside job id of the instance
// whose jobs' cgroups are grouped under cgroupName (Options.CgroupName):
// whether one of its cgroups is that job's, <...>/<cgroupName>/<id>. This
// is what a FLUXQ_JOB_ID claim is checked against: a process can leave or
// enter a cgroup only with write access to the cgroups involved, and a
// runner's cgroups are its owner's, so a guest cannot forge it, and the
// owner's own jobs can only claim each other. Where jobs are not in
// cgroups (subreaper containment) it is false.
func InJob(pid int, cgroupName string, id fluid.ID) bool {
	if pid <= 0 || cgroupName == "" || strings.Contains(cgroupName, "/") {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	suffix := "/" + cgroupName + "/" + strconv.FormatUint(uint64(id), 10)
	for _, line := range strings.Split(string(b), "\n") {
		// hierarchy-id:controllers:path
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && strings.HasSuffix(f[2], suffix) {
			return true
		}
	}
	return false
}
