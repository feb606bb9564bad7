package fluxq

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/daemon/daemontest"
)

// TestMain lets this test binary be the exec agent an instance starts.
func TestMain(m *testing.M) {
	daemontest.AgentMain()
	os.Exit(m.Run())
}

// queuesTOML is queue_admin.txtar's config: three named queues.
const queuesTOML = `
[[resource.config]]
hosts = "node[0-1]"
cores = "0-1"
[policy.jobspec.defaults.system]
queue = "batch"
duration = "1h"
[queues.batch]
[queues.debug]
[queues.debug.policy.limits]
duration = "1m"
job-size.max.ncores = 1
job-size.max.nnodes = 1
[queues.expedite]
parent = "batch"
`

// liveInstance is a state directory whose daemon the test starts and stops.
type liveInstance struct {
	opts daemon.Options
	d    *daemon.Daemon
}

func newInstance(t *testing.T, toml string) *liveInstance {
	t.Helper()
	in := &liveInstance{opts: daemontest.Options(t, toml)}
	t.Cleanup(func() { in.stop(t) })
	return in
}

func (in *liveInstance) start(t *testing.T) {
	t.Helper()
	d, err := daemon.Start(context.Background(), in.opts)
	if err != nil {
		t.Fatal(err)
	}
	in.d = d
}

func (in *liveInstance) stop(t *testing.T) {
	if in.d == nil {
		return
	}
	if err := in.d.Stop(); err != nil {
		t.Error(err)
	}
	in.d = nil
}

// fluxq runs fluxq in process on the instance, as Main does.
func (in *liveInstance) fluxq(argv ...string) (int, string, string) {
	e := defaultEnv()
	var out, errb bytes.Buffer
	e.stdout, e.stderr, e.signals = &out, &errb, nil
	code := runApp(e, append([]string{"fluxq", "--state-dir", in.opts.StateDir}, argv...))
	return code, out.String(), errb.String()
}

// step is one fluxq command and what it must print.
type step struct {
	args     []string
	wantCode int
	wantOut  string // the exact stdout, or a pattern if it starts with ~
	wantErr  string // a pattern stderr matches; "" for no stderr
}

func (in *liveInstance) run(t *testing.T, steps []step) {
	t.Helper()
	for _, s := range steps {
		code, out, errs := in.fluxq(s.args...)
		name := "fluxq " + strings.Join(s.args, " ")
		if code != s.wantCode {
			t.Errorf("%s: exit %d, want %d; stdout %q, stderr %q", name, code, s.wantCode, out, errs)
			continue
		}
		if p, ok := strings.CutPrefix(s.wantOut, "~"); ok {
			if !regexp.MustCompile("(?m)" + p).MatchString(out) {
				t.Errorf("%s: stdout %q does not match %s", name, out, p)
			}
		} else if out != s.wantOut {
			t.Errorf("%s: stdout\n%s\nwant\n%s", name, out, s.wantOut)
		}
		if s.wantErr == "" && errs != "" || s.wantErr != "" && !regexp.MustCompile("(?m)"+s.wantErr).MatchString(errs) {
			t.Errorf("%s: stderr %q, want %q", name, errs, s.wantErr)
		}
	}
}

