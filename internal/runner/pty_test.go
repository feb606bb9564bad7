package runner

import (
	"os"
	"testing"

	"github.com/creack/pty"
)

func TestPtyTask(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatalf("pty.Open: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	file, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	tty, notTTY := int(slave.Fd()), int(file.Fd())
	for _, tc := range []struct {
		name string
		opts map[string]any
		fd   int
		want bool
	}{
		{"no option", nil, tty, false},
		{"pty.interactive on a terminal", map[string]any{"pty": map[string]any{"interactive": 1}}, tty, true},
		{"pty=1 on a terminal", map[string]any{"pty": 1}, tty, true},
		{"pty=false", map[string]any{"pty": false}, tty, false},
		{"pty on a file", map[string]any{"pty": 1}, notTTY, false},
		{"other options", map[string]any{"output": map[string]any{"limit": "1M"}}, tty, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ptyTask(tc.opts, tc.fd); got != tc.want {
				t.Errorf("ptyTask(%v) = %v, want %v", tc.opts, got, tc.want)
			}
		})
	}
}
