package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/fluxq"
	"github.com/fluxq/fluxq/internal/cli/fluxres"
	"github.com/fluxq/fluxq/internal/cli/fluxsched"
	"github.com/fluxq/fluxq/internal/cli/help"
	"github.com/fluxq/fluxq/internal/config"
)

const tomlSource = "../../../docs/fluxq.toml.5.md"

// generated writes every page into a temporary directory once per test.
func generated(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	if err := generate(dir, tomlSource, "2025-01-02", "1.2.3 (commit abc1234)"); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, name := range Pages {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = string(b)
	}
	return dir, pages
}

// The pages are "built without warnings": groff in its strictest mode, and
// man-db as a user's `man` runs it, print nothing on stderr.
func TestPagesFormatWithoutWarnings(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed: cannot check the pages for warnings (apt-get install groff man-db)")
	}
	dir, _ := generated(t)
	for _, name := range Pages {
		page := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) {
			// -k: preconv, -t: tbl, -ww: every warning, -z: no output;
			// utf8 for a UTF-8 terminal, ascii for man in the C locale.
			checkQuiet(t, exec.Command(groff, "-k", "-t", "-man", "-ww", "-z", "-Tutf8", page))
			checkQuiet(t, exec.Command(groff, "-t", "-man", "-ww", "-z", "-Tascii", page))
			if man, err := exec.LookPath("man"); err == nil {
				cmd := exec.Command(man, "--warnings=all", "-l", page)
				cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat", "LANG=C.UTF-8", "MAN_KEEP_FORMATTING=")
				out := checkQuiet(t, cmd)
				if !regexp.MustCompile(`(?m)^NAME\n +flux`).MatchString(out) {
					t.Errorf("man -l %s printed no NAME section:\n%s", name, out)
				}
			}
		})
	}
}

// checkQuiet runs cmd and fails on an error or anything on stderr.
func checkQuiet(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("%s warned:\n%s", strings.Join(cmd.Args, " "), stderr.String())
	}
	return stdout.String()
}

