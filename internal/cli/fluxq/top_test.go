package fluxq

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/top"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/rset"
)

// topClient is the fake instance with resources and queues, and a Jobs
// that honours the states asked for (top asks for active and inactive
// jobs apart).
type topClient struct {
	*fakeClient
	res *api.ResourceInfo
	qi  *api.QueueInfo
	err error
}

func (f *topClient) Jobs(ctx context.Context, q api.JobsQuery) ([]api.JobSummary, error) {
	if f.err != nil {
		return nil, f.err
	}
	all, err := f.fakeClient.Jobs(ctx, q)
	return slices.DeleteFunc(all, func(s api.JobSummary) bool {
		return s.State&q.States == 0
	}), err
}

func (f *topClient) Resources(context.Context) (*api.ResourceInfo, error) { return f.res, f.err }
func (f *topClient) Queues(context.Context) (*api.QueueInfo, error)       { return f.qi, f.err }

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// topResources is two nodes of four cores and one GPU; jobs hold two
// cores of node0; node1 is drained.
func topResources(t *testing.T) *api.ResourceInfo {
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "node0", Cores: idset.Of(0, 1, 2, 3), GPUs: idset.Of(0)},
		{Rank: 1, Hostname: "node1", Cores: idset.Of(0, 1, 2, 3), GPUs: idset.Of(0)},
	})
	held := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.Of(0, 1)}})
	return &api.ResourceInfo{Inventory: mustJSON(t, inv), Allocated: mustJSON(t, held),
		Drained: []api.DrainedRank{{Rank: 1, Reason: "maintenance"}}}
}

