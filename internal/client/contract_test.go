package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/server"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// The contract suite: every entry of the api table, called through the
// direct transport (the store, no loop) and through the socket transport
// (a real server and loop over a real store), must give the same results,
// the same errors — message, kind (errors.Is) and exit code — on both.

// instanceDir makes a state directory as fluxsched leaves it: an
// inventory of two nodes and the anonymous queue, started.
func instanceDir(t *testing.T) (string, *rset.R) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, state.JobsFolder), 0o700); err != nil {
		t.Fatal(err)
	}
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")},
		{Rank: 1, Hostname: "node1", Cores: idset.MustParse("0-1")},
	})
	raw, err := inv.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, state.StoreFile), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		_, err := state.StartQueues(tx, queue.Anonymous())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir, inv
}

// directClient is the direct transport alone over dir.
func directClient(dir string) Client {
	return &conn{t: newDirect(Options{StateDir: dir, Timeout: 2 * time.Second})}
}

// idleExec is an exec service that never runs anything: the suite's jobs
// are held (urgency 0), so the two paths see them in the same states.
func idleExec(c wire.Conn) {
	hello, _ := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: "job-exec"})
	if c.Send(hello) != nil {
		return
	}
	for {
		if _, err := c.Recv(); err != nil {
			return
		}
	}
}

// socketClient starts a loop and its server over dir, as fluxsched does,
// and returns the socket transport alone, stopped at the test's end.
func socketClient(t *testing.T, dir string, inv *rset.R) Client {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, state.StoreFile), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var qs map[string]queue.State
	err = st.View(func(tx *store.Tx) error {
		var err error
		qs, err = state.QueueStates(tx, queue.Anonymous())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	owner := uint32(os.Getuid())
	jm := jobmgr.New(jobmgr.Config{Inventory: inv, Owner: owner})
	jm.SetQueues(queue.Anonymous(), qs)
	schedConn, schedEnd := wire.Pipe()
	execConn, execEnd := wire.Pipe()
	go sched.Run(schedEnd, sched.Options{Default: sched.DefaultPolicy(), Limit: 8})
	go idleExec(execEnd)
	l := loop.New(st, jm, loop.Once(schedConn), loop.Once(execConn), nil)
	path := server.SocketPath(dir)
	ln, err := server.Listen(path, false)
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{Store: st, Loop: l, JobsDir: filepath.Join(dir, state.JobsFolder), Owner: owner}
	ctx, cancel := context.WithCancel(context.Background())
	ran, served := make(chan error, 1), make(chan error, 1)
	go func() { ran <- l.Run(ctx) }()
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("loop: %v", err)
		}
		<-served
		schedConn.Close()
		execConn.Close()
		st.Close()
	})
	return &conn{t: &socket{path: path, timeout: 5 * time.Second}}
}

// outcome is what one call gave, in the terms the two paths must agree
// on: the result, normalised where the paths rightly differ (ids, times,
// states a loop moves on), and the error's message, kinds and exit code.
type outcome struct {
	Result any
	Err    string
	Kinds  []string
	Exit   int
}

// kinds are the sentinels a command may test an error against.
var kinds = map[string]error{
	"unknown-job":     api.ErrUnknownJob,
	"permission":      api.ErrPermission,
	"inactive":        api.ErrInactive,
	"urgency-running": api.ErrUrgencyRunning,
	"needs-instance":  api.ErrNeedsInstance,
	"unavailable":     api.ErrUnavailable,
}

func outcomeOf(result any, err error) outcome {
	o := outcome{Result: result, Exit: exitcode.Code(err)}
	if err != nil {
		o.Result = nil
		o.Err = err.Error()
		for name, k := range kinds {
			if errors.Is(err, k) {
				o.Kinds = append(o.Kinds, name)
			}
		}
		var re *reservation.Error
		if errors.As(err, &re) {
			o.Kinds = append(o.Kinds, fmt.Sprintf("reservation(%d)", re.Status))
		}
		slices.Sort(o.Kinds)
	}
	return o
}

