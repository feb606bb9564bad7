package agent

import (
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/runner"
)

// BenchmarkTrueJobs runs b.N `true` jobs through the agent in one burst,
// as fluxsched sends them, and reports the agent's CPU per job (this
// process's: the agent is in it; the jobs are its children, not counted).
func BenchmarkTrueJobs(b *testing.B) {
	state := b.TempDir()
	a, err := New(Options{StateDir: state, Build: "bench", Log: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	go a.Run(b.Context())
	defer a.Close()
	p := dial(b, state, "bench")
	p.hello()
	js, r := makeJobspec(b, "true"), makeR(b)
	var before unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	start := time.Now()
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		p.start(fluid.ID(i), false, js, r)
	}
	p.wait("every release", 10*time.Minute, func() bool { return len(p.starts) == 3*b.N })
	b.StopTimer()
	elapsed := time.Since(start)
	var after unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "agent-µs-cpu/job")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
}

// BenchmarkProtocol is BenchmarkTrueJobs with a runner whose jobs end as
// they launch: the agent's own cost per job (socket, decoding, journal,
// responses), and the test's peer reading them, without the runner's.
func BenchmarkProtocol(b *testing.B) {
	s := &scripted{launches: map[fluid.ID]int{}, signals: map[fluid.ID][]syscall.Signal{}}
	s.onLaunch = func(id fluid.ID) { go s.end(id, runner.End{Known: true}) }
	old := newRunner
	newRunner = func(opts runner.Options) (jobRunner, error) {
		s.events = opts.Events
		return s, nil
	}
	defer func() { newRunner = old }()
	BenchmarkTrueJobs(b)
}
