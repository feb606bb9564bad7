package complete

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// HiddenName is the command the scripts call: `fluxq __complete WORDS...`.
const HiddenName = "__complete"

// FilesLine is the line of __complete's output that asks the shell for
// its own file name completion.
const FilesLine = ":files"

// Command returns `completion bash|zsh|fish` for the application named
// bin: it prints the script that teaches the shell to complete bin.
func Command(bin string) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: "Prints a script that completes " + bin + "'s commands, options and values:\n" +
			"queue names, job IDs, reservation IDs and hosts are read from the running\n" +
			"instance as you type. Install it once:\n\n" +
			"  bash: " + bin + " completion bash > /etc/bash_completion.d/" + bin + "\n" +
			"        (or ~/.local/share/bash-completion/completions/" + bin + ")\n" +
			"  zsh:  " + bin + " completion zsh > \"${fpath[1]}/_" + bin + "\"\n" +
			"        (any directory in $fpath, before compinit runs)\n" +
			"  fish: " + bin + " completion fish > ~/.config/fish/completions/" + bin + ".fish\n\n" +
			"(make install puts all three in place.)\n\n" +
			"EXAMPLES:\n" +
			"  # Try it in the current bash\n" +
			"  $ source <(" + bin + " completion bash)\n\n" +
			"  # Install it for zsh\n" +
			"  $ " + bin + " completion zsh > \"${fpath[1]}/_" + bin + "\"",
		Action: exitcode.Action(func(c *cli.Context) error {
			if c.NArg() != 1 {
				return exitcode.UsageErrorf("completion needs one shell: bash, zsh or fish")
			}
			s, err := Script(c.Args().First(), c.App.Name)
			if err != nil {
				return err
			}
			_, err = io.WriteString(writer(c), s)
			return err
		}),
	}
}

// Hidden returns the __complete command the scripts call. Its arguments
// are the words after the program name, the last one the word under the
// cursor (empty when a new word starts). It prints one candidate a line,
// "value<TAB>description" when there is a description, and FilesLine
// when the shell should complete file names. It never fails and never
// writes to stderr: whatever goes wrong, the prompt only sees fewer
// candidates.
func Hidden() *cli.Command {
	return &cli.Command{
		Name:            HiddenName,
		Hidden:          true,
		HideHelp:        true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) (err error) {
			defer func() {
				if recover() != nil {
					err = nil
				}
			}()
			words := c.Args().Slice()
			ctx, cancel := context.WithTimeout(c.Context, 2*Timeout)
			defer cancel()
			src := Live(c.App, words)
			defer src.Close()
			Write(writer(c), Complete(ctx, c.App, words, src, os.Getenv))
			return nil
		},
	}
}

// Write prints r in __complete's format.
func Write(w io.Writer, r Result) {
	var b bytes.Buffer
	for _, c := range r.Candidates {
		if c.Value == "" || strings.ContainsAny(c.Value, "\t\n") {
			continue
		}
		b.WriteString(c.Value)
		if d := strings.Join(strings.Fields(c.Desc), " "); d != "" {
			b.WriteString("\t" + d)
		}
		b.WriteByte('\n')
	}
	if r.Files {
		b.WriteString(FilesLine + "\n")
	}
	_, _ = w.Write(b.Bytes())
}

func writer(c *cli.Context) io.Writer {
	if c.App.Writer != nil {
		return c.App.Writer
	}
	return os.Stdout
}

//go:embed scripts
var scripts embed.FS

// templates parses the scripts on first use, not at start-up: every run
// of the three binaries would pay for it otherwise.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(scripts, "scripts/*"))
})

// notWord is what a shell function name may not hold.
var notWord = regexp.MustCompile(`[^A-Za-z0-9_]`)

// Script returns the completion script of shell for the program bin; an
// unknown shell is a usage error.
func Script(shell, bin string) (string, error) {
	if !slices.Contains(Shells, shell) {
		return "", exitcode.UsageErrorf("unknown shell %q: choose bash, zsh or fish", shell)
	}
	var b strings.Builder
	err := templates().ExecuteTemplate(&b, shell, struct{ Prog, Fn, Hidden, Files string }{
		Prog: bin, Fn: notWord.ReplaceAllString(bin, "_"), Hidden: HiddenName, Files: FilesLine,
	})
	if err != nil {
		return "", fmt.Errorf("%s script: %w", shell, err)
	}
	return b.String(), nil
}
