package runner

import (
	"os"
	"runtime"
	"strconv"
	"strings"
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
		b.Run(mode, func(b *testing.B) { benchLaunch(b, mode, 0) })
	}
	// Under a memory limit (a memory cgroup of the job's own, on v1),
	// where this machine enforces one.
	b.Run("auto-mem", func(b *testing.B) { benchLaunch(b, "auto", 64<<20) })
}

func benchLaunch(b *testing.B, mode string, memory uint64) {
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
	if how, why := r.Memory(); memory > 0 && how == "" {
		b.Skip("memory limits not enforced: " + why)
	}
	specs := make([]Spec, b.N)
	for i := range specs {
		specs[i] = spec(b, fluid.ID(1000+i), jobspec.Options{Command: []string{"true"}}, 1, "0")
		specs[i].Memory = memory
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
	// Context switches: the hand-offs between threads a job costs, a
	// figure less at the mercy of other load than CPU time is.
	b.ReportMetric(float64(after.Nvcsw+after.Nivcsw-before.Nvcsw-before.Nivcsw)/float64(b.N), "ctxsw/op")
}

// BenchmarkRunningSleep starts b.N `sleep 300` jobs and reports this
// process's resident memory with all of them running (rss-MB), the part of
// the agent's memory that grows with running jobs (bench/rss.sh measures
// the whole).
func BenchmarkRunningSleep(b *testing.B) {
	jobs := b.TempDir()
	var ended atomic.Int64
	r, err := New(Options{JobsDir: jobs, CgroupName: "fluxq-bench-" + strconv.Itoa(os.Getpid()),
		Events: func(ev Event) {
			if ev.End != nil {
				ended.Add(1)
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	before := rssKiB(b)
	for i := 0; i < b.N; i++ {
		s := spec(b, fluid.ID(5000+i), jobspec.Options{Command: []string{"sleep", "300"}}, 1, "0")
		rec, err := r.Prepare(s)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Launch(rec, s); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	after := rssKiB(b)
	b.ReportMetric(float64(after)/1024, "rss-MB")
	b.ReportMetric(float64(after-before)/float64(b.N), "rss-KiB/job")
	for _, id := range r.Running() {
		r.Terminate(id)
	}
	for ended.Load() < int64(b.N) {
		time.Sleep(10 * time.Millisecond)
	}
}

// rssKiB is this process's VmRSS.
func rssKiB(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
