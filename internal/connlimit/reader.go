package connlimit

import (
	"bytes"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

const (
	// FreeRead is what any connection reads of a line without asking
	// the budget: every ordinary request fits, so a budget spent by
	// others refuses only large requests.
	FreeRead = 16 << 10
	// readChunk is how much of a long line is read, and taken from the
	// budget, at a time.
	readChunk = 64 << 10
	// mapAbove: a line bound above this is read into memory mapped for
	// it once it outgrows the connection's buffer; a smaller one into a
	// buffer grown to it.
	mapAbove = 64 << 10
)

// Reader reads request lines from one connection, each at most the
// line bound of its caller. A line that outgrows the connection's own
// small buffer is read into memory mapped for it alone, not the heap:
// Release unmaps it, so it goes back to the system at once, whatever the
// runtime would keep (the race detector's shadow included). What it
// reads of such a line past FreeRead is taken from the Tracker's budget,
// a chunk at a time, before it is read.
type Reader struct {
	t     *Tracker
	r     io.Reader
	guest bool
	limit int

	buf      []byte // small, or mapped
	small    []byte
	mapped   []byte
	start, n int // buf[start:n] is read and not returned yet
	scanned  int // of which buf[start:start+scanned] holds no newline
	next     int // the end of the line returned last
	reserved int
	err      error // the read error met after bytes still to scan
}

// NewReader reads lines from r for a caller, guest or not, into a
// buffer of size bytes while they fit in it.
func (t *Tracker) NewReader(r io.Reader, guest bool, size int) *Reader {
	t.mu.Lock()
	limit := t.caps.Line
	if guest {
		limit = t.caps.GuestLine
	}
	t.mu.Unlock()
	small := make([]byte, size)
	return &Reader{t: t, r: r, guest: guest, limit: limit, buf: small, small: small}
}

// Limit is the line bound of this reader's caller.
func (r *Reader) Limit() int { return r.limit }

// ReadLine returns the next line, its newline included. The line is
// valid until Release or the next ReadLine. An error ends the
// connection's reading: a line too long (TooLong), the budget spent
// (wrapping ErrBusy), or the read's.
func (r *Reader) ReadLine() ([]byte, error) {
	r.Release()
	for {
		if i := bytes.IndexByte(r.buf[r.start+r.scanned:r.n], '\n'); i >= 0 {
			end := r.start + r.scanned + i + 1
			if end-r.start > r.limit {
				return nil, r.tooLong()
			}
			r.next, r.scanned = end, 0
			return r.buf[r.start:end], nil
		}
		r.scanned = r.n - r.start
		if r.scanned > r.limit {
			return nil, r.tooLong()
		}
		if r.err != nil {
			return nil, r.err
		}
		if r.n == len(r.buf) {
			if err := r.grow(); err != nil {
				return nil, err
			}
		}
		end := min(len(r.buf), r.n+readChunk)
		if r.mapped != nil {
			if r.n < FreeRead {
				end = min(end, FreeRead) // free, then a chunk at a time
			}
			if need := max(0, end-FreeRead) - r.reserved; need > 0 {
				if !r.t.Take(need, r.guest) {
					return nil, fmt.Errorf("%s is busy: %w", r.t.Name, ErrBusy)
				}
				r.reserved += need
			}
		}
		k, err := r.r.Read(r.buf[r.n:end])
		r.n += k
		if err != nil {
			// Said once what was read is scanned: the last line may
			// have come with it.
			r.err = err
		}
	}
}

// grow makes room in a full buffer: the unreturned bytes moved to its
// start, or the line taken to a buffer of its bound.
func (r *Reader) grow() error {
	if r.mapped != nil {
		return r.tooLong() // full at limit+1 bytes
	}
	if r.start > 0 {
		r.n = copy(r.buf, r.buf[r.start:r.n])
		r.start, r.next = 0, 0
		return nil
	}
	if r.limit <= mapAbove {
		// limit+1: one byte more than allowed tells a line too long
		// from one that just fits.
		b := make([]byte, r.limit+1)
		copy(b, r.buf[:r.n])
		r.buf, r.small = b, b
		return nil
	}
	// Pages are taken only as they are written.
	m, err := unix.Mmap(-1, 0, r.limit+1, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return fmt.Errorf("no memory for the request: %w", err)
	}
	copy(m, r.buf[:r.n])
	r.mapped, r.buf = m, m
	return nil
}

// Release gives back what the line returned last took: its map, unmapped
// (what was read past the line moves back to the connection's buffer),
// and its budget. It is safe to call at any time, and more than once.
func (r *Reader) Release() {
	if r.next > r.start {
		r.start = r.next
	}
	if r.mapped != nil && r.next > 0 {
		rest := r.buf[r.start:r.n]
		if len(rest) > len(r.small) {
			r.small = make([]byte, len(rest))
		}
		r.n = copy(r.small, rest)
		r.buf, r.start, r.next = r.small, 0, 0
		unix.Munmap(r.mapped)
		r.mapped = nil
	}
	if r.start == r.n {
		r.start, r.n, r.next = 0, 0, 0
	}
	r.t.Give(r.reserved, r.guest)
	r.reserved = 0
}

// Close releases everything the reader holds, a line half read
// included; the reader is not used again.
func (r *Reader) Close() {
	r.Release()
	if r.mapped != nil {
		unix.Munmap(r.mapped)
		r.mapped = nil
	}
	r.buf, r.small, r.start, r.n, r.next = nil, nil, 0, 0, 0
}

// TooLong is the error of a line past its caller's bound.
type TooLong struct {
	Limit int
	Guest bool
}

func (e *TooLong) Error() string {
	if e.Guest {
		return fmt.Sprintf("request longer than %s (the limit for guests)", Size(e.Limit))
	}
	return "request longer than " + Size(e.Limit)
}

func (r *Reader) tooLong() error { return &TooLong{Limit: r.limit, Guest: r.guest} }

// Size says a size in bytes as a person would: 32 MiB, 4 KiB.
func Size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
