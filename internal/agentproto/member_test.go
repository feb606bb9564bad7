package agentproto

import (
	"os"
	"strings"
	"testing"
)

func TestCgroupName(t *testing.T) {
	a, b := CgroupName("/state/a"), CgroupName("/state/b")
	if a == b || !strings.HasPrefix(a, "fluxq-") || len(a) != len("fluxq-")+12 || CgroupName("/state/a") != a {
		t.Fatalf("CgroupName: %q %q", a, b)
	}
}

// A process outside every job's cgroup is in none, whatever it claims.
func TestInJobOutside(t *testing.T) {
	t.Setenv("FLUXQ_JOB_ID", "1")
	if InJob(t.TempDir(), 1, os.Getpid()) {
		t.Error("this test process is in job 1")
	}
	if InJob(t.TempDir(), 1, 0) || InJob(t.TempDir(), 1, -1) {
		t.Error("no process is in a job")
	}
}
