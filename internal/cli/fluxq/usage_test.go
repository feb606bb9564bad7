package fluxq

import (
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
)

// A finished job's usage shows in info, and as -o and --json fields.
func TestUsageFields(t *testing.T) {
	s := testJobs[6]
	s.Usage = &execproto.Usage{UserCPU: 1.25, SysCPU: 0.5, MaxRSS: 200 << 20}
	fc := &fakeClient{jobs: []api.JobSummary{s}, infos: map[fluid.ID]*api.JobInfo{s.ID: {Summary: s, Jobspec: []byte(`{}`)}}}
	got := runFluxq(t, fc, "", "info", "ƒBNuyR")
	for _, line := range []string{"user_cpu   1.250s\n", "sys_cpu    0.500s\n", "max_rss    200.0MiB\n"} {
		if !strings.Contains(got.Stdout, line) {
			t.Errorf("info lacks %q:\n%s", line, got.Stdout)
		}
	}
	got = runFluxq(t, fc, "", "info", "ƒBNuyR", "-o", "{{.user_cpu}} {{.sys_cpu}} {{.max_rss}}")
	if got.Stdout != "1.25 0.5 209715200\n" {
		t.Errorf("info -o = %+v", got)
	}
	// Unknown until the job finished: left out, as returncode is.
	s.Usage = nil
	fc.infos[s.ID].Summary = s
	if got := runFluxq(t, fc, "", "info", "ƒBNuyR"); strings.Contains(got.Stdout, "max_rss") {
		t.Errorf("info without usage:\n%s", got.Stdout)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 1024: "1.0KiB", 150 << 20: "150.0MiB", 3 << 30: "3.0GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
