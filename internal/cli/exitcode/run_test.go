package exitcode

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
)

// Run prints a failure as one line "bin: command: message" and exits with
// the status of the error's kind; a silent status prints nothing.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		args []string
		out  string
		code int
	}{
		{"ok", nil, []string{"app", "cmd"}, "", OK},
		{"unknown job", api.Wire(fmt.Errorf("f1: %w", api.ErrUnknownJob)), []string{"app", "cmd"}, "app: cmd: f1: unknown job id\n", Failed},
		{"unavailable", fmt.Errorf("%w: store is busy", api.ErrUnavailable), []string{"app", "cmd"}, "app: cmd: instance unavailable: store is busy\n", Unavailable},
		{"two lines", fmt.Errorf("first\nsecond"), []string{"app", "cmd"}, "app: cmd: first\n", Failed},
		{"silent", Silent(3), []string{"app", "cmd"}, "", 3},
		{"usage", UsageErrorf("bad flag"), []string{"app", "cmd"}, "app: cmd: bad flag\nTry 'app cmd --help' for more information.\n", Usage},
	} {
		var out bytes.Buffer
		err := tc.err
		app := &cli.App{Name: "app", Writer: &out, ErrWriter: &out, Commands: []*cli.Command{{
			Name:   "cmd",
			Action: Action(func(*cli.Context) error { return err }),
		}}}
		if code := Run(app, tc.args); code != tc.code || out.String() != tc.out {
			t.Errorf("%s: exit %d, printed %q; want %d, %q", tc.name, code, out.String(), tc.code, tc.out)
		}
	}
}
