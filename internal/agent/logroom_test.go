package agent

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The agent's log keeps room allocated: on a full filesystem, where a
// plain append fails, its lines (the journal's "cannot write") still go
// in.
func TestLogWriterOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	for _, tc := range []struct {
		name string
		wrap bool
		ok   bool
	}{
		{"plain file", false, false},
		{"LogWriter", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.OpenFile(filepath.Join(dir, tc.name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var w io.Writer = f
			if tc.wrap {
				w = LogWriter(f)
			}
			fill := filepath.Join(dir, "fill")
			ff, _ := os.Create(fill)
			chunk := make([]byte, 4096)
			for {
				if _, err := ff.Write(chunk); err != nil {
					if !errors.Is(err, unix.ENOSPC) {
						t.Fatal(err)
					}
					break
				}
			}
			ff.Close()
			defer os.Remove(fill)
			line := "level=ERROR msg=\"cannot write the journal\"\n"
			_, err = w.Write([]byte(line))
			if (err == nil) != tc.ok {
				t.Fatalf("write on a full disk: %v, want ok=%v", err, tc.ok)
			}
			if tc.ok {
				b, _ := os.ReadFile(f.Name())
				if !strings.Contains(string(b), line) {
					t.Errorf("log holds %q", b)
				}
			}
		})
	}
}
