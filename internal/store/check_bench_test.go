package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// benchJobs is the number of jobs of the store BenchmarkCheck reads:
// $FLUXQ_BENCH_JOBS, else 1,000,000 (issue 24: "measure it at 1M jobs").
func benchJobs() int {
	if n, err := strconv.Atoi(os.Getenv("FLUXQ_BENCH_JOBS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// bigStore writes n jobs of a real job's sizes (a `fluxq submit true`
// that ran: jobspec 1.7 KB with its environment, eventlog 0.7 KB, R,
// summary 0.5 KB, usage), 20,000 to a transaction, into a store in dir,
// and returns its path. Built once per directory: a 1M-job store is 4 GB.
func bigStore(b *testing.B, dir string, n int) string {
	path := filepath.Join(dir, fmt.Sprintf("check-%d.db", n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	s, err := Open(tmp, Options{})
	if err != nil {
		b.Fatal(err)
	}
	spec := bytes.Repeat([]byte("s"), 1743)
	evlog := bytes.Repeat([]byte("e"), 705)
	rr := bytes.Repeat([]byte("r"), 150)
	sum := bytes.Repeat([]byte("u"), 531)
	usage := bytes.Repeat([]byte("x"), 52)
	start := time.Now()
	for i := 0; i < n; {
		err := s.Update(func(tx *Tx) error {
			for j := 0; j < 20_000 && i < n; j, i = j+1, i+1 {
				// FLUIDs lead with their time: ids grow as jobs are submitted.
				id := uint64(1)<<40 + uint64(i)<<10
				if err := tx.CreateJob(id, map[string][]byte{JobJobspec: spec, JobEventlog: evlog, JobR: rr, JobSummary: sum, JobUsage: usage}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	b.Logf("built %d jobs in %v: %.0f MB", n, time.Since(start).Round(time.Second), float64(fi.Size())/1e6)
	return path
}

// BenchmarkCheck times the checks of a store of benchJobs() jobs, warm
// in the page cache: the meta check every open makes, the full walk
// fluxsched makes at start, and bbolt's own Tx.Check for comparison.
// The store is kept in $FLUXQ_BENCH_DIR (else a temporary directory) so
// that a second run does not build it again. bench/storecheck.sh runs it.
func BenchmarkCheck(b *testing.B) {
	dir := os.Getenv("FLUXQ_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	n := benchJobs()
	path := bigStore(b, dir, n)
	fi, _ := os.Stat(path)
	b.Run("meta", func(b *testing.B) {
		for b.Loop() {
			if rep, err := CheckFile(path, false); err != nil || !rep.OK() {
				b.Fatal(rep, err)
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		cpu0 := cpuTime()
		for b.Loop() {
			rep, err := CheckFile(path, true)
			if err != nil || !rep.OK() || rep.Jobs != n {
				b.Fatal(rep, err)
			}
		}
		// On a shared machine the wall time is the load's; the CPU time
		// (user and system) is the check's.
		b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(fi.Size())/1e6, "MB")
		b.ReportMetric(float64(n), "jobs")
	})
	b.Run("bbolt-Tx.Check", func(b *testing.B) {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		cpu0 := cpuTime()
		defer func() { b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op") }()
		for b.Loop() {
			err := db.View(func(tx *bolt.Tx) error {
				for err := range tx.Check() {
					return err
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
