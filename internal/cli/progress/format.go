package progress

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Thousands writes n with a comma between groups of three digits, as a
// person reads a count: 4,200 and 10,000.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	if len(s) <= 3 {
		if neg {
			return "-" + s
		}
		return s
	}
	b := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		b = append(b, '-')
	}
	lead := len(s) % 3
	if lead == 0 {
		lead = 3
	}
	b = append(b, s[:lead]...)
	for i := lead; i < len(s); i += 3 {
		b = append(b, ',')
		b = append(b, s[i:i+3]...)
	}
	return string(b)
}

// Percent is done of total in whole percent, rounded down so that 100%
// means finished, and kept within 0-100.
func Percent(done, total int) int {
	if total <= 0 || done <= 0 {
		return 0
	}
	if done >= total {
		return 100
	}
	return int(int64(done) * 100 / int64(total))
}

// minETAElapsed is how long a count must have run before its rate says
// anything about the rest: the first instants of a command are start-up.
const minETAElapsed = time.Second

// ETA estimates the time left at the rate so far; ok is false while there
// is too little to go on (nothing done, or under a second elapsed) or
// nothing left.
func ETA(done, total int, elapsed time.Duration) (left time.Duration, ok bool) {
	if done <= 0 || done >= total || elapsed < minETAElapsed {
		return 0, false
	}
	rest := float64(elapsed) * float64(total-done) / float64(done)
	return time.Duration(rest), true
}

// Duration writes d the short way a progress line wants: 3s, 2m05s,
// 1h02m, 3d04h; rounded up to the second, since "0s left" is never true.
func Duration(d time.Duration) string {
	sec := int64((d + time.Second - 1) / time.Second)
	switch {
	case sec < 60:
		return fmt.Sprintf("%ds", sec)
	case sec < 3600:
		return fmt.Sprintf("%dm%02ds", sec/60, sec%60)
	case sec < 86400:
		return fmt.Sprintf("%dh%02dm", sec/3600, sec%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", sec/86400, sec%86400/3600)
}

// Count is a count towards a total, "submitting 4,200/10,000 jobs (42%)",
// followed by ", 3s left" once ETA can tell. Without a total (total <= 0)
// it is "submitting 4,200 jobs".
func Count(verb, unit string, done, total int, elapsed time.Duration) string {
	if total <= 0 {
		return verb + " " + Thousands(done) + " " + unit
	}
	s := fmt.Sprintf("%s %s/%s %s (%d%%)", verb, Thousands(done), Thousands(total), unit, Percent(done, total))
	if left, ok := ETA(done, total, elapsed); ok {
		s += ", " + Duration(left) + " left"
	}
	return s
}

// spinner is drawn one frame per drawing; plain ASCII, which every
// terminal and font has.
var spinner = [...]string{"|", "/", "-", `\`}

// Spinner is frame n of the spinner.
func Spinner(n int) string { return spinner[uint(n)%uint(len(spinner))] }

// Counter is a Line counting towards a total: Count's text, redrawn as
// time passes so the ETA (or, without a total, a spinner) moves. Its
// methods are safe for concurrent use.
type Counter struct {
	line       *Line
	verb, unit string
	total      int
	start      time.Time
	now        func() time.Time

	mu    sync.Mutex
	done  int
	frame int
}

// NewCounter starts counting on l: VERB DONE/TOTAL UNIT; total <= 0 when
// it is not known. A nil or disabled l gives a Counter that draws nothing.
func NewCounter(l *Line, verb, unit string, total int) *Counter {
	c := &Counter{line: l, verb: verb, unit: unit, total: total, now: time.Now}
	if l != nil {
		c.now = l.now
	}
	c.start = c.now()
	l.Tick(c.text)
	return c
}

// Set records how many are done.
func (c *Counter) Set(done int) {
	c.mu.Lock()
	c.done = done
	c.mu.Unlock()
}

// Add counts n more done.
func (c *Counter) Add(n int) {
	c.mu.Lock()
	c.done += n
	c.mu.Unlock()
}

// Done erases the line.
func (c *Counter) Done() { c.line.Done() }

// End leaves the line on the screen with a newline.
func (c *Counter) End() { c.line.End() }

// text is the line now; each call is one frame of the spinner.
func (c *Counter) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Count(c.verb, c.unit, c.done, c.total, c.now().Sub(c.start))
	if c.total <= 0 {
		s = Spinner(c.frame) + " " + s
		c.frame++
	}
	return s
}
