package fluxq_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// ptyWait bounds each wait= step of ptyrun: long enough for a loaded
// machine, short enough that a test of a missing message fails soon.
const ptyWait = 30 * time.Second

// cmdPtyrun runs a command on a new terminal, as a person at it would:
// the steps type keys and wait for what it prints, then the command's
// exit status is checked. Everything it printed (stdout and stderr both
// go to the terminal) becomes the script's stdout.
//
//	ptyrun 130 wait=started key=^C wait='one more' key=^Z -- fluxq attach ID
//
// Steps: wait=TEXT waits until TEXT has been printed (after what the
// previous wait matched); key=^C, key=^Z, key=^D type that control key;
// type=TEXT types TEXT and a newline; sleep=DURATION waits.
func cmdPtyrun(ts *testscript.TestScript, neg bool, args []string) {
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if neg || len(args) < 3 || sep < 1 || sep == len(args)-1 {
		ts.Fatalf("usage: ptyrun CODE [STEP...] -- command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("ptyrun: bad code %q", args[0])
	}
	steps, argv := args[1:sep], args[sep+1:]
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		// The commands of TestMain are on the script's PATH.
		for _, dir := range strings.Split(ts.Getenv("PATH"), ":") {
			if fi, err := os.Stat(dir + "/" + argv[0]); err == nil && !fi.IsDir() {
				bin, err = dir+"/"+argv[0], nil
				break
			}
		}
		if bin == "" {
			ts.Fatalf("ptyrun: %s not found", argv[0])
		}
	}
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	var env []string
	for _, k := range []string{"PATH", "FLUXQ_STATE_DIR", "NO_COLOR", "GORACE", "HOME", "TMPDIR"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	cmd.Env = env
	tty, err := pty.Start(cmd)
	ts.Check(err)
	defer tty.Close()
	// No echo of what is typed (^C, ^Z, the lines): the transcript is
	// what the command printed. NOFLSH: a ^C or ^Z would otherwise drop
	// what is printed but not yet read here.
	if t, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS); err == nil {
		t.Lflag &^= unix.ECHO | unix.ECHOCTL
		t.Lflag |= unix.NOFLSH
		unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, t)
	}

	var mu sync.Mutex
	var out bytes.Buffer
	more := make(chan struct{}, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			select {
			case more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	from := 0 // what wait= has matched so far
	fail := func(format string, a ...any) {
		cmd.Process.Kill()
		cmd.Wait()
		mu.Lock()
		ts.Logf("terminal:\n%s", out.String())
		mu.Unlock()
		ts.Fatalf(format, a...)
	}
	for _, step := range steps {
		name, arg, _ := strings.Cut(step, "=")
		switch name {
		case "wait":
			deadline := time.After(ptyWait)
			for {
				mu.Lock()
				i := strings.Index(out.String()[from:], arg)
				mu.Unlock()
				if i >= 0 {
					from += i + len(arg)
					break
				}
				select {
				case <-more:
				case <-copied:
					fail("ptyrun: %q never printed: the command ended", arg)
				case <-deadline:
					fail("ptyrun: %q not printed within %v", arg, ptyWait)
				}
			}
		case "key":
			keys := map[string]string{"^C": "\x03", "^Z": "\x1a", "^D": "\x04"}
			k, ok := keys[arg]
			if !ok {
				ts.Fatalf("ptyrun: unknown key %q", arg)
			}
			_, err := io.WriteString(tty, k)
			ts.Check(err)
		case "type":
			_, err := io.WriteString(tty, arg+"\n")
			ts.Check(err)
		case "sleep":
			d, err := time.ParseDuration(arg)
			ts.Check(err)
			time.Sleep(d)
		default:
			ts.Fatalf("ptyrun: unknown step %q", step)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(ptyWait):
		fail("ptyrun: %s did not end within %v", argv[0], ptyWait)
	}
	// The rest of the output: the terminal's reader ends once the
	// command and its children have closed it.
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	got := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		got = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = 128 + int(ws.Signal())
		}
	} else if werr != nil {
		ts.Fatalf("ptyrun: %v", werr)
	}
	mu.Lock()
	text := strings.ReplaceAll(out.String(), "\r\n", "\n")
	mu.Unlock()
	ts.Stdout().Write([]byte(text))
	if got != want {
		ts.Fatalf("%s exited %d, want %d\nterminal:\n%s", argv[0], got, want, text)
	}
}
