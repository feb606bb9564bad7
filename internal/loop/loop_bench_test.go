package loop_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/ops"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// instantExec is an exec service whose jobs end as soon as they start:
// what is left of a job's cost is the loop's own.
func instantExec(c wire.Conn) {
	hello, _ := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: "job-exec"})
	if c.Send(hello) != nil {
		return
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
		for _, r := range []struct {
			typ  string
			data any
		}{
			{execproto.TypeStart, nil},
			{execproto.TypeFinish, execproto.Finish{Status: 0}},
			{execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true}},
		} {
			msg, _ := execproto.NewResponse("job-exec", s.ID, r.typ, r.data)
			if c.Send(msg) != nil {
				return
			}
		}
	}
}

// The issue: fluxsched's own CPU per job, with 1,000 `true` jobs end to
// end, down to 1.5 ms. This is the loop's share of it: 1,000 jobs
// submitted in one request, through the built-in scheduler (fcfs,
// limited=8, as fluxsched runs by default) on two cores, and an exec
// service that ends each job at once; until every job is inactive.
func BenchmarkLoop1000Jobs(b *testing.B) {
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp", Environment: map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/root"}})
	if err != nil {
		b.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	reqs := make([]ops.SubmitRequest, 1000)
	for i := range reqs {
		reqs[i] = ops.SubmitRequest{Jobspec: spec, UserID: 100, Owner: true, Urgency: 16}
	}
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	n, turns := 0, 0
	for b.Loop() {
		n++
		b.StopTimer()
		st, err := store.Open(b.TempDir()+"/fluxq.db", store.Options{Timeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		schedConn, schedEnd := wire.Pipe()
		execConn, execEnd := wire.Pipe()
		go sched.Run(schedEnd, sched.Options{Default: sched.DefaultPolicy(), Limit: 8})
		go instantExec(execEnd)
		jm := jobmgr.New(jobmgr.Config{Inventory: inv, Owner: 100})
		l := loop.New(st, jm, loop.Once(schedConn), loop.Once(execConn), nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		go func() { done <- l.Run(ctx) }()
		if _, err := l.Do(ctx, func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
			_, recs, err := ops.Submit(tx, jm.Now(), reqs, nil)
			if err != nil {
				return nil, err
			}
			return nil, jm.Submitted(tx, recs)
		}); err != nil {
			b.Fatal(err)
		}
		for {
			changed := l.Changed()
			v, err := l.Do(ctx, func(_ *store.Tx, jm *jobmgr.Manager) (any, error) { return jm.Active(), nil })
			if err != nil {
				b.Fatal(err)
			}
			if v.(int) == 0 {
				break
			}
			<-changed
		}
		b.StopTimer()
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		turns += loop.Turns(l)
		schedConn.Close()
		execConn.Close()
		st.Close()
		b.StartTimer()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime) + syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n*1000), "cpu-ms/job")
	b.ReportMetric(float64(turns)/float64(n*1000), "turns/job")
}
