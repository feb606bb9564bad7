package fluxq_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/store"
)

// agentStopGrace is how long an agent asked to stop (SIGTERM: it ends its
// jobs, SIGTERM then SIGKILL after their grace) gets before SIGKILL.
const agentStopGrace = 20 * time.Second

// stopAgents stops every exec agent of a state directory under work, as
// the end of each testscript does: an agent outlives the fluxsched that
// started it, and no test may leave a process behind. Agents are found
// by their pid files and checked by their command line, which names their
// state directory, so nothing else is ever signalled.
func stopAgents(logf func(format string, args ...any), work string) {
	// A failed script's background fluxsched still runs here (testscript
	// interrupts it after the deferred functions), and would start a new
	// agent for each one stopped: it is interrupted first.
	stopPIDs(logf, findSchedulers(work))
	// Again while any is found, in case one started an agent meanwhile.
	for round := 0; round < 5; round++ {
		pids := findAgents(work)
		if len(pids) == 0 {
			return
		}
		stopPIDs(logf, pids)
		time.Sleep(200 * time.Millisecond)
	}
}

// findAgents lists the live agents of the state directories under work.
func findAgents(work string) []int {
	var pids []int
	filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "jobs" {
			return filepath.SkipDir // job folders: thousands, and no agent
		}
		if d.IsDir() || !strings.HasSuffix(path, ".pid") || filepath.Base(filepath.Dir(path)) != "agent" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			return nil
		}
		if alive(pid) && isAgentOf(pid, filepath.Dir(filepath.Dir(path))) {
			pids = append(pids, pid)
		}
		return nil
	})
	return pids
}

// stopPIDs asks processes to stop (SIGTERM), and kills those that do not
// in time.
func stopPIDs(logf func(format string, args ...any), pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(agentStopGrace)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			logf("process %d did not stop on SIGTERM: killed", pid)
		}
	}
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
		if err != nil || pid == os.Getpid() || !alive(pid) {
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

// isAgentOf reports whether pid is `fluxsched agent --state-dir DIR`.
func isAgentOf(pid int, dir string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	for i, a := range args {
		if a == "--state-dir" && i+1 < len(args) && filepath.Clean(args[i+1]) == filepath.Clean(dir) {
			return len(args) > 1 && args[1] == "agent"
		}
		if v, ok := strings.CutPrefix(a, "--state-dir="); ok && filepath.Clean(v) == filepath.Clean(dir) {
			return len(args) > 1 && args[1] == "agent"
		}
	}
	return false
}

// alive reports whether pid runs: a zombie (not ours to reap) is gone.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
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
