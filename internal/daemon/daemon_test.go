package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agent"
	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/daemon/daemontest"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/server"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// TestMain lets this test binary be the exec agent the daemon starts,
// and a scheduler command.
func TestMain(m *testing.M) {
	daemontest.AgentMain()
	// A scheduler command (--sched-cmd): RFC 27 as JSON lines on stdin
	// and stdout.
	if len(os.Args) == 2 && os.Args[1] == "sched" {
		err := sched.Run(wire.NewLineConn(os.Stdin, os.Stdout, nil), sched.Options{Default: sched.DefaultPolicy(), Limit: 8})
		if err != nil {
			fmt.Fprintln(os.Stderr, "sched:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// twoCores is a config of one node with two cores, on this machine.
const twoCores = `
[[resource.config]]
hosts = "node0"
cores = "0-1"
`

// options are a daemon's options over a new state directory with the
// config text, this binary as its exec agent, whose agents are stopped
// when the test ends; the store's lock is awaited a short while.
func options(t *testing.T, toml string) daemon.Options {
	t.Helper()
	opts := daemontest.Options(t, toml)
	opts.Timeout = 200 * time.Millisecond
	return opts
}

// submit stores n jobs running argv, as fluxq submit does, through the
// daemon's loop.
func submit(t *testing.T, d *daemon.Daemon, n int, argv ...string) []fluid.ID {
	t.Helper()
	reqs := submitRequests(t, n, argv)
	v, err := d.Loop().Do(context.Background(), func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := state.Submit(tx, jm.Now(), reqs, nil)
		if err != nil {
			return nil, err
		}
		return ids, jm.Submitted(tx, recs)
	})
	if err != nil {
		t.Fatal(err)
	}
	return v.([]fluid.ID)
}

func submitRequests(t *testing.T, n int, argv []string) []state.SubmitRequest {
	t.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{Command: argv, Cwd: "/tmp", Environment: map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/root"}})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]state.SubmitRequest, n)
	for i := range reqs {
		reqs[i] = state.SubmitRequest{Jobspec: spec, UserID: uint32(os.Getuid()), Owner: true, Urgency: 16}
	}
	return reqs
}

// jobs reads the jobs' records in one snapshot, from the loop while the
// daemon runs.
func jobs(t *testing.T, d *daemon.Daemon, ids []fluid.ID) []job.Job {
	t.Helper()
	v, err := d.Loop().Do(context.Background(), func(tx *store.Tx, _ *jobmgr.Manager) (any, error) {
		return readJobs(tx, ids)
	})
	if err != nil {
		t.Fatal(err)
	}
	return v.([]job.Job)
}

func readJobs(tx *store.Tx, ids []fluid.ID) ([]job.Job, error) {
	var out []job.Job
	for _, id := range ids {
		rec, err := state.Load(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *rec.Job)
	}
	return out, nil
}

// waitInactive waits until every job is inactive and returns them.
func waitInactive(t *testing.T, d *daemon.Daemon, ids []fluid.ID) []job.Job {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		changed := d.Loop().Changed()
		js := jobs(t, d, ids)
		n := 0
		for _, j := range js {
			if j.State == job.Inactive {
				n++
			}
		}
		if n == len(ids) {
			return js
		}
		select {
		case <-changed:
		case <-d.Done():
			t.Fatalf("the daemon ended with jobs still active: %v", d.Wait())
		case <-deadline:
			t.Fatalf("%d of %d jobs inactive after 60s", n, len(ids))
		}
	}
}

// A daemon started in process runs what is submitted to it through its
// loop, on the exec agent it starts, and stops cleanly: its socket goes,
// its store is free again, and what it recorded stays.
func TestStartRunStop(t *testing.T) {
	opts := options(t, twoCores)
	d, err := daemon.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			d.Stop()
		}
	}()
	sock := server.SocketPath(opts.StateDir)
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("the socket does not answer: %v", err)
	}
	c.Close()

	ids := append(submit(t, d, 3, "true"), submit(t, d, 1, "false")...)
	got := waitInactive(t, d, ids)
	for i, j := range got {
		want := job.Completed
		if i == 3 {
			want = job.Failed
		}
		if j.Result != want || !j.Started {
			t.Errorf("job %d (%s): result %v, started %v; want %v, started", i, ids[i], j.Result, j.Started, want)
		}
	}
	agents, err := agent.Find(opts.StateDir)
	if err != nil || len(agents) != 1 || !daemontest.Alive(agents[0].PID) {
		t.Fatalf("exec agents %+v (%v), want one running", agents, err)
	}

	stopped = true
	if err := d.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is still there after stop: %v", err)
	}
	// The agent outlives the daemon, as it does fluxsched; stopped by its
	// pid, it leaves no process behind.
	if !daemontest.Alive(agents[0].PID) {
		t.Errorf("the exec agent %d ended with the daemon", agents[0].PID)
	}
	daemontest.StopAgents(t, opts.StateDir)
	if daemontest.Alive(agents[0].PID) {
		t.Errorf("the exec agent %d still runs", agents[0].PID)
	}
	// The store is free, and holds what the daemon did.
	st, err := store.Open(filepath.Join(opts.StateDir, "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("the store after stop: %v", err)
	}
	defer st.Close()
	err = st.View(func(tx *store.Tx) error {
		js, err := readJobs(tx, ids)
		for i, j := range js {
			if j.State != job.Inactive {
				t.Errorf("job %s stored as %v after stop", ids[i], j.State)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// While one daemon holds a state directory, a second is refused with the
// message fluxsched prints, and changes nothing; once the first stops, a
// new one starts.
func TestSecondStartRefused(t *testing.T) {
	opts := options(t, twoCores)
	d, err := daemon.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = daemon.Start(context.Background(), opts)
	want := fmt.Sprintf("another fluxsched holds this instance (%s)", opts.StateDir)
	if err == nil || err.Error() != want || !errors.Is(err, store.ErrBusy) {
		t.Errorf("second start: %v, want %q (store.ErrBusy)", err, want)
	}
	// The first still answers on its socket: the refused start removed
	// nothing of it.
	if c, err := net.Dial("unix", server.SocketPath(opts.StateDir)); err != nil {
		t.Errorf("the first daemon's socket after a refused start: %v", err)
	} else {
		c.Close()
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d2, err := daemon.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start after stop: %v", err)
	}
	if err := d2.Stop(); err != nil {
		t.Fatal(err)
	}
}

// Jobs submitted while no daemon ran are run at its start; with
// ExitOnIdle it ends by itself once none is active, as
// `fluxsched run --exit-on-idle` does.
func TestExitOnIdle(t *testing.T) {
	opts := options(t, twoCores)
	if err := os.MkdirAll(filepath.Join(opts.StateDir, "jobs"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(opts.StateDir, "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var ids []fluid.ID
	err = st.Update(func(tx *store.Tx) error {
		ids, _, err = state.Submit(tx, time.Now(), submitRequests(t, 4, []string{"true"}), nil)
		return err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	opts.ExitOnIdle = true
	d, err := daemon.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-time.After(60 * time.Second):
		d.Stop()
		t.Fatal("the daemon did not end within 60s with nothing left to run")
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(filepath.Join(opts.StateDir, "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.View(func(tx *store.Tx) error {
		js, err := readJobs(tx, ids)
		for i, j := range js {
			if j.State != job.Inactive || j.Result != job.Completed {
				t.Errorf("job %s: %v %v, want inactive and completed", ids[i], j.State, j.Result)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Canceling the context Start was given stops the daemon, as SIGTERM
// stops fluxsched run.
func TestContextEnds(t *testing.T) {
	opts := options(t, twoCores)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-d.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon still runs 30s after its context ended")
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(server.SocketPath(opts.StateDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is still there: %v", err)
	}
}

// Start refuses what it cannot run with one line saying why, and leaves
// no store open behind it.
func TestStartRefuses(t *testing.T) {
	tests := []struct {
		name    string
		change  func(o *daemon.Options)
		wantErr string
	}{
		{"no config", func(o *daemon.Options) { o.Config = nil }, "daemon: no config"},
		{"no agent command", func(o *daemon.Options) { o.AgentCommand = nil }, "daemon: no exec agent command"},
		{"unknown launcher", func(o *daemon.Options) { o.Config.Exec.Launcher = "rsh" }, `unknown launcher "rsh" (want local, ssh or command)`},
		{"ssh without hosts", func(o *daemon.Options) { o.Config.Exec.Launcher, o.Config.Resource.Config = "ssh", nil }, `launcher ssh needs the hosts it reaches in [[resource.config]]`},
		{"state directory is a file", func(o *daemon.Options) {
			os.WriteFile(o.StateDir, nil, 0o600)
		}, "state directory: mkdir "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := options(t, twoCores)
			if err := os.MkdirAll(filepath.Dir(opts.StateDir), 0o700); err != nil {
				t.Fatal(err)
			}
			tc.change(&opts)
			d, err := daemon.Start(context.Background(), opts)
			if err == nil {
				d.Stop()
				t.Fatalf("started, want %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q, want one containing %q", err, tc.wantErr)
			}
			// Nothing holds the store.
			if st, err := store.Open(filepath.Join(opts.StateDir, "fluxq.db"), store.Options{Timeout: 100 * time.Millisecond}); err == nil {
				st.Close()
			} else if errors.Is(err, store.ErrBusy) {
				t.Errorf("the store is still held after a refused start")
			}
		})
	}
}

// With SchedCmd the scheduler is a command speaking RFC 27 on its stdin
// and stdout; with Purge the session is torn down at the first turn. Jobs
// run as with the built-in scheduler.
func TestSchedCmdAndPurge(t *testing.T) {
	opts := options(t, twoCores)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.SchedCmd = self + " sched"
	opts.Purge = true
	d, err := daemon.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	if d.StateDir() != opts.StateDir {
		t.Errorf("StateDir %q, want %q", d.StateDir(), opts.StateDir)
	}
	ids := submit(t, d, 2, "true")
	for i, j := range waitInactive(t, d, ids) {
		if j.Result != job.Completed {
			t.Errorf("job %s: %v, want completed", ids[i], j.Result)
		}
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
}

// Without [[resource.config]] the instance is this machine, discovered:
// one node named for the host, with cores.
func TestInventoryDiscovers(t *testing.T) {
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := daemon.Inventory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	nodes := inv.Nodes()
	if len(nodes) != 1 || nodes[0].Hostname != host || nodes[0].Cores.Count() == 0 {
		t.Errorf("discovered %+v, want one node %q with cores", nodes, host)
	}
}

// An opened instance holds the store and runs nothing until served;
// closed, it frees the store. A daemon is served once; stopping one never
// served closes it; Run returns when its context ends.
func TestOpenServeClose(t *testing.T) {
	opts := options(t, twoCores)
	d, err := daemon.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.Open(opts); !errors.Is(err, store.ErrBusy) {
		t.Errorf("a second open of a held store: %v, want store.ErrBusy", err)
	}
	if _, err := os.Stat(server.SocketPath(opts.StateDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an opened instance listens before it is served (%v)", err)
	}
	d.Close()
	if err := d.Serve(context.Background()); err == nil {
		t.Error("a closed instance was served")
	}

	d, err = daemon.Open(opts)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("stop of an instance never served: %v", err)
	}
	d, err = daemon.Open(opts)
	if err != nil {
		t.Fatalf("open after stop: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	// Served: the socket answers.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("unix", server.SocketPath(opts.StateDir)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the socket did not answer within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.Serve(context.Background()); err == nil {
		t.Error("an instance was served twice")
	}
	cancel()
	if err := <-ran; err != nil {
		t.Errorf("Run: %v", err)
	}
}
