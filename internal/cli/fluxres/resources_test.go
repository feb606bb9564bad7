package fluxres

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/daemon/daemontest"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// TestMain lets this test binary be the exec agent the instance starts.
func TestMain(m *testing.M) {
	daemontest.AgentMain()
	os.Exit(m.Run())
}

// fourNodes is four two-core nodes, node3 with two GPUs.
const fourNodes = `
[[resource.config]]
hosts = "node[0-3]"
cores = "0-1"
[[resource.config]]
hosts = "node3"
gpus = "0-1"
properties = ["gpu"]
`

// startInstance serves an instance of fourNodes in process, as fluxsched
// run would, until the test ends; its exec agent is then stopped.
func startInstance(t *testing.T) (*daemon.Daemon, string) {
	t.Helper()
	d := daemontest.Start(t, fourNodes)
	return d, d.StateDir()
}

// fluxres runs fluxres in process on the instance of dir.
func fluxres(dir string, argv ...string) (int, string, string) {
	app := New()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	code := run(app, append([]string{"fluxres", "--state-dir", dir}, argv...))
	return code, out.String(), errOut.String()
}

// The inventory commands against a running instance, through its socket,
// as docs/cli.md "Inventory" shows them: info, list, status, drain and undrain
// with reasons, find by constraint, allocated and available.
func TestInventoryCommands(t *testing.T) {
	d, dir := startInstance(t)
	steps := []struct {
		args     []string
		wantCode int
		wantOut  []string // patterns stdout matches, line by line
		wantErr  string   // a pattern stderr matches
	}{
		{[]string{"info"}, 0, []string{`^4 Nodes, 8 Cores, 2 GPUs$`}, ""},
		{[]string{"list"}, 0, []string{`^STATE +NNODES +NCORES +NGPUS +NODELIST$`, `^free +4 +8 +2 +node\[0-3\]$`}, ""},
		{[]string{"list", "--json"}, 0, []string{`"state":"free"`}, ""},
		{[]string{"drain", "node1", "bad", "fan"}, 0, nil, ""},
		{[]string{"status"}, 0, []string{`drained +1 +node1 +bad fan`, `avail +3 +node\[0,2-3\]`}, ""},
		{[]string{"drain", "node1", "again"}, 1, nil, `^fluxres: drain: rank 1 already drained`},
		{[]string{"drain", "-f", "node1", "new", "reason"}, 0, nil, ""},
		{[]string{"status", "--json"}, 0, []string{`"state":"drained","reason":"new reason"`}, ""},
		{[]string{"list", "-s", "down", "-n"}, 0, []string{`^down +1 +2 +0 +node1$`}, ""},
		{[]string{"drain", "node9"}, 1, nil, `^fluxres: drain: unknown host "node9"$`},
		{[]string{"drain"}, 2, nil, `^fluxres: `},
		{[]string{"list", "-s", "bogus"}, 2, nil, `unknown state "bogus"`},
		{[]string{"undrain", "node1"}, 0, nil, ""},
		{[]string{"undrain", "node1"}, 1, nil, `rank 1 is not drained`},
		{[]string{"undrain"}, 2, nil, `^fluxres: `},
		{[]string{"find", "gpu"}, 0, []string{`^node3: rank3/core\[0-1\],gpu\[0-1\]`}, ""},
		{[]string{"find", "host:node[0-1]", "--json"}, 0, []string{`"nodelist":\["node\[0-1\]"\]`}, ""},
		{[]string{"find", "gpu and"}, 2, nil, `^fluxres: `},
		{[]string{"allocated"}, 0, []string{`0 Cores|^$`}, ""},
		{[]string{"available"}, 0, []string{`8 Cores`}, ""},
	}
	for _, s := range steps {
		code, out, errs := fluxres(dir, s.args...)
		if code != s.wantCode {
			t.Errorf("fluxres %s: exit %d, want %d; stdout %q, stderr %q", strings.Join(s.args, " "), code, s.wantCode, out, errs)
			continue
		}
		for _, p := range s.wantOut {
			if !regexp.MustCompile("(?m)" + p).MatchString(out) {
				t.Errorf("fluxres %s: stdout %q does not match %s", strings.Join(s.args, " "), out, p)
			}
		}
		if s.wantErr != "" && !regexp.MustCompile("(?m)"+s.wantErr).MatchString(errs) {
			t.Errorf("fluxres %s: stderr %q does not match %s", strings.Join(s.args, " "), errs, s.wantErr)
		}
		if s.wantErr == "" && errs != "" {
			t.Errorf("fluxres %s: stderr %q", strings.Join(s.args, " "), errs)
		}
	}

	// A running job of two cores: allocated, by job and in all, and
	// what is left available.
	id := submitSleep(t, d)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"allocated", id.String()}, `2 Cores`},
		{[]string{"allocated"}, `2 Cores`},
		{[]string{"available"}, `6 Cores`},
		{[]string{"allocated", "--json"}, `"R_lite"`},
		// Drained under a running job, a node is draining until it ends.
		{[]string{"drain", "node[0-3]", "maintenance"}, `^$`},
		{[]string{"status"}, `(?m)^ *draining +1 .*maintenance$`},
		{[]string{"status"}, `(?m)^ *drained +3 .*maintenance$`},
		{[]string{"undrain", "node[0-3]"}, `^$`},
	} {
		code, out, errs := fluxres(dir, s.args...)
		if code != 0 || !regexp.MustCompile(s.want).MatchString(out) {
			t.Errorf("fluxres %s: exit %d, stdout %q, stderr %q; want %s", strings.Join(s.args, " "), code, out, errs, s.want)
		}
	}
	if code, _, errs := fluxres(dir, "allocated", "nosuchjob"); code != 2 || errs == "" {
		t.Errorf("fluxres allocated nosuchjob: exit %d, stderr %q", code, errs)
	}
}

// submitSleep runs a two-task `sleep 30` and waits until it runs.
func submitSleep(t *testing.T, d *daemon.Daemon) fluid.ID {
	t.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{NTasks: 2, Command: []string{"sleep", "30"}, Cwd: "/tmp", Environment: map[string]string{"PATH": "/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	v, err := d.Loop().Do(context.Background(), func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := state.Submit(tx, jm.Now(), []state.SubmitRequest{{Jobspec: spec, UserID: uint32(os.Getuid()), Owner: true, Urgency: 16}}, nil)
		if err != nil {
			return nil, err
		}
		return ids, jm.Submitted(tx, recs)
	})
	if err != nil {
		t.Fatal(err)
	}
	id := v.([]fluid.ID)[0]
	deadline := time.After(30 * time.Second)
	for {
		changed := d.Loop().JobChanged(id)
		v, err := d.Loop().Do(context.Background(), func(tx *store.Tx, _ *jobmgr.Manager) (any, error) {
			rec, err := state.Load(tx, id)
			if err != nil {
				return nil, err
			}
			return rec.Job.State, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if v.(job.State) == job.Run {
			return id
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("job %s not running within 30s", id)
		}
	}
}
