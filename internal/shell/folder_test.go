package shell

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A guest owns its job folder: a FIFO or a symlink where a status file
// belongs must not block or mislead the exec service reading it as root.
func TestReadFolderFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, StatusFile), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, _, err := ReadStatus(dir); err == nil {
		t.Error("ReadStatus of a FIFO: no error")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, PIDFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPID(dir); err == nil {
		t.Error("ReadPID through a symlink: no error")
	}
	if err := os.WriteFile(filepath.Join(dir, ExceptionFile), []byte(`{"type":"exec","severity":0,"note":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if e, err := ReadException(dir); err != nil || e == nil {
		t.Errorf("ReadException of a regular file = %v, %v", e, err)
	}
}
