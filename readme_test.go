package fluxq_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestReadmeTour runs the tour of README.md as written (issue 16): every
// `$ bin/...` line of its console blocks, in order, against a new state
// directory, with fluxsched running as `make run` starts it and
// restarted where the tour restarts it. Each line must succeed; what it
// prints depends on the machine and is not checked. `fluxq top` is
// interactive and is left out.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	lines, toml := tour(string(readme))
	if len(lines) < 20 || toml == "" {
		t.Fatalf("README.md: found %d tour lines and queues config %q: has the tour moved?", len(lines), toml)
	}
	var b strings.Builder
	startSched := func(args string) {
		b.WriteString("exec fluxsched run" + args + " &sched&\n")
		b.WriteString(`exec sh -c 'for i in $(seq 600); do [ -S "$FLUXQ_STATE_DIR/fluxsched.sock" ] && exit 0; sleep 0.05; done; exit 1'` + "\n")
	}
	startSched("") // make run
	for _, l := range lines {
		cmd := strings.ReplaceAll(l, "bin/", "")
		cmd = strings.ReplaceAll(cmd, "testdata/", repo+"/testdata/")
		switch {
		case strings.HasPrefix(cmd, "fluxq top"):
			continue
		case strings.HasPrefix(cmd, "fluxsched run"):
			b.WriteString("kill -INT sched\nwait sched\n")
			startSched(strings.TrimPrefix(cmd, "fluxsched run"))
			continue
		}
		// Each line is a shell of its own: what the tour sets (id=...)
		// is kept in tour.env for the lines after it.
		if m := assignment.FindStringSubmatch(cmd); m != nil {
			cmd += `; echo "` + m[1] + `=$` + m[1] + `" >> tour.env`
		}
		cmd = "[ -f tour.env ] && . ./tour.env; " + cmd
		b.WriteString("# " + l + "\n")
		b.WriteString("exec bash -c '" + strings.ReplaceAll(cmd, "'", "''") + "'\n")
	}
	b.WriteString("kill -INT sched\nwait sched\n")
	b.WriteString("-- queues.toml --\n" + toml)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "readme_tour.txtar"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, scriptParams(dir))
}

var assignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=`)

// tour returns the command lines of README.md's console blocks (a
// trailing backslash joins the next line) and the first TOML block of
// its Queues section, which the tour saves as queues.toml.
func tour(readme string) (lines []string, toml string) {
	block := regexp.MustCompile("(?s)```(console|toml)\n(.*?)```")
	inQueues := false
	sections := regexp.MustCompile(`(?m)^#+ `).Split(readme, -1)
	for _, sec := range sections {
		inQueues = strings.HasPrefix(sec, "Queues")
		for _, m := range block.FindAllStringSubmatch(sec, -1) {
			if m[1] == "toml" {
				if inQueues && toml == "" {
					toml = m[2]
				}
				continue
			}
			var cont string
			for _, l := range strings.Split(m[2], "\n") {
				if cont != "" {
					l = cont + " " + strings.TrimSpace(l)
					cont = ""
				} else if !strings.HasPrefix(l, "$ ") {
					continue
				} else {
					l = strings.TrimPrefix(l, "$ ")
				}
				if strings.HasSuffix(l, "\\") {
					cont = strings.TrimSuffix(l, "\\")
					continue
				}
				lines = append(lines, stripComment(l))
			}
		}
	}
	return lines, toml
}

// stripComment drops a trailing "  # comment" outside quotes.
func stripComment(l string) string {
	quote := rune(0)
	for i, c := range l {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && i > 0 && l[i-1] == ' ':
			return strings.TrimSpace(l[:i])
		}
	}
	return strings.TrimSpace(l)
}