// text undoes the escapes the pages use, so tests can look for words.
func text(roff string) string {
	r := strings.NewReplacer(`\-`, "-", `\fB`, "", `\fI`, "", `\fR`, "", `\fP`, "", `\&`, "", `\e`, `\`, `\(dq`, `"`)
	return r.Replace(roff)
}

// Every visible command and flag of each binary is on its page, hidden ones
// are not, and the page has the sections the issue asks for.
func TestSectionOnePagesCoverCommands(t *testing.T) {
	_, pages := generated(t)
	apps := map[string]*cli.App{"fluxq.1": fluxq.New(), "fluxsched.1": fluxsched.New(), "fluxres.1": fluxres.New()}
	for name, app := range apps {
		page := text(pages[name])
		for _, sec := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "EXAMPLES", "ENVIRONMENT", "FILES", "EXIT STATUS", "SEE ALSO"} {
			if !regexp.MustCompile(`(?m)^\.SH "?` + sec + `"?$`).MatchString(page) {
				t.Errorf("%s: no %s section", name, sec)
			}
		}
		for _, want := range []string{"FLUXQ_STATE_DIR", "NO_COLOR", "FLUXQ_F58_FORCE_ASCII", ".TP\n0\n", ".TP\n1\n", ".TP\n2\n", ".TP\n69\n", "fluxq.toml(5)", "1.2.3 (commit abc1234)", "2025-01-02"} {
			if !strings.Contains(strings.ReplaceAll(page, `\fB`, ""), want) && !strings.Contains(page, want) {
				t.Errorf("%s: %q missing", name, want)
			}
		}
		for _, f := range app.VisibleFlags() {
			if !strings.Contains(page, "--"+f.Names()[0]) {
				t.Errorf("%s: global flag --%s missing", name, f.Names()[0])
			}
		}
		n := 0
		var walk func(prefix string, cmds []*cli.Command)
		walk = func(prefix string, cmds []*cli.Command) {
			for _, c := range cmds {
				path := prefix + " " + c.Name
				heading := regexp.MustCompile(`(?m)^\.SS "` + regexp.QuoteMeta(path) + `( \(alias: [^)]*\))?"$`)
				if c.Hidden {
					if heading.MatchString(page) {
						t.Errorf("%s: hidden command %q has a section", name, path)
					}
					continue
				}
				n++
				if !heading.MatchString(page) {
					t.Errorf("%s: no section for %q", name, path)
					continue
				}
				sec := section(page, path)
				for _, f := range c.VisibleFlags() {
					for _, fn := range f.Names() {
						dash := "--"
						if len(fn) == 1 {
							dash = "-"
						}
						if !strings.Contains(sec, dash+fn) {
							t.Errorf("%s: %s: flag %s%s missing", name, path, dash, fn)
						}
					}
				}
				walk(path, c.Subcommands)
			}
		}
		walk(app.Name, app.Commands)
		for _, tp := range help.TopicsFor(app.Name) {
			if !strings.Contains(page, `.SS "`+app.Name+" help "+tp.Name+`"`) {
				t.Errorf("%s: help topic %s missing", name, tp.Name)
			}
		}
		if n < 3 {
			t.Errorf("%s: only %d commands found", name, n)
		}
	}
	if strings.Contains(pages["fluxsched.1"], "job-shell") {
		t.Error("fluxsched.1 documents the hidden job-shell command")
	}
}

// section is the text of a command's .SS up to the next heading.
func section(page, path string) string {
	i := strings.Index(page, `.SS "`+path)
	rest := page[i+1:]
	if j := strings.Index(rest, "\n.S"); j >= 0 {
		return rest[:j]
	}
	return rest
}

// fluxq.toml(5) documents every table and key the config decoder accepts:
// adding a key to internal/config without documenting it fails here.
func TestTomlPageCoversEveryKey(t *testing.T) {
	_, pages := generated(t)
	page := text(pages["fluxq.toml.5"])
	for _, table := range []string{"[[resource.config]]", "[queues.NAME]", "[policy]", "[sched]", "[exec]", "[access]", "[reservation]"} {
		if !strings.Contains(page, ".SH "+table) && !strings.Contains(page, `.SH "`+table) {
			t.Errorf("fluxq.toml.5: no section for %s", table)
		}
	}
	var keys []string
	tomlKeys(reflect.TypeOf(config.Config{}), "", &keys)
	// policy.scheduler is free-form for other schedulers; these are the
	// keys the built-in one reads (internal/config/sched.go).
	keys = append(keys, "policy.scheduler.policy", "policy.scheduler.queue-depth", "policy.scheduler.reservation-depth", "policy.scheduler.match-policy")
	if len(keys) < 25 {
		t.Fatalf("only %d keys found: %v", len(keys), keys)
	}
	// A key is documented when a bold term names it, or names its last
	// dotted parts ("limits.duration", ".ncores").
	var terms []string
	for _, m := range regexp.MustCompile(`\\fB(.*?)\\f[PR]`).FindAllStringSubmatch(strings.NewReplacer(`\-`, "-", `\&`, "").Replace(pages["fluxq.toml.5"]), -1) {
		terms = append(terms, strings.TrimPrefix(m[1], "."))
	}
	for _, k := range keys {
		found := false
		for _, term := range terms {
			if term != "" && (k == term || strings.HasSuffix(k, "."+term)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("fluxq.toml.5: key %s is not documented", k)
		}
	}
}

// tomlKeys lists the dotted paths of every leaf key under t.
func tomlKeys(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Map {
		if t.Elem().Kind() == reflect.Interface {
			return // a free-form table
		}
		tomlKeys(t.Elem(), prefix+".NAME", out)
		return
	}
	if t.Kind() != reflect.Struct {
		*out = append(*out, prefix)
		return
	}
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("toml")
		if tag == "" || tag == "-" || !t.Field(i).IsExported() {
			continue
		}
		name := strings.Split(tag, ",")[0]
		tomlKeys(t.Field(i).Type, strings.TrimPrefix(prefix+"."+name, "."), out)
	}
}

// A command's EXAMPLES part moves to the EXAMPLES section; the rest of its
// description, its flags with defaults and environment variables stay in
// COMMANDS; hidden commands and flags are left out.
func TestManPageRendersDefinitions(t *testing.T) {
	app := &cli.App{
		Name:        "demo",
		Usage:       "show the generator",
		Description: "demo does things.",
		Flags:       []cli.Flag{&cli.StringFlag{Name: "state-dir", Usage: "the `DIR`", EnvVars: []string{"DEMO_DIR"}}},
		Commands: []*cli.Command{
			{
				Name:      "submit",
				Aliases:   []string{"s"},
				Usage:     "submit a job",
				ArgsUsage: "COMMAND [ARGS...]",
				Description: "Options go before COMMAND.\n\n" +
					"EXAMPLES:\n" +
					"  # four tasks, ten minutes\n" +
					"  $ demo submit -n 4 -t 10m ./sim\n",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "ntasks", Aliases: []string{"n"}, Value: 1, Usage: "tasks"},
					&cli.StringFlag{Name: "secret", Hidden: true},
					&cli.BoolFlag{Name: "wait", Usage: "wait for the job"},
				},
			},
			{Name: "job-shell", Hidden: true, Usage: "internal"},
			{Name: "queue", Usage: "queues", Subcommands: []*cli.Command{{Name: "list", Usage: "list queues"}}},
		},
	}
	page := manPage(app, meta{date: "2025-01-02", version: "9.9", environment: []item{{"DEMO_DIR", "where"}}, seeAlso: []string{"other(1)"}})
	for _, want := range []string{
		`.TH "DEMO" 1 "2025-01-02" "demo 9.9" "User Commands"`,
		"demo \\- show the generator",
		`.SS "demo submit (alias: s)"`,
		`.SS "demo queue list"`,
		`\fB\-n\fR \fIvalue\fR, \fB\-\-ntasks\fR \fIvalue\fR` + "\ntasks (default: 1)",
		`\fB\-\-state\-dir\fR \fIDIR\fR` + "\nthe DIR [$DEMO_DIR]",
		`\fB\-\-wait\fR` + "\nwait for the job\n",
		".SH EXAMPLES\n.SS \"demo submit\"\n.RS 4\n.nf\n# four tasks, ten minutes\n\\fB$ demo submit \\-n 4 \\-t 10m ./sim\\fR\n.fi\n.RE\n",
		"\\fBother\\fR(1)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	for _, unwanted := range []string{"job\\-shell", "secret", "Options go before COMMAND.\n.PP\n\\fBEXAMPLES", "(default: false)"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("page has %q:\n%s", unwanted, page)
		}
	}
}

