package help_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/help"
)

// Typos get the closest names, exit 2, and one line (plus exitcode's hint).
func TestDidYouMean(t *testing.T) {
	tests := []struct {
		args []string
		want string // stderr's first line
	}{
		{[]string{"fluxq", "sumbit"}, "fluxq: 'sumbit' is not a fluxq command. Did you mean 'submit'?"},
		{[]string{"fluxq", "SUBMIT", "true"}, "fluxq: 'SUBMIT' is not a fluxq command. Did you mean 'submit'?"},
		{[]string{"fluxq", "frobnicate"}, "fluxq: 'frobnicate' is not a fluxq command."},
		{[]string{"fluxq", "queue", "lst"}, "fluxq: 'lst' is not a fluxq queue command. Did you mean 'list'?"},
		{[]string{"fluxq", "queue", "stp", "batch"}, "fluxq: 'stp' is not a fluxq queue command. Did you mean 'stop'?"},
		{[]string{"fluxres", "reservation", "creat"}, "fluxres: 'creat' is not a fluxres reservation command. Did you mean 'create'?"},
		{[]string{"fluxsched", "runn"}, "fluxsched: 'runn' is not a fluxsched command. Did you mean 'run'?"},
		{[]string{"fluxsched", "confg", "check", "x.toml"}, "fluxsched: 'confg' is not a fluxsched command. Did you mean 'config'?"},
		{[]string{"fluxq", "jobs", "--filer", "run"}, "fluxq: jobs: unrecognized option '--filer'. Did you mean --filter?"},
		{[]string{"fluxq", "jobs", "--frobnicate"}, "fluxq: jobs: unrecognized option '--frobnicate'"},
		{[]string{"fluxq", "queue", "list", "--jsno"}, "fluxq: queue list: unrecognized option '--jsno'. Did you mean --json?"},
		{[]string{"fluxq", "--stat-dir", "x", "jobs"}, "fluxq: unrecognized option '--stat-dir'. Did you mean --state-dir?"},
		{[]string{"fluxres", "drain", "--forc", "0"}, "fluxres: drain: unrecognized option '--forc'. Did you mean --force?"},
		{[]string{"fluxsched", "sim", "--trce", "x.swf"}, "fluxsched: sim: unrecognized option '--trce'. Did you mean --trace?"},
		{[]string{"fluxq", "help", "nosuch"}, "fluxq: help: no help topic or command 'nosuch'"},
		{[]string{"fluxq", "help", "jobsepc"}, "fluxq: help: no help topic or command 'jobsepc'. Did you mean 'jobspec'?"},
		{[]string{"fluxq", "help", "sumbit"}, "fluxq: help: no help topic or command 'sumbit'. Did you mean 'submit'?"},
		{[]string{"fluxq", "help", "queue", "lst"}, "fluxq: help: no command 'queue lst'. Did you mean 'queue list'?"},
		{[]string{"fluxq", "queue", "help", "lst"}, "fluxq: help: no command 'lst'. Did you mean 'list'?"},
		{[]string{"fluxres", "help", "jobspec"}, "fluxres: help: no help topic or command 'jobspec'"},
		{[]string{"fluxres", "help", "constrains"}, "fluxres: help: no help topic or command 'constrains'. Did you mean 'constraints'?"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != exitcode.Usage {
				t.Errorf("exit %d, want %d", code, exitcode.Usage)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if first, _, _ := strings.Cut(stderr, "\n"); first != tt.want {
				t.Errorf("stderr:\n%s\nwant first line:\n%s", stderr, tt.want)
			}
		})
	}
}

// Every way of asking for one page prints the same page.
func TestHelpPathsAgree(t *testing.T) {
	same := [][][]string{
		{{"fluxq", "--help"}, {"fluxq", "help"}, {"fluxq", "h"}, {"fluxq"}},
		{{"fluxq", "submit", "--help"}, {"fluxq", "help", "submit"}, {"fluxq", "submit", "-h"}},
		{{"fluxq", "queue", "list", "--help"}, {"fluxq", "help", "queue", "list"}, {"fluxq", "queue", "help", "list"}},
		{{"fluxq", "queue", "--help"}, {"fluxq", "help", "queue"}, {"fluxq", "queue", "help"}, {"fluxq", "queue"}},
		{{"fluxq", "help", "jobspec"}, {"fluxq", "h", "jobspec"}, {"fluxq", "help", "JobSpec"}},
		{{"fluxres", "reservation", "create", "--help"}, {"fluxres", "help", "reservation", "create"}},
		{{"fluxsched", "config", "check", "--help"}, {"fluxsched", "help", "config", "check"}},
	}
	for _, group := range same {
		_, want, _ := run(t, group[0]...)
		for _, args := range group[1:] {
			code, got, stderr := run(t, args...)
			if code != 0 || stderr != "" {
				t.Errorf("%s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
			}
			if got != want {
				t.Errorf("%s printed\n%s\nwhich is not what %s prints:\n%s", strings.Join(args, " "), got,
					strings.Join(group[0], " "), want)
			}
		}
	}
}

// Topics and commands share `help WORD`; a command wins.
func TestCommandWinsOverTopic(t *testing.T) {
	app := &cli.App{Name: "fluxq", Commands: []*cli.Command{{Name: "jobspec", Usage: "a command named like a topic"}}}
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	if code := exitcode.Run(app, []string{"fluxq", "help", "jobspec"}); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), "fluxq jobspec - a command named like a topic") || strings.Contains(out.String(), "SHAPE:") {
		t.Errorf("help jobspec printed the topic, not the command:\n%s", out.String())
	}
}

