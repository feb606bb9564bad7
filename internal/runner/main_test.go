package runner

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// fallbackEnv runs this test binary again with the runner's fallbacks
// (SIGCHLD reaper, poller in its own thread): a process has one reaper, so
// they get a process of their own.
const fallbackEnv = "FLUXQ_RUNNER_TEST_FALLBACKS"

func TestMain(m *testing.M) {
	if os.Getenv(fallbackEnv) == "1" {
		fallbacks = true
		os.Exit(m.Run())
	}
	// Before any runner exists here: os/exec waits for its own child.
	if code := runFallbacks(); code != 0 {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// runFallbacks runs the tests of launching, signals and containment in a
// child with the fallbacks, unless only benchmarks or other tests were
// asked for.
func runFallbacks() int {
	run := "^(TestFallbacksInUse|TestCommands|TestLeftoversKilled|TestSignals|TestNoDescriptorLeak)$"
	for _, a := range os.Args[1:] {
		if len(a) > 10 && a[:10] == "-test.run=" || a == "-test.run" {
			// A selection: the fallbacks run only when asked by name.
			run = ""
		}
	}
	if run == "" {
		return 0
	}
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1")
	cmd.Env = append(os.Environ(), fallbackEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "with the fallbacks (%s=1):\n%s\n", fallbackEnv, out)
		return 1
	}
	return 0
}

// The fallbacks are what runs in the fallback process.
func TestFallbacksInUse(t *testing.T) {
	newHarness(t, "auto")
	if reaper.pidfds == fallbacks {
		t.Errorf("fallbacks %v, yet pidfds %v", fallbacks, reaper.pidfds)
	}
}