func TestSplitExamples(t *testing.T) {
	tests := []struct {
		name      string
		desc      string
		wantProse string
		wantEx    []string
	}{
		{"none", "Just text.\nMore.", "Just text.\nMore.", nil},
		{"examples", "Text.\n\nEXAMPLES:\n  $ a\n  $ b\n\n", "Text.", []string{"$ a", "$ b"}},
		{"not the heading", "Text.\nExamples:\n  $ a", "Text.\nExamples:\n  $ a", nil},
		{"to the end", "Text.\nEXAMPLES:\n  # a\n  $ a\n\n  $ b", "Text.", []string{"# a", "$ a", "", "$ b"}},
		{"only examples", "EXAMPLES:\n  $ a", "", []string{"$ a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prose, ex := splitExamples(tt.desc)
			if diff := cmp.Diff(tt.wantProse, prose); diff != "" {
				t.Errorf("prose (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEx, ex); diff != "" {
				t.Errorf("examples (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"--all", `\-\-all`},
		{`a\b`, `a\eb`},
		{"ƒ2a", `\[u0192]2a`},
		{"✔ ok", `\[u2714] ok`},
		{"tab\there", "tab    here"},
		{"bell\a", "bell"},
	}
	for _, tt := range tests {
		if got := escape(tt.in); got != tt.want {
			t.Errorf("escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A line that would start with a control character is guarded.
	r := &roff{}
	r.text(".hidden\n'quote")
	if got, want := r.String(), "\\&.hidden\n\\&'quote\n"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func TestProse(t *testing.T) {
	r := &roff{}
	r.prose("First line\ncontinues.\n\n  $ indented\n    more\n\n- a bullet\n- another\nNOTES:\nafter")
	want := "First line\ncontinues.\n.PP\n.RS 4\n.nf\n\\fB$ indented\\fR\n  more\n.fi\n.RE\n" +
		".IP \\(bu 2\na bullet\n.IP \\(bu 2\nanother\n.PP\n\\fBNOTES:\\fR\n.br\nafter\n"
	if diff := cmp.Diff(want, r.String()); diff != "" {
		t.Errorf("prose (-want +got):\n%s", diff)
	}
}

func TestPageDate(t *testing.T) {
	now := time.Date(2030, 5, 6, 23, 0, 0, 0, time.UTC)
	tests := []struct {
		flag, epoch, want string
		bad               bool
	}{
		{"", "", "2030-05-06", false},
		{"", "1700000000", "2023-11-14", false},
		{"2024-02-03", "1700000000", "2024-02-03", false},
		{"03/02/2024", "", "", true},
		{"", "yesterday", "", true},
	}
	for _, tt := range tests {
		got, err := pageDate(tt.flag, tt.epoch, now)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("pageDate(%q, %q) = %q, %v; want %q (error %v)", tt.flag, tt.epoch, got, err, tt.want, tt.bad)
		}
	}
}

func TestRunUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(nil, &stderr); code != 2 {
		t.Errorf("run without -out = %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "usage: mangen -out DIR") {
		t.Errorf("stderr = %q", stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"-out", t.TempDir(), "-toml-page", "/nonexistent.md"}, &stderr); code != 1 {
		t.Errorf("run with a missing source = %d, want 1 (%s)", code, stderr.String())
	}
	dir := t.TempDir()
	if code := run([]string{"-out", dir, "-toml-page", tomlSource, "-date", "2025-01-02"}, &stderr); code != 0 {
		t.Fatalf("run = %d: %s", code, stderr.String())
	}
	for _, name := range Pages {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// Every non-ASCII character gets an ASCII stand-in for devices without it,
// once, after the title.
func TestFallbacks(t *testing.T) {
	page := ".TH X 1\n" + noHyphenation + ".SH NAME\n" + escape("ƒ2a ✔ ƒ3b \u4e16") + "\n"
	got := withFallbacks(page)
	want := ".TH X 1\n" + noHyphenation +
		".if !c \\[u0192] .char \\[u0192] f\n" +
		".if !c \\[u2714] .char \\[u2714] y\n" +
		".if !c \\[u4E16] .char \\[u4E16] ?\n" +
		".SH NAME\n\\[u0192]2a \\[u2714] \\[u0192]3b \\[u4E16]\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withFallbacks (-want +got):\n%s", diff)
	}
}
