package fluxsched

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/state"
)

const (
	// SubinstanceConfig and SubinstanceLog are the sub-instance's config
	// (written from the job's R) and log, in its state directory.
	SubinstanceConfig = "alloc.toml"
	SubinstanceLog    = "fluxsched.log"
)

// subinstanceReady bounds the wait for the sub-instance's socket.
const subinstanceReady = time.Minute

// SubinstanceCmd is fluxq alloc's job, as a Flux allocation's job is a
// Flux broker: a fluxsched instance whose inventory is the job's R, with
// a state directory of its own, and its initial program (the shell, or
// COMMAND) run once it serves. It ends when the program does, or, with no
// program (alloc --bg), when the job is cancelled or runs out of time.
func SubinstanceCmd() *cli.Command {
	return &cli.Command{
		Name:      instance.Subinstance,
		Hidden:    true,
		Usage:     "run a sub-instance on this job's resources (fluxq alloc's job)",
		ArgsUsage: "[COMMAND [ARGS...]]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Required: true, Usage: "the sub-instance's state `DIR`"},
			&cli.StringFlag{Name: "parent", Required: true, Usage: "the state `DIR` of the instance that runs this job"},
			&cli.StringFlag{Name: "job", EnvVars: []string{"FLUXQ_JOB_ID"}, Usage: "this job's `ID` in the parent"},
		},
		Action: subinstance,
	}
}

func subinstance(c *cli.Context) error {
	dir, parent := c.String("dir"), c.String("parent")
	if rank := os.Getenv("FLUXQ_TASK_RANK"); rank != "" && rank != "0" {
		return holdRank(dir)
	}
	id, err := fluid.Parse(c.String("job"))
	if err != nil {
		return exitcode.UsageErrorf("--job: %v", err)
	}
	r, err := jobR(c.Context, parent, id)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, SubinstanceConfig)
	if err := os.WriteFile(cfgPath, []byte(inventoryTOML(r)), 0o600); err != nil {
		return fmt.Errorf("writing the sub-instance's config: %w", err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dir, SubinstanceLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	self, err := selfPath()
	if err != nil {
		return fmt.Errorf("finding the exec agent: %w", err)
	}
	limit, err := config.ParseMode(cfg.Sched.ModeOrDefault())
	if err != nil {
		return err
	}
	d, err := daemon.Open(daemon.Options{Config: cfg, ConfigPath: cfgPath, StateDir: dir, Limit: limit,
		Timeout: 10 * time.Second, AgentCommand: []string{self, "agent"},
		Log: slog.New(slog.NewTextHandler(logf, nil))})
	if err != nil {
		return err
	}
	// Every signal the parent sends the job (cancel, time limit, hang-up)
	// ends the sub-instance, and reaches the program first.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGALRM)
	defer signal.Stop(sigs)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	var ended syscall.Signal // the signal that ended the allocation, if one did
	code, err := runInitial(c, dir, parent, id, sigs, ran, &ended)
	stop()
	if rerr := <-ran; err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = rerr
	}
	stopSubAgents(dir)
	os.RemoveAll(dir)
	if err != nil {
		return err
	}
	if ended != 0 {
		// Ended by the parent (cancel: SIGTERM, time limit: SIGALRM):
		// the job ends by that signal, as any job's task would, so the
		// parent reports it as Flux does (143, 142), not as the
		// hang-up of the shell.
		dieOf(ended)
	}
	if code != 0 {
		return exitcode.Silent(code)
	}
	return nil
}

