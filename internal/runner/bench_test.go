package runner

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// BenchmarkLaunchTrue prepares, launches and ends b.N `true` jobs, at most
// 2 running at a time (xargs -P2 on this machine's 2 cores), and reports
// the CPU time this process spent per job (cpu-ns/op) beside the wall
// time: what the agent itself costs, the tasks' own CPU excluded.
func BenchmarkLaunchTrue(b *testing.B) {
	for _, mode := range []string{"auto", "cgroup1", "subreaper"} {
		b.Run(mode, func(b *testing.B) { benchLaunch(b, mode) })
	}
}

func benchLaunch(b *testing.B, mode string) {
	jobs := b.TempDir()
	slots := make(chan struct{}, 2)
	var ended atomic.Int64
	r, err := New(Options{JobsDir: jobs, Containment: mode, CgroupName: "fluxq-bench-" + strconv.Itoa(os.Getpid()),
		Events: func(ev Event) {
			if ev.End != nil {
				ended.Add(1)
				<-slots
			}
		}})
	if err != nil {
		b.Skip(err)
	}
	defer r.Close()
	b.Logf("containment %s", r.Containment())
	specs := make([]Spec, b.N)
	for i := range specs {
		specs[i] = spec(b, fluid.ID(1000+i), jobspec.Options{Command: []string{"true"}}, 1, "0")
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for i := range specs {
		slots <- struct{}{}
		rec, err := r.Prepare(specs[i])
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Launch(rec, specs[i]); err != nil {
			b.Fatal(err)
		}
	}
	for ended.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(float64(cpu.Nanoseconds()), "cpu-ns/op")
	b.ReportMetric(float64(time.Duration(after.Stime.Nano()-before.Stime.Nano()).Nanoseconds())/float64(b.N), "sys-ns/op")
}