// fixture is what a path's calls refer to: the jobs submitted so far.
type fixture struct {
	held, other fluid.ID
}

// contractCase is one call of one entry; want checks what both paths
// gave (each must, and they must be equal).
type contractCase struct {
	name   string
	method api.Spec
	call   func(ctx context.Context, c Client, f *fixture) (any, error)
	want   func(t *testing.T, o outcome)
}

func spec(t *testing.T, name string) json.RawMessage {
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// failsWith checks an error's kinds and exit code.
func failsWith(kinds []string, exit int) func(*testing.T, outcome) {
	return func(t *testing.T, o outcome) {
		t.Helper()
		if o.Err == "" || !slices.Equal(o.Kinds, kinds) || o.Exit != exit {
			t.Errorf("got %+v, want an error of kinds %v, exit %d", o, kinds, exit)
		}
	}
}

func succeeds(check func(t *testing.T, r any)) func(*testing.T, outcome) {
	return func(t *testing.T, o outcome) {
		t.Helper()
		if o.Err != "" || o.Exit != 0 {
			t.Fatalf("got error %q (exit %d)", o.Err, o.Exit)
		}
		if check != nil {
			check(t, o.Result)
		}
	}
}

const unknownID = fluid.ID(123456789)

// summaryView is a job summary without what differs between a job the
// loop has moved on and one only stored: its state while active, times
// and priority.
type summaryView struct {
	Name    string
	State   job.State
	Result  job.Result
	Urgency int
	Own     bool
}

func view(s api.JobSummary) summaryView {
	v := summaryView{Name: s.Name, Urgency: s.Urgency, Own: s.UserID == uint32(os.Getuid()), Result: s.Result}
	if s.State == job.Inactive {
		v.State = s.State
	}
	return v
}

func contractCases(t *testing.T) []contractCase {
	return []contractCase{
		{"submit", api.Submit.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			ids, err := c.Submit(ctx, []api.SubmitJob{{Jobspec: spec(t, "held"), Urgency: 0}, {Jobspec: spec(t, "other"), Urgency: 0}})
			if len(ids) == 2 {
				f.held, f.other = ids[0], ids[1]
			}
			return len(ids), err
		}, succeeds(func(t *testing.T, r any) {
			if r != 2 {
				t.Errorf("submitted %v jobs, want 2", r)
			}
		})},
		{"submit/bad-jobspec", api.Submit.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.Submit(ctx, []api.SubmitJob{{Jobspec: json.RawMessage(`{"version":1}`), Urgency: 16}})
		}, failsWith(nil, exitcode.Failed)},
		{"submit/guest-urgency-range", api.Submit.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.Submit(ctx, []api.SubmitJob{{Jobspec: spec(t, "x"), Urgency: 99}})
		}, failsWith(nil, exitcode.Failed)},
		{"jobs", api.Jobs.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			sums, err := c.Jobs(ctx, api.JobsQuery{IDs: []fluid.ID{f.held, f.other}})
			var out []summaryView
			for _, s := range sums {
				out = append(out, view(s))
			}
			return out, err
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]summaryView); len(got) != 2 || got[0].Name != "held" || got[1].Name != "other" {
				t.Errorf("jobs = %+v", got)
			}
		})},
		{"jobs/unknown-id", api.Jobs.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.Jobs(ctx, api.JobsQuery{IDs: []fluid.ID{unknownID}})
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		{"job", api.Job.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			info, err := c.Job(ctx, f.held)
			if err != nil {
				return nil, err
			}
			return []any{view(info.Summary), len(info.Jobspec) > 0, info.Eventlog[0].Name, filepath.Base(info.JobDir) == strconv.FormatUint(uint64(f.held), 10)}, nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]any); got[0].(summaryView).Name != "held" || got[1] != true || got[2] != "submit" || got[3] != true {
				t.Errorf("job = %+v", got)
			}
		})},
		{"job/unknown-id", api.Job.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.Job(ctx, unknownID)
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		{"urgency", api.Urgency.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			return nil, c.Urgency(ctx, f.other, 0)
		}, succeeds(nil)},
		{"urgency/unknown-id", api.Urgency.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return nil, c.Urgency(ctx, unknownID, 3)
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		{"update", api.Update.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			res, err := Call(ctx, c, api.Update, api.UpdateParams{ID: f.other, Updates: []api.JobUpdate{{Key: "name", Value: json.RawMessage(`"renamed"`)}}}, nil)
			if err != nil {
				return nil, err
			}
			return res.Updated, nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.(map[string]any); got["attributes.system.job.name"] != "renamed" || len(got) != 1 {
				t.Errorf("updated = %v", got)
			}
		})},
		{"update/unknown-id", api.Update.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return Call(ctx, c, api.Update, api.UpdateParams{ID: unknownID, Updates: []api.JobUpdate{{Key: "name", Value: json.RawMessage(`"x"`)}}}, nil)
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		{"events", api.Events.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			var names []string
			err := c.Events(ctx, f.held, false, func(e eventlog.Event) error {
				names = append(names, e.Name)
				return nil
			})
			if len(names) > 0 {
				return names[0], err
			}
			return nil, err
		}, succeeds(func(t *testing.T, r any) {
			if r != "submit" {
				t.Errorf("first event %v, want submit", r)
			}
		})},
		{"events/unknown-id", api.Events.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return nil, c.Events(ctx, unknownID, false, func(eventlog.Event) error { return nil })
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		{"cancel", api.Cancel.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			errs, err := c.Cancel(ctx, []fluid.ID{f.held, unknownID}, "contract")
			if err != nil {
				return nil, err
			}
			out := make([]outcome, len(errs))
			for i, e := range errs {
				out[i] = outcomeOf(nil, e)
			}
			return out, nil
		}, succeeds(func(t *testing.T, r any) {
			got := r.([]outcome)
			if len(got) != 2 || got[0].Err != "" || !slices.Equal(got[1].Kinds, []string{"unknown-job"}) || got[1].Exit != exitcode.Failed {
				t.Errorf("cancel = %+v", got)
			}
		})},
		// The other job (renamed by the update above) is the one active
		// job of that name: counted, not cancelled (a dry run).
		{"cancel-all/dry-run", api.CancelAll.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			return Call(ctx, c, api.CancelAll, api.CancelAllParams{Query: api.JobsQuery{Name: "renamed"}, DryRun: true}, nil)
		}, succeeds(func(t *testing.T, r any) {
			if got := r.(api.CancelAllResult); got.Matched != 1 || len(got.Failed) != 0 {
				t.Errorf("cancel-all -n = %+v, want 1 matched", got)
			}
		})},
		{"cancel-all/none", api.CancelAll.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			return Call(ctx, c, api.CancelAll, api.CancelAllParams{Query: api.JobsQuery{Name: "no such job"}, Note: "contract"}, nil)
		}, succeeds(func(t *testing.T, r any) {
			if got := r.(api.CancelAllResult); got.Matched != 0 || len(got.Failed) != 0 {
				t.Errorf("cancel-all of none = %+v", got)
			}
		})},
		{"wait", api.Wait.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			s, err := c.Wait(ctx, f.held)
			if err != nil {
				return nil, err
			}
			return view(*s), nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.(summaryView); got.State != job.Inactive || got.Result != job.Canceled {
				t.Errorf("wait = %+v", got)
			}
		})},
		{"wait/unknown-id", api.Wait.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.Wait(ctx, unknownID)
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		{"wait-all", api.WaitAll.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			var got []summaryView
			_, err := Call(ctx, c, api.WaitAll, api.IDsParams{IDs: []fluid.ID{f.held, f.held}}, func(s api.JobSummary) error {
				got = append(got, view(s))
				return nil
			})
			return got, err
		}, succeeds(func(t *testing.T, r any) {
			got := r.([]summaryView)
			if len(got) != 2 || got[0].State != job.Inactive || got[1].Result != job.Canceled {
				t.Errorf("wait-all = %+v", got)
			}
		})},
		{"wait-all/unknown-id", api.WaitAll.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			_, err := Call(ctx, c, api.WaitAll, api.IDsParams{IDs: []fluid.ID{f.held, unknownID}}, func(api.JobSummary) error { return nil })
			return nil, err
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		// The held job has ended (canceled) and is waitable: a reap takes
		// it once, passing over an unknown id, and none is left to take.
		{"reap", api.Reap.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			took, err := Call(ctx, c, api.Reap, api.ReapParams{IDs: []fluid.ID{f.held, f.held, unknownID}}, nil)
			return slices.Equal(took, []fluid.ID{f.held}), err
		}, succeeds(func(t *testing.T, r any) {
			if r != true {
				t.Error("reap did not take the ended job once")
			}
		})},
		{"reap/all-taken", api.Reap.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			took, err := Call(ctx, c, api.Reap, api.ReapParams{All: true}, nil)
			return len(took), err
		}, succeeds(func(t *testing.T, r any) {
			if r != 0 {
				t.Errorf("reap --all took %v jobs, want none (the other is active)", r)
			}
		})},
		{"cancel/inactive", api.Cancel.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			errs, err := c.Cancel(ctx, []fluid.ID{f.held}, "")
			if err != nil {
				return nil, err
			}
			return nil, errs[0]
		}, failsWith([]string{"inactive"}, exitcode.Failed)},
		{"update/inactive", api.Update.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			return Call(ctx, c, api.Update, api.UpdateParams{ID: f.held, Updates: []api.JobUpdate{{Key: "urgency", Value: json.RawMessage(`3`)}}}, nil)
		}, failsWith([]string{"inactive"}, exitcode.Failed)},
		{"urgency/inactive", api.Urgency.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			return nil, c.Urgency(ctx, f.held, 3)
		}, failsWith([]string{"inactive"}, exitcode.Failed)},
		// The held job is inactive (canceled): resubmit makes a new job of
		// its jobspec, linked both ways.
		{"resubmit", api.Resubmit.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			id, err := Call(ctx, c, api.Resubmit, api.IDParams{ID: f.held}, nil)
			if err != nil {
				return nil, err
			}
			made, err := c.Job(ctx, id)
			if err != nil {
				return nil, err
			}
			old, err := c.Job(ctx, f.held)
			if err != nil {
				return nil, err
			}
			// Gone again, so that the cases below count the jobs they did.
			if _, err := c.Cancel(ctx, []fluid.ID{id}, ""); err != nil {
				return nil, err
			}
			if _, err := Call(ctx, c, api.Purge, api.PurgeParams{AgeLimit: -1, NumLimit: -1, IDs: []fluid.ID{id}, Force: true}, nil); err != nil {
				return nil, err
			}
			return []any{made.Summary.Name, *made.Summary.AgainOf == f.held, slices.Equal(old.Resubmitted, []fluid.ID{id})}, nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]any); got[0] != "held" || got[1] != true || got[2] != true {
				t.Errorf("resubmit = %+v", got)
			}
		})},
		{"resubmit/unknown-id", api.Resubmit.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return Call(ctx, c, api.Resubmit, api.IDParams{ID: unknownID}, nil)
		}, failsWith([]string{"unknown-job"}, exitcode.Failed)},
		{"job-output/local", api.JobOutput.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			// The instance's jobs run on its machine: their output is in
			// their folders, on both paths (ssh_attach.txtar reads it
			// through the agents of other hosts).
			return Call(ctx, c, api.JobOutput, api.OutputParams{ID: f.other}, nil)
		}, failsWith(nil, exitcode.Failed)},
		{"stats", api.Stats.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			st, err := Call(ctx, c, api.Stats, api.None{}, nil)
			if err != nil {
				return nil, err
			}
			return []int{st.Total, st.States["INACTIVE"], st.Results["CANCELED"]}, nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]int); !slices.Equal(got, []int{2, 1, 1}) {
				t.Errorf("stats (total, inactive, canceled) = %v", got)
			}
		})},
		{"resources", api.Resources.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			res, err := c.Resources(ctx)
			if err != nil {
				return nil, err
			}
			return []any{len(res.Inventory) > 0, string(res.Allocated), res.Drained, res.Draining}, nil
		}, succeeds(nil)},
		{"drain", api.Drain.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			if err := c.Drain(ctx, "1", "contract", false); err != nil {
				return nil, err
			}
			res, err := c.Resources(ctx)
			if err != nil {
				return nil, err
			}
			return []any{len(res.Drained), res.Drained[0].Rank, res.Drained[0].Reason}, nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]any); got[0] != 1 || got[1] != uint(1) || got[2] != "contract" {
				t.Errorf("drained = %v", got)
			}
		})},
		{"drain/bad-target", api.Drain.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return nil, c.Drain(ctx, "7", "x", false)
		}, failsWith(nil, exitcode.Failed)},
		{"undrain", api.Undrain.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			if err := c.Undrain(ctx, "1"); err != nil {
				return nil, err
			}
			res, err := c.Resources(ctx)
			if err != nil {
				return nil, err
			}
			return len(res.Drained), nil
		}, succeeds(func(t *testing.T, r any) {
			if r != 0 {
				t.Errorf("%v ranks drained after undrain", r)
			}
		})},
		{"undrain/not-drained", api.Undrain.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return nil, c.Undrain(ctx, "0")
		}, failsWith(nil, exitcode.Failed)},
		{"queues", api.Queues.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			qi, err := c.Queues(ctx)
			if err != nil {
				return nil, err
			}
			return []any{qi.Set.Names(), qi.States[""].Enabled, qi.Counts[""].Active}, nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]any); got[2] != 1 {
				t.Errorf("queues (names, enabled, active) = %v", got)
			}
		})},
		{"queue-change", api.ChangeQueues.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			off := false
			qi, err := c.ChangeQueues(ctx, api.QueueChange{All: true, Enable: &off, Reason: "contract"})
			if err != nil {
				return nil, err
			}
			return []any{qi.Changed, qi.States[""].Enabled}, nil
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]any); got[1] != false {
				t.Errorf("queue-change (changed, enabled) = %v", got)
			}
		})},
		{"queue-change/unknown-queue", api.ChangeQueues.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			on := true
			return c.ChangeQueues(ctx, api.QueueChange{Queue: "nosuch", Enable: &on})
		}, failsWith(nil, exitcode.Failed)},
		{"queue-change/reason-lines", api.ChangeQueues.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			on := false
			return c.ChangeQueues(ctx, api.QueueChange{All: true, Enable: &on, Reason: "a\nb"})
		}, failsWith(nil, exitcode.Failed)},
		{"queue-wait", api.WaitQueues.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			// The other job is still active: cancel it, then wait for
			// the instance to drain.
			if _, err := c.Cancel(ctx, []fluid.ID{f.other}, ""); err != nil {
				return nil, err
			}
			return c.WaitQueues(ctx, api.QueueWait{}, nil)
		}, succeeds(func(t *testing.T, r any) {
			if got := r.(api.QueueCounts); got != (api.QueueCounts{}) {
				t.Errorf("queue-wait = %+v", got)
			}
		})},
		{"queue-wait/unknown-queue", api.WaitQueues.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.WaitQueues(ctx, api.QueueWait{Queue: "nosuch"}, nil)
		}, failsWith(nil, exitcode.Failed)},
		{"reservations", api.Reservations.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			l, err := c.Reservations(ctx, true)
			if err != nil {
				return nil, err
			}
			return []int{len(l.Reservations), len(l.Nodes)}, nil
		}, succeeds(nil)},
		{"tool-events", api.ToolEvents.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			n := 0
			err := c.ToolEvents(ctx, false, func(api.ToolEvent) error { n++; return nil })
			return n, err
		}, succeeds(func(t *testing.T, r any) {
			if r != 0 {
				t.Errorf("%v tool events, want none", r)
			}
		})},
		{"spare-add", api.AddSpares.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.AddSpares(ctx, api.SpareParams{Hosts: "spare[1-2]", Cores: "0-1"})
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]string); !slices.Equal(got, []string{"spare1", "spare2"}) {
				t.Errorf("spare-add = %v", got)
			}
		})},
		{"spare-add/bad-hostlist", api.AddSpares.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return c.AddSpares(ctx, api.SpareParams{Hosts: "spare[", Cores: "0-1"})
		}, failsWith(nil, exitcode.Failed)},
		{"node-remove", api.RemoveNodes.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			if err := c.RemoveNodes(ctx, "spare1"); err != nil {
				return nil, err
			}
			l, err := c.Reservations(ctx, true)
			if err != nil {
				return nil, err
			}
			var names []string
			for _, n := range l.Nodes {
				names = append(names, n.Name)
			}
			return names, nil
		}, succeeds(nil)},
		{"node-remove/bad-hostlist", api.RemoveNodes.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return nil, c.RemoveNodes(ctx, "spare[")
		}, failsWith(nil, exitcode.Failed)},
		// Last: they remove the canceled job the cases above read.
		{"purge/count", api.Purge.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			r, err := Call(ctx, c, api.Purge, api.PurgeParams{AgeLimit: -1, NumLimit: 0}, nil)
			return []int{r.Count, r.Inactive}, err
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]int); !slices.Equal(got, []int{2, 2}) {
				t.Errorf("purge without force (count, inactive) = %v, want [2 2]", got)
			}
		})},
		{"purge/ids", api.Purge.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			r, err := Call(ctx, c, api.Purge, api.PurgeParams{AgeLimit: -1, NumLimit: -1, IDs: []fluid.ID{f.held, unknownID}}, nil)
			out := []outcome{outcomeOf(r.Count, nil)}
			for _, e := range r.Errors {
				if e == nil {
					out = append(out, outcomeOf(nil, nil))
					continue
				}
				out = append(out, outcomeOf(nil, e))
			}
			return out, err
		}, succeeds(func(t *testing.T, r any) {
			got := r.([]outcome)
			if len(got) != 3 || got[0].Result != 1 || got[1].Err != "" || !slices.Equal(got[2].Kinds, []string{"unknown-job"}) {
				t.Errorf("purge of an inactive and an unknown job, without force = %+v", got)
			}
		})},
		{"purge/bad-batch", api.Purge.Spec, func(ctx context.Context, c Client, _ *fixture) (any, error) {
			return Call(ctx, c, api.Purge, api.PurgeParams{AgeLimit: -1, NumLimit: 0, Batch: 101, Force: true}, nil)
		}, failsWith(nil, exitcode.Failed)},
		{"purge/force", api.Purge.Spec, func(ctx context.Context, c Client, f *fixture) (any, error) {
			r, err := Call(ctx, c, api.Purge, api.PurgeParams{AgeLimit: -1, NumLimit: -1, Force: true, IDs: []fluid.ID{f.held}}, nil)
			if err != nil {
				return nil, err
			}
			_, gone := c.Job(ctx, f.held)
			st, err := c.Stats(ctx)
			return []any{r.Count, r.Inactive, errors.Is(gone, api.ErrUnknownJob), st.Total}, err
		}, succeeds(func(t *testing.T, r any) {
			if got := r.([]any); !reflect.DeepEqual(got, []any{1, 1, true, 1}) {
				t.Errorf("purge --force of the canceled job (count, inactive, gone, total) = %v, want [1 1 true 1]", got)
			}
		})},
	}
}

