package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReplay: whatever bytes a journal holds (damaged by a disk, or
// written by someone else), Open replays them without failing or
// panicking, and an entry Encode wrote reads back intact after them.
func FuzzReplay(f *testing.F) {
	good, _ := Encode(launch(1, "a"))
	f.Add(good)
	f.Add(append(bytes.Clone(good[:len(good)/2]), '\n'))
	f.Add([]byte(`{"op":"end","id":2,"data":{"status":0},"crc":"00000000"}` + "\n"))
	f.Add([]byte("\x00\x00{\"op\":\"ack\",\"id\":1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.journal")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Commit(launch(77, "z")); err != nil {
			t.Fatal(err)
		}
		j.Close(false)
		j, err = Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close(false)
		if got := state(j)[77]; got != `{"v":"z"}|` {
			t.Errorf("the entry after %q reads %q", b, got)
		}
	})
}