// topQueues is batch (the default, started) and debug (stopped, with its
// own policy), under a global easy policy.
func topQueues(t *testing.T) *api.QueueInfo {
	batch := "batch"
	set, err := queue.Compile(queue.Tables{
		Policy: queue.Policy{
			Jobspec:   queue.JobspecPolicy{Defaults: queue.JobspecDefaults{System: queue.SystemDefaults{Queue: &batch}}},
			Scheduler: map[string]any{"policy": "easy"},
		},
		Queues: map[string]queue.Config{
			"batch": {},
			"debug": {Policy: queue.Policy{Scheduler: map[string]any{"policy": "fcfs"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &api.QueueInfo{Set: set,
		States: map[string]queue.State{"batch": {Enabled: true, Started: true}, "debug": {Enabled: false, Started: false}},
		Counts: map[string]api.QueueCounts{"batch": {Running: 1, Waiting: 3}, "debug": {Waiting: 1}}}
}

func TestTopSnapshot(t *testing.T) {
	jobs := slices.Clone(testJobs)
	// Ended two hours ago: not counted among the recent inactive jobs.
	jobs = append(jobs, api.JobSummary{ID: 10 << 24, UserID: 1000, Name: "old", State: job.Inactive, Result: job.Completed, TInactive: t0 - 7200})
	e := testEnv(&fakeClient{}, "")
	snap, err := e.topSnapshot(testNow, jobs, topResources(t), topQueues(t))
	if err != nil {
		t.Fatal(err)
	}
	want := &top.Snapshot{
		Gauges: []top.Gauge{
			{Name: "nodes", Used: 1, Total: 2, Note: "1 drained"},
			{Name: "cores", Used: 2, Total: 8},
			{Name: "gpus", Used: 0, Total: 2},
		},
		Pending: 4, Running: 1, Inactive: 4, InactiveWindow: "1h",
		Policy: "easy",
		Queues: []top.Queue{
			{Name: "batch", Default: true, Enabled: true, Started: true, Policy: "easy", Running: 1, Pending: 3},
			{Name: "debug", Policy: "fcfs", Pending: 1},
		},
		WithQueue: true,
		// INFO and TIME in fluxq jobs' words (contextualInfo,
		// contextualTime): held, the pending reason, the eta, the
		// dependencies; the nodelist and runtime once running.
		RunningJobs: []top.Job{
			{ID: "ƒ8QwQj", User: "bob", Name: "a-very-long-name", NTasks: "2", NNodes: "1", Time: "4m", Priority: "16", Info: "node[0-1]"},
		},
		PendingJobs: []top.Job{
			{ID: "ƒ2UzHM", User: "alice", Name: "held", NTasks: "1", NNodes: "-", Time: "-", Priority: "0", Info: "held"},
			{ID: "ƒ3xyZh", User: "alice", Name: "waiting", NTasks: "4", NNodes: "-", Time: "1h", Priority: "16", Info: "insufficient resources"},
			{ID: "ƒ5Sxr3", User: "alice", Name: "soon", NTasks: "1", NNodes: "-", Time: "-", Priority: "16", Info: "eta:1.5m"},
			{ID: "ƒ6vx8P", User: "alice", Name: "after", NTasks: "1", NNodes: "-", Time: "-", Priority: "-1", Info: "depends:afterok=ƒ2"},
		},
	}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestTopSnapshotAnonymous(t *testing.T) {
	// One anonymous queue, no policy known, no GPUs, nothing ended: no
	// queue table, no QUEUE column, no GPU gauge.
	e := testEnv(&fakeClient{}, "")
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.Of(0, 1)}})
	res := &api.ResourceInfo{Inventory: mustJSON(t, inv), Allocated: mustJSON(t, rset.New(nil))}
	qi := api.NewQueueInfo(queue.Anonymous(), map[string]queue.State{"": queue.Initial(false)})
	snap, err := e.topSnapshot(testNow, nil, res, qi)
	if err != nil {
		t.Fatal(err)
	}
	want := &top.Snapshot{Gauges: []top.Gauge{{Name: "nodes", Total: 1}, {Name: "cores", Total: 2}}, InactiveWindow: "1h"}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestTopSnapshotInactiveCap(t *testing.T) {
	// As many recent inactive jobs as top reads: there may be more.
	jobs := make([]api.JobSummary, topInactiveCap)
	for i := range jobs {
		jobs[i] = api.JobSummary{ID: 1, State: job.Inactive, TInactive: t0}
	}
	snap, err := testEnv(&fakeClient{}, "").topSnapshot(testNow, jobs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Inactive != topInactiveCap || !snap.InactiveMore {
		t.Errorf("inactive = %d, more = %v; want %d and more", snap.Inactive, snap.InactiveMore, topInactiveCap)
	}
	jobs[len(jobs)-1].TInactive = t0 - 7200
	snap, _ = testEnv(&fakeClient{}, "").topSnapshot(testNow, jobs, nil, nil)
	if snap.Inactive != topInactiveCap-1 || snap.InactiveMore {
		t.Errorf("inactive = %d, more = %v; want %d and no more", snap.Inactive, snap.InactiveMore, topInactiveCap-1)
	}
}

func TestTopSnapshotRows(t *testing.T) {
	// More pending jobs than a screen shows: all are counted, the first
	// topRows formatted.
	jobs := make([]api.JobSummary, topRows+100)
	for i := range jobs {
		jobs[i] = api.JobSummary{ID: 1, State: job.Sched}
	}
	snap, err := testEnv(&fakeClient{}, "").topSnapshot(testNow, jobs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Pending != topRows+100 || len(snap.PendingJobs) != topRows {
		t.Errorf("pending = %d with %d rows, want %d with %d", snap.Pending, len(snap.PendingJobs), topRows+100, topRows)
	}
}

func TestTopOnce(t *testing.T) {
	fc := &topClient{fakeClient: &fakeClient{jobs: testJobs}, res: topResources(t), qi: topQueues(t)}
	got := runFluxq(t, fc, "", "top", "--once")
	if got.Code != 0 || got.Stderr != "" {
		t.Fatalf("fluxq top --once: exit %d, stderr %q", got.Code, got.Stderr)
	}
	for _, re := range []string{
		`(?m)^nodes \[\|{15} {15}\] 1/2 \(1 drained\)   4 pending$`,
		`(?m)^cores \[\|{8} {22}\] 2/8               1 running$`,
		`(?m)^ gpus \[ {30}\] 0/2               4 inactive \(last 1h\)$`,
		`(?m)^policy easy$`,
		`(?m)^batch\* ✔  ✔        1       3 easy$`,
		`(?m)^ƒ8QwQj +bob +a-very-lo\+ +2 +1 +4m node\[0-1\]$`,
		`(?m)^ƒ5Sxr3 +alice +soon +1 +16 eta:1\.5m$`,
		`(?m)^ƒ6vx8P +alice +after +1 +-1 depends:afterok=ƒ2$`,
	} {
		if !regexp.MustCompile(re).MatchString(got.Stdout) {
			t.Errorf("no line matches %q in:\n%s", re, got.Stdout)
		}
	}
	// One snapshot, nothing cut.
	if strings.Contains(got.Stdout, "more\n") {
		t.Errorf("--once cuts rows:\n%s", got.Stdout)
	}
	// Jobs of every user, active and recently ended, asked apart.
	want := []api.JobsQuery{{States: job.Active, AllUsers: true}, {States: job.Inactive, AllUsers: true, Count: topInactiveCap}}
	if diff := cmp.Diff(want, fc.queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestTopErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		err  error
		want result
	}{
		{"not a terminal", []string{"top"}, nil,
			result{Stderr: "fluxq: top: needs a terminal\nTry 'fluxq top --help' for more information.\n", Code: 2}},
		{"zero delay", []string{"top", "-d", "0"}, nil,
			result{Stderr: "fluxq: top: --delay: 0 is not a refresh interval (from 1ms to 1d)\nTry 'fluxq top --help' for more information.\n", Code: 2}},
		{"bad delay", []string{"top", "--delay", "soon"}, nil, result{Code: 2}},
		{"argument", []string{"top", "ƒ2"}, nil,
			result{Stderr: "fluxq: top: unexpected argument \"ƒ2\"\nTry 'fluxq top --help' for more information.\n", Code: 2}},
		{"unavailable", []string{"top", "--once"}, fmt.Errorf("%w: timed out", client.ErrUnavailable),
			result{Stderr: "fluxq: top: instance unavailable: timed out\n", Code: 69}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &topClient{fakeClient: &fakeClient{}, res: topResources(t), qi: topQueues(t), err: tc.err}
			got := runFluxq(t, fc, "", tc.args...)
			if tc.want.Stderr == "" {
				if got.Code != tc.want.Code || !strings.HasPrefix(got.Stderr, "fluxq: top: --delay: ") {
					t.Errorf("fluxq %v: exit %d, stderr %q", tc.args, got.Code, got.Stderr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fluxq %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// shownScreen is a simulation screen that copies what each Show put on
// it, so that the test reads it without racing the next draw.
type shownScreen struct {
	tcell.SimulationScreen
	mu   sync.Mutex
	text string
}

func (s *shownScreen) Show() {
	s.SimulationScreen.Show()
	cells, w, _ := s.GetContents()
	var b strings.Builder
	for i, c := range cells {
		if i > 0 && i%w == 0 {
			b.WriteByte('\n')
		}
		b.WriteString(string(c.Runes))
	}
	s.mu.Lock()
	s.text = b.String()
	s.mu.Unlock()
}

func (s *shownScreen) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text
}

// TestTopScreen runs the command on a simulated terminal: the screen
// shows the instance, and q quits with status 0.
func TestTopScreen(t *testing.T) {
	sim := &shownScreen{SimulationScreen: tcell.NewSimulationScreen("UTF-8")}
	defer func(n func() (tcell.Screen, error), is func(io.Writer) bool) { newScreen, isTerminal = n, is }(newScreen, isTerminal)
	newScreen = func() (tcell.Screen, error) { return sim, nil }
	isTerminal = func(io.Writer) bool { return true }

	fc := &topClient{fakeClient: &fakeClient{jobs: testJobs}, res: topResources(t), qi: topQueues(t)}
	done := make(chan result, 1)
	go func() { done <- runFluxq(t, fc, "", "top", "-d", "10ms") }()

	deadline := time.Now().Add(5 * time.Second)
	for {
		s := sim.Text()
		if strings.Contains(s, "ƒ8QwQj") && strings.Contains(s, "eta:1.5m") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed the jobs:\n%s", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sim.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	select {
	case got := <-done:
		if diff := cmp.Diff(result{}, got); diff != "" {
			t.Errorf("fluxq top after q (-want +got):\n%s", diff)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fluxq top did not quit on q")
	}
}

// Issue 26: where the hosts' memory is known, top gauges it as it gauges
// cores, its counts in FormatMemory's words; where none is known there is
// no memory gauge (TestTopSnapshotAnonymous).
func TestTopSnapshotMemory(t *testing.T) {
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "node0", Cores: idset.Of(0, 1), Memory: 4 << 30},
		{Rank: 1, Hostname: "node1", Cores: idset.Of(0, 1), Memory: 4 << 30},
	})
	tests := []struct {
		name string
		held *rset.R
		want top.Gauge
	}{
		{"a job with memory", rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.Of(0), Memory: 3 << 30}}),
			top.Gauge{Name: "memory", Used: 3 << 30, Total: 8 << 30, UsedText: "3G", TotalText: "8G"}},
		{"a job without memory", rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.Of(0)}}),
			top.Gauge{Name: "memory", Used: 0, Total: 8 << 30, UsedText: "0B", TotalText: "8G"}},
		{"half a gigabyte", rset.New([]rset.Node{{Rank: 1, Hostname: "node1", Cores: idset.Of(0), Memory: 1 << 29}}),
			top.Gauge{Name: "memory", Used: 1 << 29, Total: 8 << 30, UsedText: "512M", TotalText: "8G"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &api.ResourceInfo{Inventory: mustJSON(t, inv), Allocated: mustJSON(t, tt.held)}
			snap, err := testEnv(&fakeClient{}, "").topSnapshot(testNow, nil, res, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []top.Gauge{{Name: "nodes", Used: 1, Total: 2}, {Name: "cores", Used: 1, Total: 4}, tt.want}
			if diff := cmp.Diff(want, snap.Gauges); diff != "" {
				t.Errorf("gauges (-want +got):\n%s", diff)
			}
		})
	}
}