// TestContract runs every case through both transports, in order, each
// over its own fresh instance, and holds them to the same outcomes.
func TestContract(t *testing.T) {
	cases := contractCases(t)
	run := func(c Client) []outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var f fixture
		out := make([]outcome, len(cases))
		for i, tc := range cases {
			out[i] = outcomeOf(tc.call(ctx, c, &f))
		}
		return out
	}
	ddir, _ := instanceDir(t)
	direct := run(directClient(ddir))
	sdir, inv := instanceDir(t)
	sock := run(socketClient(t, sdir, inv))
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("direct", func(t *testing.T) { tc.want(t, direct[i]) })
			t.Run("socket", func(t *testing.T) { tc.want(t, sock[i]) })
			if !reflect.DeepEqual(direct[i], sock[i]) {
				t.Errorf("the paths differ:\ndirect: %+v\nsocket: %+v", direct[i], sock[i])
			}
		})
	}
}

// Reserve is the one entry the paths answer differently, by design: the
// scheduler that grants reservations runs in fluxsched, so the direct
// path refuses every request with ErrNeedsInstance (exit 1), and the
// socket path answers the scheduler's refusals as *reservation.Error,
// exiting with their PMIx status.
func TestContractReserve(t *testing.T) {
	ctx := context.Background()
	bad := api.ReserveParams{Op: "bogus"}
	ddir, _ := instanceDir(t)
	o := outcomeOf(directClient(ddir).Reserve(ctx, bad))
	if !slices.Equal(o.Kinds, []string{"needs-instance"}) || o.Exit != exitcode.Failed || o.Err != api.ErrNeedsInstance.Error() {
		t.Errorf("direct: %+v", o)
	}
	sdir, inv := instanceDir(t)
	o = outcomeOf(socketClient(t, sdir, inv).Reserve(ctx, bad))
	want := fmt.Sprintf("reservation(%d)", reservation.BadParam)
	if !slices.Equal(o.Kinds, []string{want}) || o.Exit != int(reservation.BadParam) || o.Err != `PMIX_ERR_BAD_PARAM: unknown operation "bogus"` {
		t.Errorf("socket: %+v, want kind %s, exit %d", o, want, int(reservation.BadParam))
	}
}

