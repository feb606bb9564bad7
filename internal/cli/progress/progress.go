// Package progress draws the status line a command shows while a person
// waits on it — "submitting 4,200/10,000 jobs (42%), 3s left" — on
// standard error, rewriting it in place (carriage return, the text, then
// erase to the end of the line). Off a terminal it writes nothing at all,
// so scripts, logs and tests see exactly what they would without it.
//
// A Line is drawn at most about ten times a second however often it is
// set, and is erased (Done) or left with a final newline (End) when the
// command finishes. The data a command prints on stdout never goes
// through here.
package progress

import (
	"io"
	"sync"
	"time"

	"github.com/fluxq/fluxq/internal/cli/output"
)

// Interval is the least time between two drawings: often enough to look
// alive, rarely enough not to flood a slow terminal or a remote session.
const Interval = 100 * time.Millisecond

// The terminal sequences: back to the start of the line, and erase from
// the cursor to the end of the line (ECMA-48 EL 0), which every terminal
// emulator in use understands.
const (
	carriageReturn = "\r"
	clearToEOL     = "\x1b[K"
)

// Terminal is a writer that says itself whether it is a terminal. New
// asks it before output.IsTerminal, which only knows files; tests pass
// one to turn a Line on over a buffer.
type Terminal interface {
	IsTerminal() bool
}

// Option changes how a Line behaves; the defaults suit a command.
type Option func(*Line)

// WithClock makes the Line read time from now instead of time.Now, so a
// test can step time by hand.
func WithClock(now func() time.Time) Option { return func(l *Line) { l.now = now } }

// WithInterval sets the least time between two drawings (default
// Interval).
func WithInterval(d time.Duration) Option { return func(l *Line) { l.interval = d } }

// WithDelay draws nothing until d has passed since New: a command that
// is usually quick shows no line unless, this time, it is not.
func WithDelay(d time.Duration) Option { return func(l *Line) { l.delay = d } }

// Forced turns the Line on or off whatever the writer is.
func Forced(on bool) Option { return func(l *Line) { l.on = on } }

// Line is one status line on a terminal. Its methods are safe for
// concurrent use and do nothing on a nil *Line, so a command can hold a
// nil Line where it shows no progress.
type Line struct {
	mu       sync.Mutex
	w        io.Writer
	on       bool
	now      func() time.Time
	interval time.Duration
	delay    time.Duration
	born     time.Time
	text     string    // the latest text set
	drawn    string    // the text on the screen, when shown
	shown    bool      // the screen holds the line
	last     time.Time // when the line was last drawn
	ended    bool      // Done or End was called
	ticking  bool      // a Tick goroutine draws; Set only records
	render   func() string
	stop     chan struct{}
	stopped  chan struct{}
}

// New returns a Line on w, on only when w is a terminal (see Terminal and
// Forced).
func New(w io.Writer, opts ...Option) *Line {
	l := &Line{w: w, now: time.Now, interval: Interval}
	if t, ok := w.(Terminal); ok {
		l.on = t.IsTerminal()
	} else {
		l.on = output.IsTerminal(w)
	}
	for _, o := range opts {
		o(l)
	}
	if w == nil {
		l.on = false
	}
	l.born = l.now()
	return l
}

// Enabled reports whether the Line draws anything, so a caller can skip
// work that only feeds it.
func (l *Line) Enabled() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.on && !l.ended
}

// Set makes text the line's content. It is drawn now unless the line was
// drawn less than the interval ago (or a Tick draws it), in which case
// the next drawing shows it: the latest text always wins.
func (l *Line) Set(text string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on || l.ended {
		return
	}
	l.text = text
	if !l.ticking {
		l.drawIfDue()
	}
}

// Tick redraws the line every interval, with the text render returns (nil
// render: the latest text Set gave) until Done or End, so that a clock or
// a spinner moves while nothing else happens. While it runs, Set only
// records, and Tick's drawings are the only ones. render is called with
// the Line's lock held: it must not call the Line's methods.
func (l *Line) Tick(render func() string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on || l.ended || l.ticking {
		return
	}
	l.ticking, l.render = true, render
	l.stop, l.stopped = make(chan struct{}), make(chan struct{})
	tick := func() {
		if l.render != nil {
			l.text = l.render()
		}
		if l.now().Sub(l.born) >= l.delay {
			l.draw()
		}
	}
	tick()
	go func() {
		defer close(l.stopped)
		t := time.NewTicker(l.interval)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.mu.Lock()
				if !l.ended {
					tick()
				}
				l.mu.Unlock()
			}
		}
	}()
}

// Hide erases the line, runs fn (which may write whole lines to the same
// terminal), and draws the line again below them, as Tick's render has it
// now. fn runs with the lock held: it must not call the Line's methods.
func (l *Line) Hide(fn func()) {
	if l == nil {
		fn()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.shown {
		fn()
		return
	}
	l.erase()
	fn()
	if l.render != nil {
		l.text = l.render()
	}
	l.draw()
}

// Done erases the line and stops any Tick; the Line draws nothing after.
func (l *Line) Done() { l.finish(false) }

// End leaves the latest text on the screen, ends it with a newline, and
// stops any Tick. A line never shown (too quick for WithDelay) stays
// unshown.
func (l *Line) End() { l.finish(true) }

func (l *Line) finish(keep bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return
	}
	l.ended = true
	stop, stopped := l.stop, l.stopped
	if keep && l.shown {
		l.draw()
		io.WriteString(l.w, "\n")
		l.shown = false
	} else {
		l.erase()
	}
	l.mu.Unlock()
	// The Tick goroutine takes the lock to draw: wait for it outside, so
	// that no drawing follows the return.
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// drawIfDue draws the latest text unless it is too early: before the
// delay, or within the interval of the last drawing.
func (l *Line) drawIfDue() {
	now := l.now()
	if now.Sub(l.born) < l.delay {
		return
	}
	if l.shown && now.Sub(l.last) < l.interval {
		return
	}
	l.draw()
}

// draw writes the latest text over the line, unless it is there already.
func (l *Line) draw() {
	if l.shown && l.drawn == l.text {
		return
	}
	// One write, so that the terminal never shows half a line.
	io.WriteString(l.w, carriageReturn+l.text+clearToEOL)
	l.drawn, l.shown, l.last = l.text, true, l.now()
}

// erase clears the line, if shown.
func (l *Line) erase() {
	if !l.shown {
		return
	}
	io.WriteString(l.w, carriageReturn+clearToEOL)
	l.drawn, l.shown = "", false
}
