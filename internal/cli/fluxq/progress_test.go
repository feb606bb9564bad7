package fluxq

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
)

// terminal is a stderr that says it is a terminal (progress.Terminal), so
// the commands draw their progress lines on it.
type terminal struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (t *terminal) IsTerminal() bool { return true }
func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.Write(p)
}
func (t *terminal) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// runOnTerminal runs fluxq against fc with stderr on a terminal.
func runOnTerminal(fc client.Client, args ...string) (stdout, stderr string, code int) {
	e := testEnv(fc, "")
	var out bytes.Buffer
	tty := &terminal{}
	e.stdout, e.stderr = &out, tty
	code = runApp(e, append([]string{"fluxq"}, args...))
	return out.String(), tty.String(), code
}

const (
	cr       = "\r"
	eraseEOL = "\x1b[K"
)

// wait --all on a terminal: a line counting the jobs done and failed,
// failures printed above it, erased at the end; stdout untouched.
func TestWaitAllProgress(t *testing.T) {
	fc := &fakeClient{
		jobs: []api.JobSummary{{ID: 1 << 24}, {ID: 2 << 24}, {ID: 3 << 24}},
		infos: map[fluid.ID]*api.JobInfo{
			1 << 24: {Summary: api.JobSummary{ID: 1 << 24, State: job.Inactive, Result: job.Completed, ReturnCode: intp(0), WaitStatus: intp(0)}},
			2 << 24: {Summary: api.JobSummary{ID: 2 << 24, State: job.Inactive, Result: job.Failed, ReturnCode: intp(2), WaitStatus: intp(2 << 8)}},
			3 << 24: {Summary: api.JobSummary{ID: 3 << 24, State: job.Inactive, Result: job.Completed, ReturnCode: intp(0), WaitStatus: intp(0)}},
		},
	}
	stdout, stderr, code := runOnTerminal(fc, "wait", "--all")
	if stdout != "" || code != 1 {
		t.Errorf("stdout %q, exit %d; want nothing, 1", stdout, code)
	}
	// The first drawing, then the failure above a line that counts the
	// first job; the last write erases the line.
	for _, want := range []string{
		cr + "waiting: 0 of 3 jobs done" + eraseEOL,
		cr + eraseEOL + "fluxq: wait: ƒ3xyZh: task(s) exited with exit code 2\n" + cr + "waiting: 1 of 3 jobs done" + eraseEOL,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if !strings.HasSuffix(stderr, cr+eraseEOL) {
		t.Errorf("stderr %q does not end by erasing the line", stderr)
	}

	// The line's text as the count goes.
	p := &jobsLine{total: 40}
	for i := range 7 {
		p.add(i == 3)
	}
	if got, want := p.text(), "waiting: 7 of 40 jobs done, 1 failed"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	p = &jobsLine{total: 10000}
	p.add(false)
	if got, want := p.text(), "waiting: 1 of 10,000 jobs done"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

// submit --cc of 100 jobs or more shows a line while they are stored,
// erased before the IDs are printed; a small submit shows none (it is
// quicker than the second it waits for); --wait counts the jobs done.
func TestSubmitProgress(t *testing.T) {
	fc := &fakeClient{infos: map[fluid.ID]*api.JobInfo{}}
	for i := range 150 {
		id := fluid.ID(1000 + i)
		fc.infos[id] = &api.JobInfo{Summary: api.JobSummary{ID: id, State: job.Inactive, Result: job.Completed, ReturnCode: intp(0), WaitStatus: intp(0)}}
	}
	stdout, stderr, code := runOnTerminal(fc, "submit", "--cc", "1-150", "--wait", "true")
	if code != 0 || strings.Count(stdout, "\n") != 150 {
		t.Fatalf("exit %d, %d lines on stdout; want 0, 150 IDs", code, strings.Count(stdout, "\n"))
	}
	for _, want := range []string{
		cr + "| submitting 150 jobs, 0s" + eraseEOL + cr + eraseEOL,
		cr + "waiting: 0 of 150 jobs done" + eraseEOL,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if !strings.HasSuffix(stderr, cr+eraseEOL) {
		t.Errorf("stderr %q does not end by erasing the line", stderr)
	}

	_, stderr, code = runOnTerminal(fc, "submit", "--cc", "1-3", "true")
	if code != 0 || stderr != "" {
		t.Errorf("small submit: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	// Off a terminal, nothing at all.
	got := runFluxq(t, fc, "", "submit", "--cc", "1-150", "--wait", "true")
	if got.Code != 0 || got.Stderr != "" {
		t.Errorf("off a terminal: exit %d, stderr %q; want 0 and nothing", got.Code, got.Stderr)
	}
}
