package fluxq

import (
	"bytes"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/progress"
	"github.com/fluxq/fluxq/internal/queue"
)

// fluxq queue list's cells: ranges with "inf" for no maximum, durations
// with "inf" for none (as flux queue list).
func TestQueueListCells(t *testing.T) {
	sizes := []struct {
		min, max int64
		want     string
	}{
		{queue.Unlimited, queue.Unlimited, "0-inf"},
		{0, 4, "0-4"},
		{2, queue.Unlimited, "2-inf"},
		{1, 1, "1-1"},
	}
	for _, tt := range sizes {
		if got := sizeRange(tt.min, tt.max); got != tt.want {
			t.Errorf("sizeRange(%d, %d) = %q, want %q", tt.min, tt.max, got, tt.want)
		}
	}
	durations := []struct {
		sec  float64
		want string
	}{{0, "inf"}, {60, "1m"}, {3600, "1h"}, {90, "1.5m"}}
	for _, tt := range durations {
		if got := durationCell(tt.sec); got != tt.want {
			t.Errorf("durationCell(%v) = %q, want %q", tt.sec, got, tt.want)
		}
	}
}

// On a terminal, drain and idle show what is left and how long they have
// waited, on one line erased at the end; elsewhere they print nothing.
func TestQueueProgress(t *testing.T) {
	now := testNow
	clock := func() time.Time { return now }
	var b bytes.Buffer
	p := &queueLine{line: progress.New(&b, progress.Forced(true), progress.WithInterval(time.Hour)), idle: true, now: clock, start: now}
	p.line.Tick(p.text) // draws once at once, then hourly
	p.show(api.QueueCounts{Running: 2, Pending: 1, Waiting: 3})
	now = now.Add(12500 * time.Millisecond)
	if got, want := p.text(), "idle: 2 running, 1 alloc pending (3 jobs waiting) 12s"; got != want {
		t.Errorf("idle line = %q, want %q", got, want)
	}
	p.done()
	if got, want := b.String(), "\ridle: counting jobs 0s\033[K\r\033[K"; got != want {
		t.Errorf("idle wrote %q, want %q", got, want)
	}

	d := &queueLine{now: clock, start: testNow}
	d.show(api.QueueCounts{Active: 12, Running: 3})
	if got, want := d.text(), "drain: 12 active jobs (3 running) 12s"; got != want {
		t.Errorf("drain line = %q, want %q", got, want)
	}
	d.show(api.QueueCounts{Active: 1, Running: 1})
	if got, want := d.text(), "drain: 1 active job (1 running) 12s"; got != want {
		t.Errorf("drain line = %q, want %q", got, want)
	}
	d.done() // no Line: nothing to erase, no panic
}
