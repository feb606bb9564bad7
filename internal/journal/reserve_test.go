package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Entries are written inside the room reserve keeps in the file: the
// file's size does not move with each entry (so a sync writes no inode),
// what follows the entries reads as zeros, and the next agent replays the
// entries alone and writes its own right after them.
func TestReserveInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.journal")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Commit(launch(1, "a"))
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Commit(end(1, 0), launch(2, "b"))
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	j.mu.Lock()
	size := j.size
	j.mu.Unlock()
	if after.Size() != before.Size() || after.Size() <= size {
		t.Errorf("file size %d after one commit, %d after the next, entries %d bytes: want one size, larger than the entries", before.Size(), after.Size(), size)
	}
	j.Close(false)
	b, _ := os.ReadFile(path)
	if int64(len(b)) < size || len(bytes.Trim(b[size:], "\x00")) != 0 {
		t.Fatalf("the file past its %d bytes of entries is not zeros: %q", size, b[min(int64(len(b)), size):])
	}

	j = open(t, path)
	j.Commit(end(2, 3))
	want := map[fluid.ID]string{1: `{"v":"a"}|{"status":0}`, 2: `{"v":"b"}|{"status":3}`}
	if diff := cmp.Diff(want, state(j)); diff != "" {
		t.Errorf("reopened (-want +got):\n%s", diff)
	}
	j.Close(false)
	b, _ = os.ReadFile(path)
	if entries := bytes.TrimRight(b, "\x00"); bytes.IndexByte(entries, 0) >= 0 {
		t.Errorf("zeros between the entries of a reopened journal:\n%q", entries)
	}
	j = open(t, path)
	if diff := cmp.Diff(want, state(j)); diff != "" {
		t.Errorf("reopened again (-want +got):\n%s", diff)
	}
}

// A crash of the machine can leave reserved room unwritten (zeros, after
// part of an entry or none) before an entry that did reach the disk: the
// entries on either side are kept.
func TestZerosBeforeEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.journal")
	var b []byte
	for _, e := range []Entry{launch(1, "a"), launch(2, "b"), end(1, 4)} {
		line, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, line...)
		switch e.ID {
		case 1:
			if e.Op == OpLaunch {
				b = append(b, make([]byte, 100)...)
			}
		case 2:
			// Torn: its first bytes, then zeros.
			b = append(b[:len(b)-len(line)], line[:10]...)
			b = append(b, make([]byte, 4000)...)
		}
	}
	b = append(b, make([]byte, 5000)...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	j := open(t, path)
	if diff := cmp.Diff(map[fluid.ID]string{1: `{"v":"a"}|{"status":4}`}, state(j)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// BenchmarkCommit is the time to make one end durable: written into room
// inside the file (in place) or past its end (appended).
func BenchmarkCommit(b *testing.B) {
	for _, tc := range []struct {
		name    string
		inPlace bool
	}{{"in-place", true}, {"appended", false}} {
		b.Run(tc.name, func(b *testing.B) {
			defer func(old bool) { inPlace = old }(inPlace)
			inPlace = tc.inPlace
			j, err := Open(filepath.Join(b.TempDir(), "b.journal"))
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close(true)
			for i := 0; b.Loop(); i++ {
				if err := j.Commit(end(fluid.ID(i), 0)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode is the cost of one launch entry's line, its checksum
// included (a record of the size the agent journals).
func BenchmarkEncode(b *testing.B) {
	e := Entry{Op: OpLaunch, ID: 1 << 40, Data: json.RawMessage(`{"id":1099511627776,"userid":0,"gid":0,"cgroup":["/sys/fs/cgroup/fluxq-0123456789ab/slot.12"],"expiration":"2026-12-02T03:00:00Z","kill_grace":5000000000}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(e); err != nil {
			b.Fatal(err)
		}
	}
}