// runInitial waits for the sub-instance to serve, then runs the initial
// program and returns its exit code; with none, it waits for a signal.
func runInitial(c *cli.Context, dir, parent string, id fluid.ID, sigs chan os.Signal, ran chan error, ended *syscall.Signal) (int, error) {
	sock := filepath.Join(dir, state.SocketFile)
	deadline := time.Now().Add(subinstanceReady)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		select {
		case err := <-ran:
			ran <- err
			return 1, fmt.Errorf("the sub-instance ended before it served: %v", err)
		case sig := <-sigs:
			*ended = sig.(syscall.Signal)
			return 1, nil
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 1, fmt.Errorf("the sub-instance did not serve within %v", subinstanceReady)
		}
	}
	argv := c.Args().Slice()
	if len(argv) == 0 {
		*ended = (<-sigs).(syscall.Signal)
		return 0, nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = allocEnv(os.Environ(), dir, parent, id)
	// On a terminal (fluxq alloc's), the program's process group is the
	// terminal's foreground one: ^C and ^Z reach it, and not the
	// instance.
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("the allocation's program: %w", err)
	}
	done := make(chan struct{})
	got := make(chan syscall.Signal, 1)
	go func() {
		for {
			select {
			case sig := <-sigs:
				// The program leads its own group: pass the signal on.
				s := sig.(syscall.Signal)
				select {
				case got <- s:
				default:
				}
				if s == unix.SIGALRM {
					s = unix.SIGHUP // out of time: as a terminal's hang-up
				}
				unix.Kill(-cmd.Process.Pid, s)
				if s != unix.SIGHUP {
					unix.Kill(-cmd.Process.Pid, unix.SIGHUP)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	select {
	case s := <-got:
		*ended = s
	default:
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 1, err
}

// allocEnv is the program's environment: fluxq there reaches the
// sub-instance, and claims no job of the parent's (FLUXQ_JOB_ID would name
// a job the sub-instance does not have).
func allocEnv(environ []string, dir, parent string, id fluid.ID) []string {
	out := make([]string, 0, len(environ)+3)
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "FLUXQ_STATE_DIR", "FLUXQ_JOB_ID", instance.EnvAllocJob, instance.EnvAllocParent:
			continue
		}
		out = append(out, kv)
	}
	return append(out, "FLUXQ_STATE_DIR="+dir, instance.EnvAllocJob+"="+id.String(), instance.EnvAllocParent+"="+parent)
}

// jobR reads the job's R from the instance that runs it.
func jobR(ctx context.Context, parent string, id fluid.ID) (*rset.R, error) {
	cl, err := client.Open(ctx, client.Options{StateDir: parent, JobClaim: id.String()})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	info, err := cl.Job(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading the allocation's R: %w", err)
	}
	if len(info.R) == 0 {
		return nil, fmt.Errorf("the allocation %s has no R", id.String())
	}
	return rset.Parse(info.R)
}

// inventoryTOML is the sub-instance's [[resource.config]]: each host of
// the R with the cores, GPUs and memory the job holds there, so that its
// jobs are placed on the allocation and nowhere else.
func inventoryTOML(r *rset.R) string {
	var b strings.Builder
	for _, n := range r.Nodes() {
		host := n.Hostname
		if host == "" {
			host = fmt.Sprintf("rank%d", n.Rank)
		}
		fmt.Fprintf(&b, "[[resource.config]]\nhosts = %q\ncores = %q\n", host, n.Cores.String())
		if n.GPUs.Count() > 0 {
			fmt.Fprintf(&b, "gpus = %q\n", n.GPUs.String())
		}
		if n.Memory > 0 {
			// Whole kilobytes: what is granted is a multiple of the
			// slot's memory, which --mem gives in whole units.
			fmt.Fprintf(&b, "memory = \"%dK\"\n", n.Memory/1024)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// stopSubAgents stops the sub-instance's exec agents, which would
// otherwise outlive it, idle, in the job's cgroup (holding the job open).
func stopSubAgents(dir string) {
	agents, err := agent.Find(dir)
	if err != nil {
		return
	}
	for _, ag := range agents {
		if _, err := agent.Call(ag.Socket, agentproto.TopicStop, agentproto.Stop{Force: true}, 10*time.Second); err != nil {
			continue
		}
		waitExit(ag, forceWait)
	}
}

// holdRank is the task of an allocation's other nodes: the first task's
// sub-instance runs them all, so these only hold their place until it has
// ended (its state directory is gone) or the job is ended.
func holdRank(dir string) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGALRM)
	defer signal.Stop(sigs)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sigs:
			return nil
		case <-tick.C:
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				return nil
			}
		}
	}
}

// dieOf ends the process by sig. Go's runtime ignores some signals it is
// not asked to notify (SIGALRM among them), so the default action is put
// back with the kernel's own call before the signal is raised.
func dieOf(sig syscall.Signal) {
	signal.Reset(sig)
	var dfl [4]uint64 // struct sigaction, zero: SIG_DFL, no flags, no mask
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	unix.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // the signal is delivered meanwhile
}
