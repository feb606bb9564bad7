package fluxq_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/daemon/daemontest"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/store"
)

// stopAgents stops every exec agent of a state directory under work, as
// the end of each testscript does: an agent outlives the fluxsched that
// started it, and no test may leave a process behind. Agents are found by
// their command line, which names their state directory, so nothing else
// is ever signalled.
func stopAgents(logf func(format string, args ...any), work string) {
	killed := func(pid int) { logf("process %d did not stop on SIGTERM: killed", pid) }
	// A failed script's background fluxsched still runs here (testscript
	// interrupts it after the deferred functions), and would start a new
	// agent for each one stopped: it is interrupted first.
	daemontest.Stop(findSchedulers(work), killed)
	// Again while any is found, in case one started an agent meanwhile.
	for round := 0; round < 5; round++ {
		pids := findAgents(work)
		if len(pids) == 0 {
			return
		}
		daemontest.Stop(pids, killed)
		time.Sleep(200 * time.Millisecond)
	}
}

// findAgents lists the live agents of the state directories under work:
// those with an agent folder.
func findAgents(work string) []int {
	var pids []int
	filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir():
			return nil
		case d.Name() == "jobs":
			return filepath.SkipDir // job folders: thousands, and no agent
		case d.Name() == "agent":
			pids = append(pids, daemontest.Agents(filepath.Dir(path))...)
			return filepath.SkipDir
		}
		return nil
	})
	return pids
}

// findSchedulers lists the fluxsched processes whose state directory is
// under work (from FLUXQ_STATE_DIR in their environment).
func findSchedulers(work string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !daemontest.Alive(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		if filepath.Base(args[0]) != "fluxsched" || (len(args) > 1 && args[1] == "agent") {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if dir, ok := strings.CutPrefix(kv, "FLUXQ_STATE_DIR="); ok && strings.HasPrefix(filepath.Clean(dir), filepath.Clean(work)+"/") {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// eventNames is the testscripts' `eventnames` command: one line per job
// of $FLUXQ_STATE_DIR with its events' names, read from the store in one
// process (a thousand `fluxq eventlog` runs are slow under -race). The
// store must be free: run it with no fluxsched.
func eventNames() int {
	st, err := store.Open(filepath.Join(os.Getenv("FLUXQ_STATE_DIR"), "fluxq.db"), store.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventnames:", err)
		return 1
	}
	defer st.Close()
	err = st.View(func(tx *store.Tx) error {
		return tx.ForEachJob(0, func(_ uint64, get func(string) []byte) (bool, error) {
			evs, err := eventlog.Parse(get(store.JobEventlog))
			if err != nil {
				return false, err
			}
			names := make([]string, len(evs))
			for i, e := range evs {
				names[i] = e.Name
			}
			fmt.Println(strings.Join(names, " "))
			return true, nil
		})
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventnames:", err)
		return 1
	}
	return 0
}
