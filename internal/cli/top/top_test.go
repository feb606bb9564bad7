package top

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"
)

// testTime is the clock of the title line in these tests.
var testTime = time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)

// sample is an instance with two named queues, two running jobs and two
// pending ones, one with an estimated start.
func sample() *Snapshot {
	return &Snapshot{
		Gauges: []Gauge{
			{Name: "nodes", Used: 2, Total: 4, Note: "1 drained"},
			{Name: "cores", Used: 12, Total: 16},
			{Name: "gpus", Used: 0, Total: 2},
		},
		Pending: 2, Running: 2, Inactive: 7, InactiveWindow: "1h",
		Policy: "easy",
		Queues: []Queue{
			{Name: "batch", Default: true, Enabled: true, Started: true, Running: 2, Pending: 1},
			{Name: "debug", Enabled: false, Started: false, Policy: "fcfs", Pending: 1},
		},
		WithQueue: true,
		RunningJobs: []Job{
			{ID: "ƒ8QwQj", Queue: "batch", User: "bob", Name: "simulate", NTasks: "8", NNodes: "2", Time: "4m", Info: "node[0-1]"},
			{ID: "ƒ9tvh5", Queue: "batch", User: "alice", Name: "a-very-long-name", NTasks: "4", NNodes: "1", Time: "2.500s", Info: "node2"},
		},
		PendingJobs: []Job{
			{ID: "ƒ5Sxr3", Queue: "batch", User: "alice", Name: "soon", NTasks: "1", Priority: "16", Info: "eta:5m"},
			{ID: "ƒ2UzHM", Queue: "debug", User: "alice", Name: "held", NTasks: "1", Priority: "0", Info: "held"},
		},
	}
}

