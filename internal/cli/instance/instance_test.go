package instance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/instance"
)

// runWith runs an app with the global flags and a command "cmd" (which
// has a --timeout of its own, as fluxq queue drain does) whose action is
// fn, and returns fn's error.
func runWith(t *testing.T, fn func(c *cli.Context) error, args ...string) error {
	t.Helper()
	app := &cli.App{
		Name:  "fluxq",
		Flags: instance.Flags(),
		Commands: []*cli.Command{{
			Name:   "cmd",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "timeout", Aliases: []string{"t"}}},
			Action: fn,
		}},
	}
	return app.Run(append([]string{"fluxq"}, args...))
}

// The state directory: --state-dir (made absolute), else $FLUXQ_STATE_DIR,
// else $XDG_STATE_HOME/fluxq, else ~/.local/state/fluxq.
func TestStateDir(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		flag, env, xdg string
		home           string
		want           string
		wantErr        string
	}{
		{name: "flag", flag: "/srv/fluxq", env: "/env", xdg: "/xdg", want: "/srv/fluxq"},
		{name: "relative flag", flag: "state", want: filepath.Join(cwd, "state")},
		{name: "environment", env: "/env/fluxq", xdg: "/xdg", want: "/env/fluxq"},
		{name: "xdg", xdg: "/xdg", home: "/home/u", want: "/xdg/fluxq"},
		{name: "home", home: "/home/u", want: "/home/u/.local/state/fluxq"},
		{name: "nothing", wantErr: "no state directory: set --state-dir or FLUXQ_STATE_DIR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FLUXQ_STATE_DIR", tc.env)
			t.Setenv("XDG_STATE_HOME", tc.xdg)
			t.Setenv("HOME", tc.home)
			var args []string
			if tc.flag != "" {
				args = append(args, "--state-dir", tc.flag)
			}
			var got string
			err := runWith(t, func(c *cli.Context) (err error) {
				got, err = instance.StateDir(c)
				return err
			}, append(args, "cmd")...)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one starting %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.want:
				t.Errorf("state directory %q, want %q", got, tc.want)
			}
		})
	}
}

// The global --timeout is an FSD, read from the app's flags even where
// the command has a --timeout of its own; a bad one is a usage error.
func TestTimeout(t *testing.T) {
	tests := []struct {
		args     []string
		want     time.Duration
		wantCode int
	}{
		{[]string{"cmd"}, 10 * time.Second, 0},
		{[]string{"--timeout", "2m", "cmd"}, 2 * time.Minute, 0},
		{[]string{"--timeout", "1.5", "cmd", "--timeout", "9h"}, 1500 * time.Millisecond, 0},
		{[]string{"--timeout", "soon", "cmd"}, 0, exitcode.Usage},
		{[]string{"--timeout", "-1s", "cmd"}, 0, exitcode.Usage},
	}
	for _, tc := range tests {
		var got time.Duration
		err := runWith(t, func(c *cli.Context) (err error) {
			got, err = instance.Timeout(c)
			return err
		}, tc.args...)
		if code := exitcode.Code(err); code != tc.wantCode || err == nil && got != tc.want {
			t.Errorf("%v: %v, exit %d (%v); want %v, exit %d", tc.args, got, code, err, tc.want, tc.wantCode)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "--timeout: ") {
			t.Errorf("%v: error %q, want it to name --timeout", tc.args, err)
		}
	}
}

// Open reaches a free instance; a bad --timeout is refused before it
// tries.
func TestOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	open := func(args ...string) error {
		return runWith(t, func(c *cli.Context) error {
			cl, err := instance.Open(c)
			if err != nil {
				return err
			}
			return cl.Close()
		}, append([]string{"--state-dir", dir}, args...)...)
	}
	if err := open("--timeout", "never", "cmd"); exitcode.Code(err) != exitcode.Usage {
		t.Errorf("a bad --timeout: %v, want a usage error", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused open made the state directory (%v)", err)
	}
	if err := open("cmd"); err != nil {
		t.Fatalf("a free instance: %v", err)
	}
}