// Installing twice adds one help command and suggests once.
func TestInstallTwice(t *testing.T) {
	app := apps["fluxq"]()
	app.ExitErrHandler = func(*cli.Context, error) {}
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &bytes.Buffer{}
	help.Install(app)
	help.Install(app)
	n := 0
	for _, c := range app.Commands {
		if c.Name == "help" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d help commands, want 1", n)
	}
	err := app.Run([]string{"fluxq", "jobs", "--filer", "run"})
	if err == nil || strings.Count(err.Error(), "Did you mean") != 1 {
		t.Errorf("error %v, want one suggestion", err)
	}
}

// lintExempt are commands whose text lives outside this task's files; they
// are reported, not failed, until their owners add what the lint asks.
var lintExempt = map[string]string{}

// flagExempt are global flags defined outside this task's files.
var flagExempt = map[string]string{}

var exampleLine = regexp.MustCompile(`^\$ `)

// Every command explains itself: a one-line Usage, a description, two to
// four examples, each a comment and at least one command line of its own
// binary, and a default for every flag that takes a value.
func TestHelpLint(t *testing.T) {
	for _, bin := range []string{"fluxq", "fluxres", "fluxsched"} {
		app := apps[bin]()
		lint(t, bin, app.Usage, app.Description, app.Flags)
		var walk func(path string, cmds []*cli.Command)
		walk = func(path string, cmds []*cli.Command) {
			for _, c := range cmds {
				if c.Hidden || c.Name == "help" {
					continue
				}
				p := path + " " + c.Name
				if owner, ok := lintExempt[p]; ok {
					t.Logf("%s: not linted, its text lives in %s", p, owner)
				} else {
					lint(t, p, c.Usage, c.Description, c.Flags)
				}
				walk(p, c.Subcommands)
			}
		}
		walk(bin, app.Commands)
	}
}

func lint(t *testing.T, path, usage, description string, flags []cli.Flag) {
	t.Helper()
	bin, _, _ := strings.Cut(path, " ")
	if usage == "" || strings.Contains(usage, "\n") {
		t.Errorf("%s: Usage %q is not one line", path, usage)
	}
	text, examples := help.Split(description)
	if len(text) < 40 {
		t.Errorf("%s: the description says too little: %q", path, text)
	}
	for i, l := range strings.Split(text, "\n") {
		if len(l) > 77 {
			t.Errorf("%s: description line %d is %d characters, more than 77 (80 with the indent)", path, i+1, len(l))
		}
	}
	groups := strings.Split(examples, "\n\n")
	if examples == "" || len(groups) < 2 || len(groups) > 4 {
		t.Errorf("%s: %d examples, want 2 to 4", path, len(groups))
	}
	mentions := false
	for _, g := range groups {
		lines := strings.Split(g, "\n")
		if !strings.HasPrefix(lines[0], "# ") {
			t.Errorf("%s: example %q does not start with a # comment", path, g)
		}
		cmds := 0
		for _, l := range lines[1:] {
			if !exampleLine.MatchString(l) {
				continue
			}
			cmds++
			if !regexp.MustCompile(`(^|[ (])` + bin + `( |$)`).MatchString(l[2:]) {
				t.Errorf("%s: example %q does not run %s", path, l, bin)
			}
			if strings.Contains(l+" ", path+" ") {
				mentions = true
			}
		}
		if cmds == 0 {
			t.Errorf("%s: example %q has no $ command line", path, g)
		}
	}
	if examples != "" && !mentions {
		t.Errorf("%s: no example runs %s", path, path)
	}
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		if _, ok := f.(*cli.BoolFlag); ok {
			continue // a switch is off unless given
		}
		name := f.Names()[0]
		if _, ok := flagExempt[name]; ok {
			continue
		}
		s := f.String()
		if !strings.Contains(s, "(default: ") && !strings.Contains(s, "(required)") {
			t.Errorf("%s: flag --%s shows no default: %s", path, name, s)
		}
	}
}
