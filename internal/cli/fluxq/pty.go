package fluxq

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/creack/pty"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

const (
	flagPty = "pty"
	// ptyOption is the shell option that asks the exec agent to make the
	// terminal the first task's controlling terminal (runner.PtyOption),
	// as flux run --pty sets flux-shell's pty.interactive.
	ptyOption = "pty.interactive"
	// ptyDrain bounds how long the output still in the terminal is read
	// after the job has ended: a process the job left behind may hold it.
	ptyDrain = 2 * time.Second
)

// ptySession is the terminal of fluxq run --pty and fluxq alloc. fluxq
// makes a pseudo-terminal, names its slave as the job's stdin, stdout and
// stderr (the exec agent opens it with the job user's rights, as it opens
// any --input or --output file, and makes it the first task's controlling
// terminal), and copies between its own terminal, put in raw mode, and
// the master: keys, ^C and ^Z included, reach the job's terminal, whose
// line discipline turns them into signals for the job, as at a login.
//
// Why fluxq makes the terminal rather than the exec agent: the terminal
// is then the submitter's (a guest's, for a guest's job), nothing in
// fluxsched or the agent copies a byte, and the job's output never passes
// through its folder.
type ptySession struct {
	master, slave *os.File
	in            *os.File // fluxq's stdin, when it is a terminal put in raw mode
	saved         *unix.Termios
	out           io.Writer
	copied        chan struct{}
	once          sync.Once
	winch         chan os.Signal
}

// ptyFlag is run's and alloc's --pty.
func ptyFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagPty, Usage: "run the job's first task on a terminal: its stdin, stdout and stderr, keys and signals here", DisableDefaultText: true}
}

// startPty makes the terminal and points the job's input and output at
// it; the job's --input, --output and --error cannot be given with it.
func (e *env) startPty(c *cli.Context, st *submitState) (*ptySession, error) {
	for _, f := range []string{flagInput, flagOutput, flagError} {
		if c.IsSet(f) {
			return nil, exitcode.UsageErrorf("--%s: the terminal of --pty is the job's input and output", f)
		}
	}
	master, slave, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("--pty: making a terminal: %w", err)
	}
	s := &ptySession{master: master, slave: slave, out: stdout(c), copied: make(chan struct{})}
	for _, f := range []string{flagInput, flagOutput, flagError} {
		if err := c.Set(f, slave.Name()); err != nil {
			s.close()
			return nil, err
		}
	}
	st.setopts = append(st.setopts, ptyOption)
	return s, nil
}

// attach puts fluxq's terminal in raw mode, when stdin is one, and starts
// the copies: stdin to the job's terminal, its output here, and the
// window's size whenever it changes.
func (s *ptySession) attach(stdin io.Reader) {
	if f, ok := stdin.(*os.File); ok {
		if t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			saved := *t
			raw := *t
			// cfmakeraw: keys pass as they are, the job's terminal
			// interprets them.
			raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
			raw.Oflag &^= unix.OPOST
			raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
			raw.Cflag &^= unix.CSIZE | unix.PARENB
			raw.Cflag |= unix.CS8
			raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
			if unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, &raw) == nil {
				s.in, s.saved = f, &saved
			}
			pty.InheritSize(f, s.master)
			s.winch = make(chan os.Signal, 1)
			signal.Notify(s.winch, unix.SIGWINCH)
			go func() {
				for range s.winch {
					pty.InheritSize(f, s.master)
				}
			}()
		}
	}
	if stdin != nil {
		go io.Copy(s.master, stdin)
	}
	go func() {
		defer close(s.copied)
		io.Copy(s.out, s.master)
	}()
}

// close gives fluxq's terminal back as it was and lets go of the job's:
// what the job printed last is read until the terminal has no writer.
func (s *ptySession) close() {
	s.once.Do(func() {
		s.slave.Close()
		if s.winch != nil {
			signal.Stop(s.winch)
			close(s.winch)
		}
		select {
		case <-s.copied:
		case <-time.After(ptyDrain):
		}
		s.master.Close()
		if s.saved != nil {
			unix.IoctlSetTermios(int(s.in.Fd()), unix.TCSETS, s.saved)
		}
	})
}

// ptyStdin is what is typed into the job's terminal: fluxq's stdin, unless
// it is /dev/null or a terminal fluxq does not own (see runStdin).
func (e *env) ptyStdin() io.Reader {
	return e.runStdin()
}

// crlf writes what fluxq itself says (its notes on stderr) while its
// terminal is in raw mode, where a newline no longer returns the carriage.
type crlf struct{ w io.Writer }

func (c crlf) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// raw reports whether fluxq's terminal is in raw mode for the session.
func (s *ptySession) raw() bool { return s.saved != nil }
