package loop_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// fakeExec is an exec service whose jobs start at once and end after
// run: what is left of a job's cost is the loop's own. A job's start
// response is sent at once, its finish and release together after run,
// as an exec agent reports a short job.
func fakeExec(c wire.Conn, run time.Duration) {
	hello, _ := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: "job-exec"})
	if c.Send(hello) != nil {
		return
	}
	respond := func(id fluid.ID, typ string, data any) {
		msg, _ := execproto.NewResponse("job-exec", id, typ, data)
		c.Send(msg)
	}
	end := func(id fluid.ID) {
		respond(id, execproto.TypeFinish, execproto.Finish{Status: 0})
		respond(id, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	}
	for {
		m, err := c.Recv()
		if err != nil {
			return
		}
		if m.Type != wire.Request || m.Topic != execproto.Topic("job-exec", execproto.MethodStart) {
			continue
		}
		s, err := execproto.DecodeStart(m)
		if err != nil {
			return
		}
		respond(s.ID, execproto.TypeStart, nil)
		if run == 0 {
			end(s.ID)
		} else {
			time.AfterFunc(run, func() { end(s.ID) })
		}
	}
}

// instance is a loop over a fresh store, with the built-in scheduler
// (fcfs, limited=8, as fluxsched runs by default) on two cores and a
// fakeExec whose jobs run for run.
type instance struct {
	st     *store.Store
	l      *loop.Loop
	cancel context.CancelFunc
	done   chan error
	conns  []wire.Conn
}

func newInstance(tb testing.TB, run time.Duration) *instance {
	st, err := store.Open(tb.TempDir()+"/fluxq.db", store.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	schedConn, schedEnd := wire.Pipe()
	execConn, execEnd := wire.Pipe()
	go sched.Run(schedEnd, sched.Options{Default: sched.DefaultPolicy(), Limit: 8})
	go fakeExec(execEnd, run)
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
	jm := jobmgr.New(jobmgr.Config{Inventory: inv, Owner: 100})
	// The scheduler is local, as fluxsched's own is: exchanged with
	// inside the turn (no commit fails here, so it is never restarted).
	schedPeer := loop.Once(schedConn)
	schedPeer.Local = true
	in := &instance{st: st, l: loop.New(st, jm, schedPeer, loop.Once(execConn), nil), done: make(chan error, 1), conns: []wire.Conn{schedConn, execConn}}
	var ctx context.Context
	ctx, in.cancel = context.WithCancel(context.Background())
	go func() { in.done <- in.l.Run(ctx) }()
	return in
}

// stop ends the loop and returns how many turns it committed.
func (in *instance) stop(tb testing.TB) int {
	in.cancel()
	if err := <-in.done; err != nil {
		tb.Fatal(err)
	}
	for _, c := range in.conns {
		c.Close()
	}
	turns := loop.Turns(in.l)
	in.st.Close()
	return turns
}

// submit stores n `true` jobs in one request, as fluxq submit --cc does.
func (in *instance) submit(tb testing.TB, n int) []fluid.ID {
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp", Environment: map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/root"}})
	if err != nil {
		tb.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	reqs := make([]ops.SubmitRequest, n)
	for i := range reqs {
		reqs[i] = ops.SubmitRequest{Jobspec: spec, UserID: 100, Owner: true, Urgency: 16}
	}
	v, err := in.l.Do(context.Background(), func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		ids, recs, err := ops.Submit(tx, jm.Now(), reqs, nil)
		if err != nil {
			return nil, err
		}
		return ids, jm.Submitted(tx, recs)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return v.([]fluid.ID)
}

// wait returns once no job is active. It asks now and then, so that the
// asking adds few turns.
func (in *instance) wait(tb testing.TB) {
	for {
		v, err := in.l.Do(context.Background(), func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.Active(), nil })
		if err != nil {
			tb.Fatal(err)
		}
		if v.(int) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The issue: fluxsched's own CPU per job, with 1,000 `true` jobs end to
// end, down to 1.5 ms. This is the loop's share of it (and the built-in
// scheduler's): 1,000 jobs submitted in one request, until every job is
// inactive, the jobs ending at once or after a millisecond (about what
// `true` takes). cpu-ms/job is the process's CPU time, the exec stand-in's
// included; turns/job is how many commits the loop made.
func BenchmarkLoop1000Jobs(b *testing.B) {
	for _, run := range []time.Duration{0, time.Millisecond} {
		b.Run("run="+run.String(), func(b *testing.B) {
			b.ReportAllocs()
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			n, turns := 0, 0
			for b.Loop() {
				n++
				in := newInstance(b, run)
				in.submit(b, 1000)
				in.wait(b)
				b.StopTimer()
				turns += in.stop(b)
				b.StartTimer()
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime) + syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n*1000), "cpu-ms/job")
			b.ReportMetric(float64(turns)/float64(n*1000), "turns/job")
		})
	}
}
