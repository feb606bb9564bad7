// Package daemontest starts instances in process for tests, as httptest
// starts servers: a daemon over a temporary state directory, with the
// test binary itself as its exec agent, and every agent it started
// stopped by its pid when the test ends.
package daemontest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/daemon"
)

// AgentMain makes the test binary the exec agent when it is started as
// one (`TEST agent --state-dir DIR`, as the daemon starts it), and then
// exits; otherwise it returns. Call it first in TestMain.
func AgentMain() {
	if len(os.Args) != 4 || os.Args[1] != "agent" || os.Args[2] != "--state-dir" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	signal.Ignore(syscall.SIGHUP)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	a, err := agent.New(agent.Options{StateDir: os.Args[3], Containment: "auto", Log: log})
	if err == nil {
		err = a.Run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Options are a daemon's options over a new state directory (not made
// yet) with the config text toml, the test binary as its exec agent (see
// AgentMain). The agents started there are stopped when the test ends.
func Options(tb testing.TB, toml string) daemon.Options {
	tb.Helper()
	work := tb.TempDir()
	path := filepath.Join(work, "config.toml")
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		tb.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(work, "state")
	// After TempDir's own cleanup is registered, so it runs before it.
	tb.Cleanup(func() { StopAgents(tb, dir) })
	return daemon.Options{Config: cfg, StateDir: dir, Limit: 8, Timeout: time.Second, AgentCommand: []string{self, "agent"}}
}

// Start serves an instance of the config text toml until the test ends.
func Start(tb testing.TB, toml string) *daemon.Daemon {
	tb.Helper()
	d, err := daemon.Start(context.Background(), Options(tb, toml))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := d.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return d
}

// stopGrace is how long an agent asked to stop gets before SIGKILL: it
// ends its jobs first, SIGTERM then SIGKILL after their grace.
const stopGrace = 20 * time.Second

// StopAgents ends the exec agents of the state directory dir, found by
// their command lines (which name dir) and their pid files, and waits for
// them: an agent outlives the daemon that started it, and no test may
// leave a process behind. It looks again until none is found twice in a
// row, in case a stopped daemon's exec service was still starting one.
func StopAgents(tb testing.TB, dir string) {
	quiet := 0
	for round := 0; round < 50 && quiet < 2; round++ {
		pids := Agents(dir)
		if len(pids) == 0 {
			quiet++
			time.Sleep(100 * time.Millisecond)
			continue
		}
		quiet = 0
		Stop(pids, func(pid int) { tb.Errorf("the exec agent %d did not stop on SIGTERM: killed", pid) })
	}
}

// Stop asks the processes pids to stop (SIGTERM) and kills those still
// running after stopGrace, telling killed of each.
func Stop(pids []int, killed func(pid int)) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(stopGrace)
	for _, pid := range pids {
		for Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			killed(pid)
		}
	}
}

// Agents lists the live exec agents of dir: the processes whose command
// line is `... agent --state-dir DIR`. A pid file is not enough: the
// agent that wrote it may be gone and its pid another process's.
func Agents(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if IsAgentOf(pid, dir) && Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// IsAgentOf reports whether pid is `fluxsched agent --state-dir DIR`
// (or --state-dir=DIR).
func IsAgentOf(pid int, dir string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	if len(args) < 2 || args[1] != "agent" {
		return false
	}
	for i, a := range args {
		if a == "--state-dir" && i+1 < len(args) && filepath.Clean(args[i+1]) == filepath.Clean(dir) {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--state-dir="); ok && filepath.Clean(v) == filepath.Clean(dir) {
			return true
		}
	}
	return false
}

// Alive reports whether pid runs: a zombie (not ours to reap) is gone.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}
