package top

import (
	"context"
	"fmt"
	"time"

	"github.com/gdamore/tcell/v2"
)

// Fetch reads one snapshot of the instance.
type Fetch func(ctx context.Context) (*Snapshot, error)

// Options are how Run refreshes and draws.
type Options struct {
	// Fetch reads the instance; each call gets Timeout to answer.
	Fetch   Fetch
	Timeout time.Duration
	// Delay is the time between the end of one refresh and the next.
	Delay  time.Duration
	Title  string
	Styles Styles
	// Now is the clock of the title line (nil: time.Now).
	Now func() time.Time
}

// Run shows the instance on s until the user quits (q, Q, Ctrl-C) or ctx
// ends (a signal), then restores the terminal. It initialises s and
// finalises it; a panic in between is returned as an error once the
// terminal is restored, so it never leaves the user's terminal raw.
// A failed refresh does not end it: the error shows in the header and
// the next refresh retries.
func Run(ctx context.Context, s tcell.Screen, o Options) (err error) {
	if err := s.Init(); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
		s.Fini()
	}()
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	// Without a UTF-8 terminal, ASCII stand-ins for what the screen uses.
	s.RegisterRuneFallback('ƒ', "f")
	s.RegisterRuneFallback('✔', "y")
	s.RegisterRuneFallback('✗', "n")
	s.HideCursor()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan tcell.Event, 16)
	quit := make(chan struct{})
	defer close(quit)
	go s.ChannelEvents(events, quit)

	type result struct {
		snap *Snapshot
		err  error
		at   time.Time
	}
	results := make(chan result, 1)
	fetching, again := false, false
	fetch := func() {
		fetching = true
		go func() {
			fctx, done := context.WithTimeout(ctx, o.Timeout)
			defer done()
			var r result
			defer func() {
				// A panic here would take the terminal down raw.
				if p := recover(); p != nil {
					r.err = fmt.Errorf("internal error: %v", p)
				}
				results <- r
			}()
			r.snap, r.err = o.Fetch(fctx)
			r.at = o.Now()
		}()
	}

	var snap *Snapshot
	st := Status{Title: o.Title, Delay: o.Delay}
	draw := func() { Draw(s, snap, st, o.Styles) }
	draw()
	fetch()
	timer := time.NewTimer(o.Delay)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			if !fetching {
				fetch()
			}
		case r := <-results:
			fetching = false
			if r.err != nil {
				st.Err = r.err.Error()
			} else {
				snap, st.Err, st.Updated = r.snap, "", r.at
			}
			draw()
			if again {
				again = false
				fetch()
			} else {
				timer.Reset(o.Delay)
			}
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			switch ev := ev.(type) {
			case *tcell.EventResize:
				s.Sync()
				draw()
			case *tcell.EventKey:
				switch {
				case ev.Key() == tcell.KeyCtrlC, ev.Key() == tcell.KeyRune && (ev.Rune() == 'q' || ev.Rune() == 'Q'):
					return nil
				case ev.Key() == tcell.KeyCtrlL:
					s.Sync()
					draw()
				case ev.Key() == tcell.KeyRune && (ev.Rune() == 'r' || ev.Rune() == 'R'):
					timer.Stop()
					if fetching {
						again = true // right after the one under way
					} else {
						fetch()
					}
				}
			}
		}
	}
}
