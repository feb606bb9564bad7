package cycletrace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		line string
		want Mark
		ok   bool
	}{
		{"1 7 100\n", Mark{AgentReaped, 7, 100}, true},
		{"16 1 2", Mark{AgentLaunched, 1, 2}, true},
		{"0 1 2", Mark{}, false},
		{"19 1 2", Mark{RunnerForkOut, 1, 2}, true},
		{"20 1 2", Mark{}, false},
		{"1 x 2", Mark{}, false},
		{"1 2", Mark{}, false},
		{"", Mark{}, false},
	} {
		got, ok := parse(c.line)
		if ok != c.ok || got != c.want {
			t.Errorf("parse(%q) = %v, %v; want %v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("1 7 100\n")
	f.Add("16 18446744073709551615 -1")
	f.Fuzz(func(t *testing.T, line string) {
		m, ok := parse(line)
		if !ok {
			return
		}
		var b bytes.Buffer
		write(&b, []Mark{m})
		if back, ok := parse(b.String()); !ok || back != m {
			t.Errorf("%q read as %v, written as %q, read back as %v", line, m, b.String(), back)
		}
	})
}

// The table pairs a job's steps by its id, and a job's step with the
// turn's next (or last) one by time.
func TestTable(t *testing.T) {
	ms := func(v int64) int64 { return v * 1e6 }
	marks := []Mark{
		{AgentReaped, 1, ms(10)}, {AgentEnded, 1, ms(11)},
		{AgentReaped, 2, ms(20)}, {AgentEnded, 2, ms(23)},
		{AgentReaped, 3, ms(30)}, {AgentEnded, 3, ms(32)},
		{LoopEndIn, 1, ms(12)}, {TurnExchanged, 9, ms(15)}, {TurnExchanged, 10, ms(40)},
		{TurnCommitted, 9, ms(16)}, {LoopStartOut, 4, ms(18)},
	}
	dir := t.TempDir()
	var b bytes.Buffer
	write(&b, marks)
	os.WriteFile(filepath.Join(dir, "a.1.marks"), b.Bytes(), 0o600)
	read, err := Read(dir)
	if err != nil || len(read) != len(marks) {
		t.Fatalf("Read: %d marks, %v", len(read), err)
	}
	want := map[string]struct {
		median float64
		n      int
	}{
		spans[0].what: {2, 3}, // 1, 3, 2 ms
		spans[5].what: {3, 1}, // loop-end-in 12 → exchanged 15
		spans[8].what: {2, 1}, // committed 16 → start out 18
	}
	for _, r := range Table(read) {
		if w, ok := want[r.What]; ok && (r.Median != w.median || r.Count != w.n) {
			t.Errorf("%s: %.3f ms over %d, want %.3f over %d", r.What, r.Median, r.Count, w.median, w.n)
		}
	}
}
