package fluxq

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/fluid"
)

// The issue benchmarks `fluxq submit --cc 1-10000 true` at 5,000 submits/s
// or more end to end; this is the command's own share: building the
// 10,000 jobspecs and the one request.
func BenchmarkSubmitCC10000(b *testing.B) {
	for b.Loop() {
		fc := &fakeClient{}
		if r := runFluxq(b, fc, "", "submit", "--quiet", "--cc", "1-10000", "true"); r.Code != 0 {
			b.Fatal(r)
		}
	}
}

// BenchmarkBulksubmit10000: 10,000 inputs, each job built on its own
// through submit's builder (the command line's flags read once, not per
// job: urfave/cli's lookups cost more than the jobspec).
func BenchmarkBulksubmit10000(b *testing.B) {
	in := strings.Repeat("input.dat\n", 10_000)
	for b.Loop() {
		fc := &fakeClient{}
		if r := runFluxq(b, fc, in, "bulksubmit", "--quiet", "-n", "2", "--output", "{.%}.out", "./sim", "{}"); r.Code != 0 {
			b.Fatal(r)
		}
	}
}

// manyJobs is a listing of n inactive jobs.
func manyJobs(n int) []*api.JobSummary {
	out := make([]*api.JobSummary, n)
	for i := range out {
		s := testJobs[5]
		s.ID = fluid.ID(i+1) << 16
		s.Name = fmt.Sprintf("job%d", i)
		out[i] = &s
	}
	return out
}

// The issue: `fluxq jobs -a --json` over 100,000 jobs in under 1 s; this
// is the printing part.
func BenchmarkJobsJSON100k(b *testing.B) {
	jobs := manyJobs(100_000)
	e := &env{getenv: func(string) string { return "" }, users: map[uint32]string{1000: "alice"}}
	p := &output.Printer{Out: io.Discard, JSON: true}
	for b.Loop() {
		if err := output.PrintList(p, e.jobsList(testNow, false), jobs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJobsTable10k(b *testing.B) {
	jobs := manyJobs(10_000)
	e := &env{getenv: func(string) string { return "" }, users: map[uint32]string{1000: "alice"}}
	p := &output.Printer{Out: io.Discard}
	for b.Loop() {
		if err := output.PrintList(p, e.jobsList(testNow, false), jobs); err != nil {
			b.Fatal(err)
		}
	}
}
