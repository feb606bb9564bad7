package fluxq

import (
	"bytes"
	"testing"

	"github.com/fluxq/fluxq/internal/client"
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

// On a terminal, drain and idle rewrite one progress line and clear it at
// the end; elsewhere they print nothing.
func TestQueueProgress(t *testing.T) {
	var b bytes.Buffer
	p := &progressLine{w: &b, idle: true}
	p.show(client.QueueCounts{Running: 2, Pending: 1, Waiting: 3})
	p.show(client.QueueCounts{Running: 1, Waiting: 3})
	p.done()
	want := "\r\033[Kidle: 2 running, 1 alloc pending, 3 waiting" +
		"\r\033[Kidle: 1 running, 0 alloc pending, 3 waiting" + "\r\033[K"
	if b.String() != want {
		t.Errorf("progress = %q, want %q", b.String(), want)
	}
	b.Reset()
	d := &progressLine{w: &b}
	d.show(client.QueueCounts{Active: 4, Running: 2})
	if got := b.String(); got != "\r\033[Kdrain: 4 active jobs (2 running)" {
		t.Errorf("drain progress = %q", got)
	}
	silent := &progressLine{}
	silent.show(client.QueueCounts{Active: 1})
	silent.done()
}