// The queue commands against a running instance with named queues, as
// queue_admin.txtar runs them, and the state they leave across a restart
// (--nocheckpoint changes only the running instance).
func TestQueueAdmin(t *testing.T) {
	in := newInstance(t, queuesTOML)
	in.start(t)
	in.run(t, []step{
		{[]string{"queue", "status"}, 0, "batch: Job submission is enabled\nbatch: Scheduling is stopped\n" +
			"debug: Job submission is enabled\ndebug: Scheduling is stopped\n" +
			"expedite: Job submission is enabled\nexpedite: Scheduling is stopped\n", ""},
		{[]string{"queue", "list"}, 0, "QUEUE    PARENT EN ST TDEFAULT TLIMIT NNODES NCORES NGPUS\n" +
			"batch*          ✔  ✗        1h    inf  0-inf  0-inf 0-inf\n" +
			"debug           ✔  ✗        1h     1m    0-1    0-1 0-inf\n" +
			"expedite batch  ✔  ✗        1h    inf  0-inf  0-inf 0-inf\n", ""},
		{[]string{"queue", "list", "-q", "debug", "-n"}, 0, "~^debug +✔ +✗ +1h +1m +0-1 +0-1 +0-inf$", ""},
		{[]string{"queue", "list", "--json"}, 0, `~"name":"expedite","default":false,"parent":"batch"`, ""},
		{[]string{"queue", "list", "-n", "-o", "{{.name}}:{{.enabled}}:{{.started}}"}, 0, "batch:true:false\ndebug:true:false\nexpedite:true:false\n", ""},
		{[]string{"queue", "list", "-q", "nosuch"}, 1, "", `^fluxq: queue list: 'nosuch' is not a valid queue$`},
		{[]string{"queue", "start"}, 1, "", `^fluxq: queue start: Named queues are defined. Specify a queue or use --all.$`},
		{[]string{"queue", "disable"}, 1, "", `Named queues are defined. Specify a queue or use --all.`},
		{[]string{"queue", "stop", "nosuch"}, 1, "", `^fluxq: queue stop: 'nosuch' is not a valid queue$`},
		{[]string{"queue", "start", "a", "b"}, 2, "", `^fluxq: `},
		{[]string{"queue", "status", "batch", "debug"}, 2, "", `^fluxq: `},
		{[]string{"queue", "start", "--all"}, 0, "batch: Scheduling is started\ndebug: Scheduling is started\nexpedite: Scheduling is started\n", ""},
		{[]string{"queue", "stop", "-m", "admin hold", "batch"}, 0, "batch: Scheduling is stopped: admin hold\n", ""},
		{[]string{"queue", "status", "expedite"}, 0, "expedite: Job submission is enabled\nexpedite: Scheduling is stopped: parent queue 'batch' is stopped\n", ""},
		{[]string{"queue", "disable", "-m", "maintenance window", "debug"}, 0, "debug: Job submission is disabled: maintenance window\n", ""},
		{[]string{"queue", "stop", "--nocheckpoint", "debug"}, 0, "debug: Scheduling is stopped\n", ""},
		{[]string{"queue", "status", "-v", "debug"}, 0, "debug: Job submission is disabled: maintenance window\ndebug: Scheduling is stopped\n" +
			"debug: 0 alloc requests queued\ndebug: 0 alloc requests pending to scheduler\ndebug: 0 running jobs\n", ""},
		// Nothing is active: drain and idle return at once.
		{[]string{"queue", "drain", "-t", "10s"}, 0, "", ""},
		{[]string{"queue", "drain", "debug"}, 0, "", ""},
		{[]string{"queue", "idle", "batch"}, 0, "0 jobs\n", ""},
		{[]string{"queue", "idle", "--quiet"}, 0, "", ""},
		{[]string{"queue", "drain", "-t", "soon"}, 2, "", `^fluxq: queue drain: `},
		{[]string{"queue", "idle", "nosuch"}, 1, "", `'nosuch' is not a valid queue`},
	})

	// The state survives a restart; the --nocheckpoint stop does not.
	in.stop(t)
	in.run(t, []step{{[]string{"queue", "status"}, 0, "batch: Job submission is enabled\nbatch: Scheduling is stopped: admin hold\n" +
		"debug: Job submission is disabled: maintenance window\ndebug: Scheduling is stopped\n" +
		"expedite: Job submission is enabled\nexpedite: Scheduling is stopped: parent queue 'batch' is stopped\n", ""}})
	in.start(t)
	in.run(t, []step{
		{[]string{"queue", "status"}, 0, "batch: Job submission is enabled\nbatch: Scheduling is stopped: admin hold\n" +
			"debug: Job submission is disabled: maintenance window\ndebug: Scheduling is started\n" +
			"expedite: Job submission is enabled\nexpedite: Scheduling is stopped: parent queue 'batch' is stopped\n", ""},
		{[]string{"queue", "enable", "debug"}, 0, "debug: Job submission is enabled\n", ""},
		{[]string{"queue", "enable", "--all"}, 0, "~^batch: Job submission is enabled$", ""},
	})
}

// With no [queues] there is one anonymous queue, and the commands take
// no queue name.
func TestQueueAnonymous(t *testing.T) {
	in := newInstance(t, "[[resource.config]]\nhosts = \"node0\"\ncores = \"0-1\"\n")
	in.start(t)
	in.run(t, []step{
		{[]string{"queue", "status"}, 0, "Job submission is enabled\nScheduling is started\n", ""},
		{[]string{"queue", "stop"}, 0, "Scheduling is stopped\n", ""},
		{[]string{"queue", "start"}, 0, "Scheduling is started\n", ""},
		{[]string{"queue", "disable"}, 0, "~^Job submission is disabled", ""},
		{[]string{"queue", "enable"}, 0, "Job submission is enabled\n", ""},
		{[]string{"queue", "status", "batch"}, 1, "", `^fluxq: queue status: 'batch' is not a valid queue$`},
		{[]string{"queue", "list"}, 0, "~^QUEUE", ""},
	})
}
