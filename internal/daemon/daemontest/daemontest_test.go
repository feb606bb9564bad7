package daemontest_test

import (
	"os"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/daemon/daemontest"
)

func TestMain(m *testing.M) {
	daemontest.AgentMain()
	os.Exit(m.Run())
}

const oneNode = `
[[resource.config]]
hosts = "node0"
cores = "0"
`

// An instance started here starts its exec agent (this binary); once it
// is stopped, StopAgents leaves no agent of its state directory running.
func TestStopAgentsLeavesNone(t *testing.T) {
	d := daemontest.Start(t, oneNode)
	deadline := time.Now().Add(30 * time.Second)
	var pids []int
	for len(pids) == 0 && time.Now().Before(deadline) {
		pids = daemontest.Agents(d.StateDir())
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) != 1 {
		t.Fatalf("agents %v, want one", pids)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if !daemontest.Alive(pids[0]) {
		t.Fatalf("the agent %d ended with the daemon: it should outlive it", pids[0])
	}
	daemontest.StopAgents(t, d.StateDir())
	if daemontest.Alive(pids[0]) {
		t.Errorf("the agent %d still runs", pids[0])
	}
	if left := daemontest.Agents(d.StateDir()); len(left) != 0 {
		t.Errorf("agents left: %v", left)
	}
}
