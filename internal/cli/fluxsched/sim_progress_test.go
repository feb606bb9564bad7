package fluxsched

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// simTrace is an SWF trace of n one-core jobs of 10 s, one a second.
func simTrace(t *testing.T, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d %d -1 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "t.swf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runSim runs fluxsched sim with stderr on errw; stdout is returned.
func runSim(t *testing.T, errw io.Writer, trace string) string {
	t.Helper()
	var out bytes.Buffer
	app := &cli.App{Name: "fluxsched", Commands: []*cli.Command{simCommand()}, Writer: &out, ErrWriter: errw}
	if code := exitcode.Run(app, []string{"fluxsched", "sim", "--trace", trace, "--nodes", "1", "--cores-per-node", "2", "--json"}); code != 0 {
		t.Fatalf("sim exited %d", code)
	}
	return out.String()
}

// fluxsched sim with stderr on a real pseudo-terminal draws its progress
// line there and erases it; with stderr on a file it writes nothing, and
// stdout is the same either way.
func TestSimProgressOnATerminal(t *testing.T) {
	trace := simTrace(t, 300)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(ptmx) // until the terminal side is closed
		got <- string(b)
	}()
	onTTY := runSim(t, tty, trace)
	tty.Close()
	var drawn string
	select {
	case drawn = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing came through the pseudo-terminal")
	}
	if !regexp.MustCompile(`\rsimulating: [0-9,]+ of 300 jobs, t=[0-9.]+[smhd]\x1b\[K`).MatchString(drawn) || !strings.HasSuffix(drawn, "\x1b[K\r\x1b[K") {
		t.Errorf("the terminal received %q; want a progress line, then erased", drawn)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	toFile := runSim(t, f, trace)
	if b, _ := os.ReadFile(f.Name()); len(b) != 0 {
		t.Errorf("stderr to a file got %q; want nothing", b)
	}
	if onTTY != toFile || !strings.HasPrefix(onTTY, `{"jobs":300,`) {
		t.Errorf("stdout on a terminal %q, to a file %q: want the same summary", onTTY, toFile)
	}
}
