package connlimit

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func tracker() *Tracker {
	return New("testd", Caps{Conns: 4, GuestConns: 3, PerGuest: 2, Buffered: 1 << 20, GuestBuffered: 256 << 10,
		Line: 512 << 10, GuestLine: 4 << 10}, nil)
}

// A guest over its cap, or guests over theirs, are refused with why; the
// privileged still have room until the total.
func TestAdmit(t *testing.T) {
	tr := tracker()
	steps := []struct {
		uid   uint32
		guest bool
		want  string // "" admitted
	}{
		{1000, true, ""},
		{1000, true, ""},
		{1000, true, "too many connections from uid 1000 (2 open)"},
		{1001, true, ""},
		{1002, true, "too many connections from guests (3 open)"},
		{0, false, ""},
		{0, false, "too many connections (4 open)"},
	}
	for i, s := range steps {
		ok, why := tr.Admit(s.uid, s.guest)
		if ok != (s.want == "") || !strings.Contains(why, s.want) {
			t.Errorf("step %d (uid %d): admitted %v, %q; want %q", i, s.uid, ok, why, s.want)
		}
	}
	tr.Forget(1000, true)
	if ok, why := tr.Admit(1000, true); !ok {
		t.Errorf("a closed connection was not counted out: %s", why)
	}
	if all, of := tr.Open(1000); all != 4 || of != 2 {
		t.Errorf("Open = %d, %d; want 4, 2", all, of)
	}
}

// oneByte hands its data over a byte at a time, as a slow sender would.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(1, len(p))]) }

// Lines are returned whole and in order however they arrive, each bound
// by its caller's limit; a long one goes through a map and comes back
// out of it with what followed it.
func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 300<<10) + "\n"
	cases := []struct {
		name  string
		in    string
		guest bool
		slow  bool
		want  []string
		err   string
	}{
		{"small lines", "a\nbc\n\nd\n", false, false, []string{"a\n", "bc\n", "\n", "d\n"}, "EOF"},
		{"slow", "a\nbc\n", false, true, []string{"a\n", "bc\n"}, "EOF"},
		{"long then small", long + "tail\nmore\n", false, false, []string{long, "tail\n", "more\n"}, "EOF"},
		{"guest at its limit", strings.Repeat("y", 4<<10-1) + "\nz\n", true, false, []string{strings.Repeat("y", 4<<10-1) + "\n", "z\n"}, "EOF"},
		{"guest over its limit", strings.Repeat("y", 4<<10) + "\n", true, false, nil, "request longer than 4 KiB (the limit for guests)"},
		{"guest, no newline", strings.Repeat("y", 1<<20), true, false, nil, "request longer than 4 KiB (the limit for guests)"},
		{"owner over its limit", strings.Repeat("y", 512<<10) + "\n", false, false, nil, "request longer than 512 KiB"},
		{"unterminated", "a\nrest", false, false, []string{"a\n"}, "EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := tracker()
			var src io.Reader = strings.NewReader(c.in)
			if c.slow {
				src = oneByte{src}
			}
			r := tr.NewReader(src, c.guest, 1<<10)
			var got []string
			var err error
			for {
				var line []byte
				if line, err = r.ReadLine(); err != nil {
					break
				}
				got = append(got, string(line))
			}
			r.Close()
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("lines = %.60q, want %.60q", got, c.want)
			}
			if err == nil || err.Error() != c.err {
				t.Errorf("err = %v, want %s", err, c.err)
			}
			if all, guests := tr.Buffered(); all != 0 || guests != 0 {
				t.Errorf("budget not given back: %d, %d by guests", all, guests)
			}
		})
	}
}

// With the guests' budget spent, a guest's long line is refused as busy,
// a small one and the privileged's long one are not.
func TestBudget(t *testing.T) {
	tr := New("testd", Caps{Conns: 4, GuestConns: 3, PerGuest: 2, Buffered: 4 << 20, GuestBuffered: 1 << 20,
		Line: 2 << 20, GuestLine: 2 << 20}, nil)
	if !tr.Take(1<<20, true) {
		t.Fatal("the budget was not free")
	}
	read := func(n int, guest bool) error {
		r := tr.NewReader(strings.NewReader(strings.Repeat("x", n-1)+"\n"), guest, 4<<10)
		defer r.Close()
		_, err := r.ReadLine()
		return err
	}
	if err := read(1<<20, true); !errors.Is(err, ErrBusy) || err.Error() != "testd is busy: too many large requests in progress, try again" {
		t.Errorf("guest, budget spent: %v", err)
	}
	if err := read(FreeRead, true); err != nil {
		t.Errorf("small guest line, budget spent: %v", err)
	}
	if err := read(1<<20, false); err != nil {
		t.Errorf("privileged, guests' budget spent: %v", err)
	}
	tr.Give(1<<20, true)
	if all, guests := tr.Buffered(); all != 0 || guests != 0 {
		t.Errorf("budget not given back: %d, %d by guests", all, guests)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int]string{32 << 20: "32 MiB", 4 << 10: "4 KiB", 1000: "1000 bytes", 3<<20 + 1: "3145729 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// chunks hands data over in reads of the sizes given, in turn.
type chunks struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])*97 + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// The reader splits any input as bytes.SplitAfter does, however it
// arrives, refusing exactly the lines past the bound.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbc\n\n"), []byte{1, 2, 3})
	f.Add(bytes.Repeat([]byte("x\n"), 3000), []byte{200})
	f.Add(append(bytes.Repeat([]byte("y"), 70<<10), '\n', 'z', '\n'), []byte{255, 0})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		const limit = 96 << 10
		tr := New("f", Caps{Buffered: 1 << 30, GuestBuffered: 1 << 30, Line: limit, GuestLine: limit}, nil)
		r := tr.NewReader(&chunks{data: data, sizes: sizes}, false, 512)
		defer r.Close()
		want := bytes.SplitAfter(data, []byte("\n"))
		for _, w := range want {
			if len(w) == 0 || w[len(w)-1] != '\n' {
				break // the unterminated tail
			}
			line, err := r.ReadLine()
			if len(w) > limit {
				var tl *TooLong
				if !errors.As(err, &tl) {
					t.Fatalf("a %d-byte line: %v, want too long", len(w), err)
				}
				return
			}
			if err != nil || !bytes.Equal(line, w) {
				t.Fatalf("line = %.40q, %v; want %.40q", line, err, w)
			}
		}
		if _, err := r.ReadLine(); err == nil {
			t.Fatal("a line past the input")
		}
	})
}

// The soft descriptor limit is raised to the hard one, and the caps
// derived from it leave half of it to the process.
func TestRaiseNoFile(t *testing.T) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Max < 256 {
		t.Skipf("hard descriptor limit %d", rl.Max)
	}
	low := unix.Rlimit{Cur: 200, Max: rl.Max}
	if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, &low, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Prlimit(0, unix.RLIMIT_NOFILE, &rl, nil) })
	if conns, guests, per := ConnCaps(4096, 256); conns != 100 || guests != 75 || per != 18 {
		t.Errorf("caps under 200 descriptors: %d, %d, %d; want 100, 75, 18", conns, guests, per)
	}
	cur, err := RaiseNoFile()
	if err != nil || cur != rl.Max {
		t.Errorf("RaiseNoFile = %d, %v; want %d", cur, err, rl.Max)
	}
	if conns, _, _ := ConnCaps(4096, 256); rl.Max >= 8192 && conns != 4096 {
		t.Errorf("caps under %d descriptors: %d connections, want 4096", rl.Max, conns)
	}
}
