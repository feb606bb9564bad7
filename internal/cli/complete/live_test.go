package complete_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/cli/complete"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/fluxq"
	"github.com/fluxq/fluxq/internal/cli/fluxres"
	"github.com/fluxq/fluxq/internal/daemon/daemontest"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// TestMain lets this test binary be the exec agent an instance starts.
func TestMain(m *testing.M) {
	daemontest.AgentMain()
	os.Exit(m.Run())
}

const liveTOML = `
[[resource.config]]
hosts = "node[0-1]"
cores = "0-1"
[queues.batch]
[queues.debug]
[policy.jobspec.defaults.system]
queue = "batch"
`

// liveInstance runs an instance of liveTOML in process, with node1
// drained and one held job, until the test ends.
func liveInstance(t *testing.T) (dir string, held fluid.ID) {
	t.Helper()
	d := daemontest.Start(t, liveTOML)
	dir = d.StateDir()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"sleep", "60"}, Name: "napper", Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	v, err := d.Loop().Do(context.Background(), func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := state.Submit(tx, jm.Now(), []state.SubmitRequest{{Jobspec: spec, UserID: uint32(os.Getuid()), Owner: true, Urgency: 0}}, nil)
		if err != nil {
			return nil, err
		}
		return ids, jm.Submitted(tx, recs)
	})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	app := fluxres.New()
	app.Writer, app.ErrWriter = &out, &errb
	if code := exitcode.Run(app, []string{"fluxres", "--state-dir", dir, "drain", "node1", "fan", "noise"}); code != 0 {
		t.Fatalf("drain: %d %s", code, errb.String())
	}
	return dir, v.([]fluid.ID)[0]
}

// The values a running instance offers: its named queues with their
// state, its jobs (a held one says so), its hosts (a drained one says
// so), and no reservation while none is active.
func TestLiveSource(t *testing.T) {
	dir, held := liveInstance(t)
	src := complete.Live(fluxq.New(), []string{"--state-dir", dir, "cancel", ""})
	defer src.Close()
	ctx := context.Background()

	qs, err := src.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantQ := []complete.Candidate{{Value: "batch", Desc: "default, enabled, stopped"}, {Value: "debug", Desc: "enabled, stopped"}}
	if diff := cmp.Diff(wantQ, qs); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	jobs, err := src.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]complete.Job{{ID: held, State: "held", Name: "napper"}}, jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	hosts, err := src.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name+":"+strconv.FormatBool(h.Drained))
	}
	if got := strings.Join(names, " "); got != "node0:false node1:true" {
		t.Errorf("hosts %s, want node0:false node1:true", got)
	}
	if rs, err := src.Reservations(ctx); err != nil || len(rs) != 0 {
		t.Errorf("reservations %v, %v; want none", rs, err)
	}
}

// The hidden __complete command, as the shell scripts call it, against
// the running instance; and the completion command that prints them.
func TestHiddenCommand(t *testing.T) {
	dir, held := liveInstance(t)
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		app := fluxq.New()
		app.Writer, app.ErrWriter = &out, &errb
		code := exitcode.Run(app, append([]string{"fluxq"}, args...))
		return code, out.String(), errb.String()
	}
	heldID, _ := held.Encode(fluid.F58)
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"--state-dir", dir, "queue", "start", ""}, "batch\tdefault, enabled, stopped\ndebug\tenabled, stopped\n"},
		{[]string{"--state-dir", dir, "cancel", ""}, heldID + "\theld napper\n"},
		{[]string{"--state-dir", dir, "queue", "start", "d"}, "debug\tenabled, stopped\n"},
	} {
		code, out, errs := run(append([]string{complete.HiddenName}, tc.words...)...)
		if code != 0 || out != tc.want || errs != "" {
			t.Errorf("__complete %q: exit %d, stdout %q, stderr %q; want %q", tc.words, code, out, errs, tc.want)
		}
	}
	code, out, errs := run("completion", "bash")
	if code != 0 || !strings.Contains(out, "fluxq __complete") || errs != "" {
		t.Errorf("completion bash: exit %d, stderr %q, stdout:\n%.200s", code, errs, out)
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}} {
		code, out, errs = run(args...)
		if code == 0 || out != "" || !strings.HasPrefix(errs, "fluxq: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want an error", args, code, out, errs)
		}
	}
}