// screenLines are the rows of a simulation screen, without trailing
// blanks.
func screenLines(s tcell.SimulationScreen) []string {
	cells, w, h := s.GetContents()
	out := make([]string, h)
	for y := 0; y < h; y++ {
		var b strings.Builder
		for x := 0; x < w; x++ {
			c := cells[y*w+x]
			if len(c.Runes) == 0 {
				b.WriteByte(' ')
				continue
			}
			b.WriteString(string(c.Runes))
		}
		out[y] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// draw renders snap on a simulated w x h terminal.
func draw(t *testing.T, snap *Snapshot, st Status, w, h int) []string {
	t.Helper()
	s := tcell.NewSimulationScreen("UTF-8")
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	defer s.Fini()
	s.SetSize(w, h)
	Draw(s, snap, st, Plain)
	return screenLines(s)
}

// hasLine reports whether some line matches the regular expression.
func hasLine(lines []string, re string) bool {
	r := regexp.MustCompile(re)
	for _, l := range lines {
		if r.MatchString(l) {
			return true
		}
	}
	return false
}

func TestDraw(t *testing.T) {
	lines := draw(t, sample(), Status{Title: "/state", Updated: testTime, Delay: 2 * time.Second}, 120, 40)
	for _, want := range []string{
		// Title: instance, time of the snapshot, interval, keys.
		`^fluxq top  /state +22:13:20  every 2s  q quit  r refresh$`,
		// One gauge per resource, each with a job count beside it.
		`^nodes \[\|{20} {20}\]  2/4  \(1 drained\) +2 pending$`,
		`^cores \[\|{30} {10}\] 12/16 +2 running$`,
		`^ gpus \[ {40}\]  0/2  +7 inactive \(last 1h\)$`,
		`^policy easy$`,
		// Queues: default starred, enabled/started, counts, policy.
		`^QUEUE  EN ST RUNNING PENDING POLICY$`,
		`^batch\* ✔  ✔        2       1$`,
		`^debug  ✗  ✗        0       1 fcfs$`,
		// Running jobs, newest first, names cut as fluxq jobs cuts them.
		`^ JOBID QUEUE USER  NAME       NTASKS NNODES   TIME NODELIST$`,
		`^ƒ8QwQj batch bob   simulate        8      2     4m node\[0-1\]$`,
		`^ƒ9tvh5 batch alice a-very-lo\+      4      1 2\.500s node2$`,
		// Pending jobs with priority and INFO.
		`^ JOBID QUEUE USER  NAME NTASKS PRIORITY INFO$`,
		`^ƒ5Sxr3 batch alice soon      1       16 eta:5m$`,
		`^ƒ2UzHM debug alice held      1        0 held$`,
	} {
		if !hasLine(lines, want) {
			t.Errorf("no line matches %q in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if hasLine(lines, `more$`) {
		t.Errorf("everything fits in 40 lines, yet something is cut:\n%s", strings.Join(lines, "\n"))
	}
}

func TestDrawAnonymous(t *testing.T) {
	// No named queues: no queue table, no QUEUE column, no GPU gauge, no
	// policy line; empty tables say so.
	snap := &Snapshot{Gauges: []Gauge{{Name: "nodes", Used: 0, Total: 1}, {Name: "cores", Used: 0, Total: 2}}, InactiveWindow: "1h"}
	lines := draw(t, snap, Status{Delay: time.Second}, 80, 24)
	got := strings.Join(lines, "\n")
	for _, absent := range []string{"QUEUE", "gpus", "policy"} {
		if strings.Contains(got, absent) {
			t.Errorf("%q shows without named queues or GPUs:\n%s", absent, got)
		}
	}
	for _, want := range []string{`^JOBID USER NAME NTASKS NNODES TIME NODELIST$`, `^no running jobs$`, `^no pending jobs$`, `0 inactive \(last 1h\)$`} {
		if !hasLine(lines, want) {
			t.Errorf("no line matches %q in:\n%s", want, got)
		}
	}
}

// many is a snapshot with n running and m pending jobs.
func many(n, m int) *Snapshot {
	snap := &Snapshot{Gauges: []Gauge{{Name: "nodes", Used: 1, Total: 1}, {Name: "cores", Used: n, Total: n}}}
	for i := 0; i < n; i++ {
		snap.RunningJobs = append(snap.RunningJobs, Job{ID: fmt.Sprintf("r%02d", i), User: "u", Name: "run", NTasks: "1", NNodes: "1", Time: "1s", Info: "node0"})
	}
	for i := 0; i < m; i++ {
		snap.PendingJobs = append(snap.PendingJobs, Job{ID: fmt.Sprintf("p%02d", i), User: "u", Name: "wait", NTasks: "1", Priority: "16", Info: "insufficient resources"})
	}
	return snap
}

func TestDrawCut(t *testing.T) {
	// 24 lines: title, 3 summary lines, then two tables with a blank line
	// each share 18 lines, 9 each: header, 7 rows and "+N more".
	lines := draw(t, many(30, 20), Status{Delay: time.Second}, 80, 24)
	got := strings.Join(lines, "\n")
	if lines[23] == "" {
		t.Errorf("the screen's last line is unused:\n%s", got)
	}
	for _, want := range []string{`^ *r06 `, `^\+23 more$`, `^ *p06 `, `^\+13 more$`} {
		if !hasLine(lines, want) {
			t.Errorf("no line matches %q in:\n%s", want, got)
		}
	}
	for _, absent := range []string{`^ *r07 `, `^ *p07 `} {
		if hasLine(lines, absent) {
			t.Errorf("line %q should be cut:\n%s", absent, got)
		}
	}

	// Few pending jobs: the running table takes what they leave.
	lines = draw(t, many(30, 1), Status{Delay: time.Second}, 80, 24)
	got = strings.Join(lines, "\n")
	// 18 lines: 2 for the pending table, 16 for the running one: its
	// header, 14 rows and the line for the other 16.
	for _, want := range []string{`^ *r13 `, `^\+16 more$`, `^ *p00 `} {
		if !hasLine(lines, want) {
			t.Errorf("no line matches %q in:\n%s", want, got)
		}
	}
	if hasLine(lines, `^ *r14 `) {
		t.Errorf("r14 should be cut:\n%s", got)
	}

	// A long line is cut at the screen's edge, not wrapped.
	snap := many(1, 0)
	snap.RunningJobs[0].Info = strings.Repeat("x", 200)
	lines = draw(t, snap, Status{Delay: time.Second}, 60, 24)
	if !hasLine(lines, `^ *r00 .*x{10}$`) || hasLine(lines, `^x`) {
		t.Errorf("a long row is not cut at the edge:\n%s", strings.Join(lines, "\n"))
	}
}

func TestLayoutUnlimited(t *testing.T) {
	// --once: no height, no width, every row.
	text := Text(Layout(many(30, 20), Status{Delay: time.Second}, Plain, 0, 0))
	if strings.Contains(text, "more") {
		t.Errorf("an unlimited layout cuts rows:\n%s", text)
	}
	if n := len(regexp.MustCompile(`(?m)^ *r\d\d `).FindAllString(text, -1)); n != 30 {
		t.Errorf("%d running rows, want 30:\n%s", n, text)
	}
	if n := len(regexp.MustCompile(`(?m)^ *p\d\d `).FindAllString(text, -1)); n != 20 {
		t.Errorf("%d pending rows, want 20:\n%s", n, text)
	}
}

func TestLayoutRowsLeftOut(t *testing.T) {
	// The snapshot kept 3 of 40 running jobs: the rest are "+37 more",
	// on a screen or in --once.
	snap := many(3, 0)
	snap.Running = 40
	text := Text(Layout(snap, Status{}, Plain, 0, 0))
	if !regexp.MustCompile(`(?m)^ *r02 .*\n\+37 more$`).MatchString(text) {
		t.Errorf("no +37 more after the rows kept:\n%s", text)
	}
	if strings.Contains(text, "q quit") {
		t.Errorf("a single snapshot offers keys:\n%s", text)
	}
	lines := draw(t, snap, Status{Delay: time.Second}, 80, 11)
	// 11 lines: title, 3 summary lines, a blank, the header, one row,
	// "+39 more"; then the pending table's blank, header and note.
	for _, want := range []string{`^ *r00 `, `^\+39 more$`} {
		if !hasLine(lines, want) {
			t.Errorf("no line matches %q in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}

func TestLayoutErrorAndNothingYet(t *testing.T) {
	st := Status{Delay: 2 * time.Second, Err: "instance unavailable: store busy\nsecond line"}
	lines := Layout(nil, st, Plain, 80, 24)
	want := []string{
		"fluxq top  reading the instance...  every 2s  q quit  r refresh",
		"instance: instance unavailable: store busy?second line (retrying every 2s)",
	}
	got := strings.Split(strings.TrimSuffix(Text(lines), "\n"), "\n")
	got[0] = regexp.MustCompile(` +`).ReplaceAllString(got[0], " ")
	want[0] = regexp.MustCompile(` +`).ReplaceAllString(want[0], " ")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("before any snapshot (-want +got):\n%s", diff)
	}
}

func TestAllocate(t *testing.T) {
	tbl := func(rows int) table { return table{rows: make([][]string, rows)} }
	for _, tc := range []struct {
		name  string
		needs []int // rows of each table
		avail int
		want  []int
	}{
		{"all fit", []int{3, 2}, 20, []int{4, 3}},
		{"equal share", []int{30, 20}, 18, []int{9, 9}},
		{"small one leaves room", []int{30, 1}, 18, []int{16, 2}},
		{"odd line to the first", []int{30, 30}, 7, []int{4, 3}},
		{"three tables", []int{2, 30, 30}, 20, []int{3, 9, 8}},
		{"no room", []int{5, 5}, 0, []int{0, 0}},
		{"unlimited", []int{5, 5}, -1, []int{-1, -1}},
		{"empty tables keep a note line", []int{0, 0}, 10, []int{2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ts []table
			for _, n := range tc.needs {
				ts = append(ts, tbl(n))
			}
			if diff := cmp.Diff(tc.want, allocate(ts, tc.avail)); diff != "" {
				t.Errorf("allocate(%v, %d) (-want +got):\n%s", tc.needs, tc.avail, diff)
			}
		})
	}
}

func TestRenderOneLine(t *testing.T) {
	// Room for one line only: it says what is hidden.
	tb := table{cols: []column{{header: "A"}}, rows: [][]string{{"1"}, {"2"}}}
	if got := Text(tb.render(1, 0, Plain)); got != "+2 more\n" {
		t.Errorf("one line for two rows = %q, want +2 more", got)
	}
	if got := Text(tb.render(2, 0, Plain)); got != "A\n+2 more\n" {
		t.Errorf("two lines for two rows = %q", got)
	}
	if got := Text(tb.render(3, 0, Plain)); got != "A\n1\n2\n" {
		t.Errorf("three lines for two rows = %q", got)
	}
}

// fakeInstance hands out snapshots and counts how often it was read.
type fakeInstance struct {
	mu     sync.Mutex
	reads  int
	snap   *Snapshot
	err    error
	panics bool
}

func (f *fakeInstance) fetch(context.Context) (*Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.panics {
		panic("fetch bug")
	}
	return f.snap, f.err
}

func (f *fakeInstance) set(snap *Snapshot, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap, f.err = snap, err
}

func (f *fakeInstance) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// recorder is a simulation screen that keeps a copy of what each Show
// put on it, so that a test reads the screen without racing the next draw.
type recorder struct {
	tcell.SimulationScreen
	mu    sync.Mutex
	lines []string
	shown chan struct{}
}

func newRecorder() *recorder {
	return &recorder{SimulationScreen: tcell.NewSimulationScreen("UTF-8"), shown: make(chan struct{}, 1)}
}

func (r *recorder) Show() {
	r.SimulationScreen.Show()
	lines := screenLines(r.SimulationScreen)
	r.mu.Lock()
	r.lines = lines
	r.mu.Unlock()
	select {
	case r.shown <- struct{}{}:
	default:
	}
}

// Lines are the screen as last shown.
func (r *recorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines
}

// session runs Run on a simulation screen in the background.
type session struct {
	t      *testing.T
	s      *recorder
	inst   *fakeInstance
	done   chan error
	cancel context.CancelFunc
}

func start(t *testing.T, delay time.Duration, snap *Snapshot) *session {
	t.Helper()
	ss := &session{t: t, s: newRecorder(), inst: &fakeInstance{snap: snap}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	ss.cancel = cancel
	go func() {
		ss.done <- Run(ctx, ss.s, Options{
			Fetch: ss.inst.fetch, Delay: delay, Title: "/state", Styles: Plain,
			Now: func() time.Time { return testTime },
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ss.done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return")
		}
	})
	return ss
}

// waitFor waits until a line matches re, redraw after redraw.
func (ss *session) waitFor(re string) {
	ss.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if hasLine(ss.s.Lines(), re) {
			return
		}
		select {
		case <-ss.s.shown:
		case <-deadline:
			ss.t.Fatalf("no line matches %q after 5s:\n%s", re, strings.Join(ss.s.Lines(), "\n"))
		}
	}
}

// exited waits for Run to return.
func (ss *session) exited() error {
	ss.t.Helper()
	select {
	case err := <-ss.done:
		ss.done <- err // for the cleanup
		return err
	case <-time.After(5 * time.Second):
		ss.t.Fatal("Run did not return after quit")
		return nil
	}
}

func TestRunQuitKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  tcell.Key
		r    rune
	}{
		{"q", tcell.KeyRune, 'q'},
		{"Q", tcell.KeyRune, 'Q'},
		{"ctrl-c", tcell.KeyCtrlC, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := start(t, time.Hour, sample())
			ss.waitFor(`^ƒ8QwQj batch bob`)
			ss.s.InjectKey(tc.key, tc.r, tcell.ModNone)
			if err := ss.exited(); err != nil {
				t.Errorf("Run after %s = %v, want nil", tc.name, err)
			}
		})
	}
}

func TestRunOtherKeysDoNotQuit(t *testing.T) {
	ss := start(t, time.Hour, sample())
	ss.waitFor(`^ƒ8QwQj`)
	ss.s.InjectKey(tcell.KeyRune, 'x', tcell.ModNone)
	ss.s.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	select {
	case err := <-ss.done:
		ss.done <- err
		t.Fatalf("Run returned (%v) on a key that is not quit", err)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestRunRefresh(t *testing.T) {
	// The delay is an hour: only 'r' reads the instance again.
	ss := start(t, time.Hour, many(1, 0))
	ss.waitFor(`^ *r00 `)
	if n := ss.inst.count(); n != 1 {
		t.Fatalf("%d reads before any key, want 1", n)
	}
	ss.inst.set(many(2, 1), nil)
	ss.s.InjectKey(tcell.KeyRune, 'r', tcell.ModNone)
	ss.waitFor(`^ *p00 `)
	ss.waitFor(`^ *r01 `)
	if n := ss.inst.count(); n != 2 {
		t.Errorf("%d reads after r, want 2", n)
	}
}

func TestRunDelay(t *testing.T) {
	ss := start(t, 10*time.Millisecond, many(1, 0))
	ss.waitFor(`^ *r00 `)
	ss.inst.set(many(3, 0), nil)
	ss.waitFor(`^ *r02 `)
}

func TestRunErrorKeepsRetrying(t *testing.T) {
	ss := start(t, 10*time.Millisecond, many(1, 0))
	ss.waitFor(`^ *r00 `)
	ss.inst.set(nil, errors.New("instance unavailable: timed out"))
	ss.waitFor(`^instance: instance unavailable: timed out \(retrying every 10ms\)$`)
	// The last snapshot stays while retrying.
	ss.waitFor(`^ *r00 `)
	ss.inst.set(many(2, 0), nil)
	ss.waitFor(`^ *r01 `)
	if hasLine(ss.s.Lines(), `^instance:`) {
		t.Errorf("the error stays after a good refresh:\n%s", strings.Join(ss.s.Lines(), "\n"))
	}
}

func TestRunResize(t *testing.T) {
	ss := start(t, time.Hour, many(30, 0))
	ss.waitFor(`^ *r00 `)
	ss.s.SetSize(80, 12)
	_ = ss.s.PostEvent(tcell.NewEventResize(80, 12))
	ss.waitFor(`^\+\d+ more$`)
	ss.s.SetSize(80, 60)
	_ = ss.s.PostEvent(tcell.NewEventResize(80, 60))
	ss.waitFor(`^ *r29 `)
	if hasLine(ss.s.Lines(), `more$`) {
		t.Errorf("rows are still cut on a larger screen:\n%s", strings.Join(ss.s.Lines(), "\n"))
	}
}

func TestRunContextEnds(t *testing.T) {
	// A signal (SIGINT, SIGTERM) ends the context: Run returns nil.
	ss := start(t, time.Hour, sample())
	ss.waitFor(`^ƒ8QwQj`)
	ss.cancel()
	if err := ss.exited(); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
}

// panicky is a screen whose Show panics, as a bug in drawing would.
type panicky struct{ tcell.SimulationScreen }

func (panicky) Show() { panic("boom") }

func TestRunPanic(t *testing.T) {
	// A panic while drawing ends Run with an error, after Fini.
	s := panicky{tcell.NewSimulationScreen("UTF-8")}
	err := Run(context.Background(), s, Options{Delay: time.Hour, Fetch: func(context.Context) (*Snapshot, error) {
		return sample(), nil
	}})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Run with a panicking draw = %v, want an error naming it", err)
	}
	// A panic while reading the instance is a refresh that failed.
	ss := start(t, time.Hour, nil)
	ss.waitFor(`^fluxq top`) // the screen is up: keys can be injected
	ss.inst.mu.Lock()
	ss.inst.panics = true
	ss.inst.mu.Unlock()
	ss.s.InjectKey(tcell.KeyRune, 'r', tcell.ModNone)
	ss.waitFor(`^instance: internal error: fetch bug`)
}

// Issue 26: memory is a gauge like cores, its counts in FormatMemory's
// words; its bytes do not overflow the bar, and the counts of every gauge
// still line up.
func TestDrawMemory(t *testing.T) {
	tests := []struct {
		name string
		mem  Gauge
		want []string
	}{
		{name: "three of four", mem: Gauge{Name: "memory", Used: 3 << 30, Total: 4 << 30, UsedText: "3G", TotalText: "4G"},
			want: []string{`^ nodes \[\|{20} {20}\]  2/4  \(1 drained\) +2 pending$`, `^memory \[\|{30} {10}\] 3G/4G$`}},
		{name: "none used", mem: Gauge{Name: "memory", Used: 0, Total: 4 << 30, UsedText: "0B", TotalText: "4G"},
			want: []string{`^memory \[ {40}\] 0B/4G$`}},
		{name: "a byte shows", mem: Gauge{Name: "memory", Used: 1, Total: 1 << 50, UsedText: "1B", TotalText: "1P"},
			want: []string{`^memory \[\| {39}\] 1B/1P$`}},
		{name: "exabytes", mem: Gauge{Name: "memory", Used: 1 << 62, Total: 1<<63 - 1, UsedText: "4096P", TotalText: "8191.9P"},
			want: []string{`^memory \[\|{21} {19}\]   4096P/8191.9P$`, `^ cores \[\|{30} {10}\]      12/16 `}},
		{name: "more used than there is", mem: Gauge{Name: "memory", Used: 5 << 30, Total: 4 << 30, UsedText: "5G", TotalText: "4G"},
			want: []string{`^memory \[\|{40}\] 5G/4G$`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sample()
			snap.Gauges = append(snap.Gauges, tt.mem)
			lines := draw(t, snap, Status{Delay: time.Second}, 120, 40)
			for _, want := range tt.want {
				if !hasLine(lines, want) {
					t.Errorf("no line matches %q in:\n%s", want, strings.Join(lines, "\n"))
				}
			}
		})
	}
}