// Every entry of the table is called by the contract suite.
func TestContractCoversTable(t *testing.T) {
	called := map[string]bool{api.Reserve.Name: true} // TestContractReserve
	for _, tc := range contractCases(t) {
		called[tc.method.Name] = true
	}
	for _, s := range api.Table {
		if !called[s.Name] {
			t.Errorf("%s: no contract case", s.Name)
		}
	}
}

// With no loop serving the socket, Open's client answers from the store;
// with one, through the socket.
func TestAutoPicksPath(t *testing.T) {
	ctx := context.Background()
	dir, inv := instanceDir(t)
	c, err := Open(ctx, Options{StateDir: dir, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, []api.SubmitJob{{Jobspec: spec(t, "a"), Urgency: 0}}); err != nil {
		t.Fatalf("direct submit: %v", err)
	}
	_ = socketClient(t, dir, inv) // a loop now holds the store
	st, err := c.Stats(ctx)
	if err != nil || st.Total != 1 {
		t.Fatalf("stats through the loop: %+v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, state.SocketFile)); err != nil {
		t.Errorf("no socket: %v", err)
	}
	if _, err := c.Job(ctx, unknownID); !errors.Is(err, api.ErrUnknownJob) {
		t.Errorf("unknown job through the loop: %v", err)
	}
}
