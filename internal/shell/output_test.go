package shell

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A guest's folder may hold anything in place of its output: only a
// regular file is read, never through a symlink, never waiting on a FIFO.
func TestOpenOutput(t *testing.T) {
	dir := t.TempDir()
	me := uint32(os.Geteuid())
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("out\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "plain"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := OpenOutput(dir, "plain", me)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "out\n" {
		t.Errorf("plain read %q", b)
	}
	if _, err := OpenOutput(dir, "missing", me); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want not exist", err)
	}
	for _, tc := range []struct{ name, want string }{
		{"link", "link is a symbolic link: not followed"},
		{"fifo", "fifo is not a regular file (a named pipe): not read"},
		{"sub", "sub is not a regular file (a directory): not read"},
	} {
		f, err := OpenOutput(dir, tc.name, me)
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", tc.name)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, err, tc.want)
		}
	}
}

// A reader other than the job's user keeps only what the job's user owns.
func TestCheckOutputOwner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stdout")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	owner := uint32(os.Geteuid())
	other := owner + 1
	if err := checkOutput(f, "stdout", owner, other); err != nil {
		t.Errorf("the job's user's file, another reader: %v", err)
	}
	if err := checkOutput(f, "stdout", other, other); err != nil {
		t.Errorf("the reader's own job: %v", err)
	}
	err = checkOutput(f, "stdout", other, owner)
	if err == nil || !strings.Contains(err.Error(), "not to the job's user") {
		t.Errorf("someone else's file: %v", err)
	}
}
