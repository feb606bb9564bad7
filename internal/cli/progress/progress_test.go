package progress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// tty is a buffer that says it is a terminal, so a Line draws on it.
type tty struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (t *tty) IsTerminal() bool { return true }
func (t *tty) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.Write(p)
}
func (t *tty) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// clock is a time a test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1_700_000_000, 0)} }
func drawn(texts ...string) (s string) {
	for _, t := range texts {
		s += "\r" + t + "\x1b[K"
	}
	return s
}

const erased = "\r\x1b[K"

// At most one drawing per interval: what is set in between is not lost,
// the next drawing shows the latest; the same text is not drawn twice.
func TestLineRateLimit(t *testing.T) {
	w, c := &tty{}, newClock()
	l := New(w, WithClock(c.now))
	l.Set("a") // first: drawn at once
	c.add(50 * time.Millisecond)
	l.Set("b") // too soon
	c.add(40 * time.Millisecond)
	l.Set("c") // still too soon (90ms)
	c.add(10 * time.Millisecond)
	l.Set("d") // 100ms: drawn, b and c never were
	c.add(time.Second)
	l.Set("d") // same text: nothing to write
	c.add(time.Second)
	l.Set("e")
	l.Done()
	l.Set("f") // after Done: nothing
	if got, want := w.String(), drawn("a", "d", "e")+erased; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// Ten updates a second at most, however many come: 1,000 sets over one
// second draw at most 11 times (at 0, 100ms, ..., 1s).
func TestLineAtMostTenASecond(t *testing.T) {
	w, c := &tty{}, newClock()
	l := New(w, WithClock(c.now))
	for i := range 1000 {
		l.Set(Thousands(i))
		c.add(time.Millisecond)
	}
	if n := strings.Count(w.String(), "\r"); n > 11 || n < 9 {
		t.Errorf("%d drawings for 1,000 sets over 1s, want about 10", n)
	}
}

// Off a terminal nothing is written at all; Forced overrides the guess
// both ways.
func TestLineOffATerminal(t *testing.T) {
	var b bytes.Buffer
	l := New(&b)
	if l.Enabled() {
		t.Error("a buffer is not a terminal, yet the line is enabled")
	}
	l.Set("x")
	l.Tick(func() string { return "y" })
	l.Hide(func() { b.WriteString("note\n") })
	l.End()
	if b.String() != "note\n" {
		t.Errorf("wrote %q off a terminal, want only the note", b.String())
	}

	w := &tty{}
	off := New(w, Forced(false))
	off.Set("x")
	off.Done()
	if w.String() != "" {
		t.Errorf("Forced(false) wrote %q", w.String())
	}
	var fb bytes.Buffer
	on := New(&fb, Forced(true))
	on.Set("x")
	on.Done()
	if got := fb.String(); got != drawn("x")+erased {
		t.Errorf("Forced(true) wrote %q", got)
	}
	if New(nil, Forced(true)).Enabled() {
		t.Error("a line on no writer is enabled")
	}
}

// A nil Line is a line that shows nothing: commands hold one where they
// have no progress to show.
func TestNilLine(t *testing.T) {
	var l *Line
	l.Set("x")
	l.Tick(nil)
	ran := false
	l.Hide(func() { ran = true })
	l.Done()
	l.End()
	if l.Enabled() || !ran {
		t.Errorf("nil line: enabled %v, Hide ran fn %v", l.Enabled(), ran)
	}
	c := NewCounter(nil, "x", "jobs", 3)
	c.Add(1)
	c.Done()
}

// WithDelay shows nothing for a quick command; End of a line never shown
// prints nothing either, and a slow command's line appears once due.
func TestLineDelay(t *testing.T) {
	w, c := &tty{}, newClock()
	l := New(w, WithClock(c.now), WithDelay(time.Second))
	l.Set("a")
	c.add(999 * time.Millisecond)
	l.Set("b")
	l.End()
	if w.String() != "" {
		t.Errorf("quick command wrote %q", w.String())
	}

	w, c = &tty{}, newClock()
	l = New(w, WithClock(c.now), WithDelay(time.Second))
	l.Set("a")
	c.add(time.Second)
	l.Set("b")
	l.End()
	if got, want := w.String(), drawn("b")+"\n"; got != want {
		t.Errorf("slow command wrote %q, want %q", got, want)
	}
}

// End keeps the latest text, even one the rate limit held back.
func TestLineEnd(t *testing.T) {
	w, c := &tty{}, newClock()
	l := New(w, WithClock(c.now))
	l.Set("a")
	l.Set("b") // held back
	l.End()
	l.Done() // already ended: nothing
	if got, want := w.String(), drawn("a", "b")+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// Hide puts whole lines above the progress line and draws it again.
func TestLineHide(t *testing.T) {
	w, c := &tty{}, newClock()
	l := New(w, WithClock(c.now))
	l.Set("waiting")
	l.Hide(func() { io.WriteString(w, "job failed\n") })
	l.Done()
	if got, want := w.String(), drawn("waiting")+erased+"job failed\n"+drawn("waiting")+erased; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// Tick redraws on its own until Done, and nothing is drawn after Done
// returns.
func TestLineTick(t *testing.T) {
	w := &tty{}
	l := New(w, WithInterval(time.Millisecond))
	var mu sync.Mutex
	n := 0
	l.Tick(func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return Thousands(n)
	})
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(w.String(), "\r") < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	l.Done()
	after := w.String()
	time.Sleep(20 * time.Millisecond)
	if w.String() != after {
		t.Error("the line was drawn after Done returned")
	}
	if !strings.HasPrefix(after, drawn("1", "2")) || !strings.HasSuffix(after, erased) {
		t.Errorf("ticking wrote %q", after)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 4200: "4,200", 10000: "10,000",
		123456: "123,456", 1234567: "1,234,567", -1234: "-1,234", -12: "-12",
	} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		name        string
		done, total int
		elapsed     time.Duration
		want        string
	}{
		{"with an ETA", 4200, 10000, 2 * time.Second, "submitting 4,200/10,000 jobs (42%), 3s left"},
		{"too early for an ETA", 4200, 10000, 500 * time.Millisecond, "submitting 4,200/10,000 jobs (42%)"},
		{"nothing done yet", 0, 10000, time.Minute, "submitting 0/10,000 jobs (0%)"},
		{"all done", 10000, 10000, time.Minute, "submitting 10,000/10,000 jobs (100%)"},
		{"rounds down to 99%", 9999, 10000, time.Hour, "submitting 9,999/10,000 jobs (99%), 1s left"},
		{"minutes left", 1, 100, 10 * time.Second, "submitting 1/100 jobs (1%), 16m30s left"},
		{"no total", 4200, 0, time.Second, "submitting 4,200 jobs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Count("submitting", "jobs", tt.done, tt.total, tt.elapsed); got != tt.want {
				t.Errorf("Count = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", time.Millisecond: "1s", 3 * time.Second: "3s", 59*time.Second + time.Millisecond: "1m00s",
		125 * time.Second: "2m05s", 3720 * time.Second: "1h02m", 100 * time.Hour: "4d04h",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A Counter without a total spins, one frame per drawing.
func TestCounterSpinner(t *testing.T) {
	w, c := &tty{}, newClock()
	l := New(w, WithClock(c.now), WithInterval(time.Hour)) // only the first tick
	ctr := NewCounter(l, "submitting", "jobs", 0)
	ctr.Add(3)
	ctr.Done()
	if got, want := w.String(), drawn("| submitting 0 jobs")+erased; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if got := Spinner(5); got != "/" {
		t.Errorf("Spinner(5) = %q", got)
	}
}

// On a real pseudo-terminal the line is on, and the terminal receives it;
// on a regular file it is off.
func TestLineOnAPseudoTerminal(t *testing.T) {
	ptmx, tt, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	defer tt.Close()
	got := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 256)
		for !strings.Contains(b.String(), "done") {
			n, err := ptmx.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- b.String()
	}()
	l := New(tt)
	if !l.Enabled() {
		t.Fatal("a line on a pseudo-terminal is off")
	}
	l.Set("submitting 1/2 jobs (50%)")
	l.Done()
	io.WriteString(tt, "done\n")
	select {
	case s := <-got:
		if !strings.Contains(s, "\rsubmitting 1/2 jobs (50%)\x1b[K\r\x1b[K") {
			t.Errorf("the terminal received %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came through the pseudo-terminal")
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if New(f).Enabled() {
		t.Error("a line on a regular file is on")
	}
}
