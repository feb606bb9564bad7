package fluxq

import (
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
)

// signalSeq delivers sigs to run in order, each once run has dealt with
// the one before (a send on an unbuffered channel completes only when the
// command is back waiting). Ctrl-Z (SIGTSTP) goes to the channel run
// catches it on: a sequence holds one only where run catches it. The
// env's clock gives times in turn, one per call: run reads it once per
// Ctrl-C and Ctrl-Z, never for SIGTERM.
type signalSeq struct {
	sigs  []os.Signal
	times []time.Duration // after testNow
}

func (s signalSeq) env(fc client.Client) (*env, func() bool) {
	e := testEnv(fc, "")
	var mu sync.Mutex
	times := s.times
	e.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if len(times) == 0 {
			panic("the clock was read more often than the test expects")
		}
		t := times[0]
		times = times[1:]
		return testNow.Add(t)
	}
	ints := make(chan os.Signal)
	stops := make(chan os.Signal)
	caught := false
	e.signals = func() (<-chan os.Signal, func()) {
		go func() {
			for _, sig := range s.sigs {
				if sig == syscall.SIGTSTP {
					stops <- sig
				} else {
					ints <- sig
				}
			}
		}()
		return ints, func() {}
	}
	e.stops = func() (<-chan os.Signal, func()) {
		mu.Lock()
		caught = true
		mu.Unlock()
		return stops, func() {}
	}
	return e, func() bool { mu.Lock(); defer mu.Unlock(); return caught }
}

// As flux job attach: the first Ctrl-C only says what comes next; a
// second within 2s cancels the job; a Ctrl-Z within 2s of a Ctrl-C
// detaches; SIGTERM cancels at once.
func TestRunInterrupts(t *testing.T) {
	const first = "fluxq: run: one more ctrl-C within 2s to cancel or ctrl-Z to detach\n"
	canceled := "fluxq: run: job.exception type=cancel severity=0 " + noteInterrupted + "\n"
	for _, tc := range []struct {
		name  string
		seq   signalSeq
		want  result
		notes []string
	}{
		{"two ctrl-C within 2s cancel",
			signalSeq{[]os.Signal{os.Interrupt, os.Interrupt}, []time.Duration{0, time.Second}},
			result{Stderr: first + canceled, Code: 1}, []string{noteInterrupted}},
		{"a ctrl-C 2s after the last is a first one again",
			signalSeq{[]os.Signal{os.Interrupt, os.Interrupt, os.Interrupt}, []time.Duration{0, 3 * time.Second, 4 * time.Second}},
			result{Stderr: first + first + canceled, Code: 1}, []string{noteInterrupted}},
		{"ctrl-C then ctrl-Z detaches",
			signalSeq{[]os.Signal{os.Interrupt, syscall.SIGTSTP}, []time.Duration{0, time.Second}},
			result{Stderr: first + "fluxq: run: detached from ƒJF: it keeps running; 'fluxq attach ƒJF' follows it again\n", Code: exitDetached}, nil},
		{"a late ctrl-Z leaves the next to suspend",
			signalSeq{[]os.Signal{os.Interrupt, syscall.SIGTSTP, os.Interrupt, os.Interrupt}, []time.Duration{0, 3 * time.Second, 5 * time.Second, 6 * time.Second}},
			result{Stderr: first + "fluxq: run: one more ctrl-Z to suspend\n" + first + canceled, Code: 1}, []string{noteInterrupted}},
		{"SIGTERM cancels",
			signalSeq{[]os.Signal{syscall.SIGTERM}, nil},
			result{Stderr: "fluxq: run: job.exception type=cancel severity=0 " + noteTerminated + "\n", Code: 1}, []string{noteTerminated}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &interruptClient{fakeClient: &fakeClient{infos: map[fluid.ID]*api.JobInfo{1000: {}}}, canceled: make(chan struct{})}
			e, _ := tc.seq.env(fc)
			got := runEnv(e, "run", "sleep", "100")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.notes, fc.notes); diff != "" {
				t.Errorf("cancel notes (-want +got):\n%s", diff)
			}
		})
	}
}

// Ctrl-Z before any Ctrl-C is not caught: it suspends fluxq.
func TestCtrlZAloneNotCaught(t *testing.T) {
	fc := &interruptClient{fakeClient: &fakeClient{infos: map[fluid.ID]*api.JobInfo{1000: {}}}, canceled: make(chan struct{})}
	e, caught := signalSeq{[]os.Signal{syscall.SIGTERM}, nil}.env(fc)
	runEnv(e, "attach", "ƒJF")
	if caught() {
		t.Error("SIGTSTP caught with no Ctrl-C first")
	}
}
