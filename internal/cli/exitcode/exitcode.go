// Package exitcode is the one place where an error becomes an exit status and
// a one-line message on stderr, so every command in every binary reports
// failure the same way (docs/cli.md: "Exit codes").
package exitcode

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/help"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/version"
)

// The exit statuses docs/cli.md promises to scripts.
const (
	OK          = 0
	Failed      = 1  // the request failed: rejected job, unknown id, timeout
	Usage       = 2  // bad flag or argument
	Unavailable = 69 // store busy or instance unreachable (sysexits EX_UNAVAILABLE)
	// IOError: the state directory's filesystem is full (or over quota),
	// so nothing could be written; trying again once space is freed may
	// work (sysexits EX_IOERR).
	IOError = 74
)

// Error carries an explicit exit status with its message.
type Error struct {
	Code int
	Err  error
	job  bool // Code is a job's: never a usage error's, whatever its value
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// WithCode wraps err so that it exits with code.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// JobCode exits with a job's exit code, saying why on stderr (err): the
// job's own 2 is no usage error, and gets no usage hint.
func JobCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err, job: true}
}

// UsageErrorf reports a bad flag or argument (exit 2).
func UsageErrorf(format string, a ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, a...)}
}

// Code maps an error to its exit status, the one place that does: an
// explicit code wins, then the error's kind (api.Code, the same on the
// socket and the direct path), then an exit status a job reported
// (cli.ExitCoder), else Failed.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	// A busy store, or a fluxsched that does not answer, within
	// --timeout (docs/cli.md).
	if errors.Is(err, api.ErrUnavailable) {
		return Unavailable
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return IOError
	}
	// Reservation requests exit with their PMIx status (docs/cli.md).
	var re *reservation.Error
	if errors.As(err, &re) {
		return int(re.Status)
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	// Every other kind (unknown job, permission, inactive…) is a failed
	// request.
	return Failed
}

// Run runs app with args and returns the exit status, printing a failure as
// one line "bin: command: message" on the app's ErrWriter. It installs the
// house defaults: -V/--version (so -v stays free for commands' verbose
// flags), usage errors as exit 2 without a help dump, and no os.Exit inside
// urfave/cli.
func Run(app *cli.App, args []string) int {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version", DisableDefaultText: true}
	if app.Version == "" {
		app.Version = version.String()
	}
	if app.ErrWriter == nil {
		app.ErrWriter = os.Stderr
	}
	app.ExitErrHandler = func(*cli.Context, error) {}
	app.OnUsageError = onUsageError
	setUsageHandler(app.Commands)
	// After the handlers above, which it wraps: help topics, examples and
	// "Did you mean" for every binary.
	help.Install(app)

	err := app.Run(args)
	if err == nil {
		return OK
	}
	code := Code(err)
	// A job's own exit status is returned silently, as `flux run` does:
	// no message, and no usage hint even when the job's code is 2.
	var e *Error
	if errors.As(err, &e) && e.Err == errSilent {
		return code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(app.ErrWriter, "%s: %s\n", app.Name, oneLine(msg))
	}
	if code == Usage && !(errors.As(err, &e) && e.job) {
		fmt.Fprintf(app.ErrWriter, "Try '%s --help' for more information.\n", strings.Join(commandPath(app, args), " "))
	}
	return code
}

// errSilent marks an exit status that needs no message.
var errSilent = errors.New("")

// Silent exits with code and prints nothing: for `fluxq run`, `attach` and
// `wait`, whose exit status is the job's.
func Silent(code int) error { return &Error{Code: code, Err: errSilent} }

func onUsageError(c *cli.Context, err error, _ bool) error {
	name := ""
	if path := CommandPath(c); path != "" {
		name = path + ": "
	}
	return &Error{Code: Usage, Err: fmt.Errorf("%s%w", name, err)}
}

// CommandPath is the command c runs, with the commands above it and
// without the binary, which Run prints already: "queue stop" for `fluxq
// queue stop`, so that every message names the command as it was typed.
// It is "" for the binary itself.
func CommandPath(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		cmd := ctx.Command
		// The root command carries the app's name (no command of ours
		// is named as its binary).
		if cmd == nil || cmd.Name == "" || (ctx.App != nil && cmd.Name == ctx.App.Name) {
			continue
		}
		names = append(names, cmd.Name)
	}
	slices.Reverse(names)
	return strings.Join(names, " ")
}

func setUsageHandler(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
		setUsageHandler(c.Subcommands)
	}
}

// commandPath is the binary plus the subcommands named in args, for the hint.
func commandPath(app *cli.App, args []string) []string {
	path := []string{app.Name}
	cmds := app.Commands
	for _, a := range args[1:] {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		path = append(path, next.Name)
		cmds = next.Subcommands
	}
	return path
}

// oneLine keeps a message to one line, as docs/cli.md requires.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	// A message may quote a user's text (a job's note, a name).
	return printable.String(s)
}

// Action wraps a command's body so that its errors print as docs/cli.md shows
// them, "bin: command: message" ("fluxq: queue stop: message" for a
// subcommand), keeping their exit codes.
func Action(fn cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error { return Prefix(CommandPath(c), fn(c)) }
}

// Prefix puts a command's name before err's message.
func Prefix(name string, err error) error {
	if err == nil {
		return nil
	}
	return prefixed{name: name, err: err}
}

type prefixed struct {
	name string
	err  error
}

func (p prefixed) Error() string {
	if p.err.Error() == "" {
		return "" // a silent exit status stays silent
	}
	return p.name + ": " + p.err.Error()
}

func (p prefixed) Unwrap() error { return p.err }

// IsJob reports whether err is a job's own exit (JobCode): its result,
// not a failure of the command.
func IsJob(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.job
}
