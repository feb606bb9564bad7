// Package complete is shell completion for fluxq, fluxsched and fluxres.
// One engine in Go reads the words typed so far the way the commands will
// (options after positional arguments, a job's command line after
// `submit COMMAND`) and names the candidates for the word under the
// cursor: subcommands, options, fixed values, and values read from the
// live instance (queues, job IDs, reservations, hosts). Three thin scripts
// for bash, zsh and fish ask it through a hidden `__complete` command, so
// every shell offers the same words.
package complete

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/args"
)

// Candidate is one completion: the word, and a description for the shells
// that show one (zsh and fish).
type Candidate struct {
	Value string
	Desc  string
}

// Result is what the engine offers for the word under the cursor.
type Result struct {
	Candidates []Candidate
	// Files asks the shell for its own file name completion: the word is
	// a path, or belongs to a job's command line.
	Files bool
}

// Complete returns the candidates for the last of words, the word under
// the cursor ("" when a new word starts); words are what follows the
// program name. Values of the instance come from src; getenv decides how
// job IDs are printed (FLUXQ_F58_FORCE_ASCII). Errors of src are dropped:
// completion offers less, it never complains.
func Complete(ctx context.Context, app *cli.App, words []string, src Source, getenv func(string) string) Result {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	w := walk(app, words[:len(words)-1])
	e := &engine{ctx: ctx, app: app, src: src, getenv: getenv, key: w.key(), given: w.args}
	switch {
	case w.pending != nil:
		return e.flagValue(w.pending, cur)
	case w.jobLine:
		return Result{Files: true}
	case !w.dashdash && strings.HasPrefix(cur, "--") && strings.Contains(cur, "="):
		name, val, _ := strings.Cut(cur[2:], "=")
		f := args.Lookup(w.flags, name)
		if f == nil || !args.TakesValue(f) {
			return Result{}
		}
		r := e.flagValue(f, val)
		for i := range r.Candidates {
			r.Candidates[i].Value = "--" + name + "=" + r.Candidates[i].Value
		}
		return r
	case !w.dashdash && strings.HasPrefix(cur, "-") && !isNumber(cur):
		return Result{Candidates: flagCandidates(w.offered, cur)}
	case w.cmd == nil || len(w.cmd.Subcommands) > 0:
		cmds := app.Commands
		if w.cmd != nil {
			cmds = w.cmd.Subcommands
		}
		if w.pos > 0 {
			return Result{} // not a command this app knows
		}
		return Result{Candidates: match(commandCandidates(cmds), cur)}
	}
	if w.jobAt >= 0 && w.pos >= w.jobAt {
		return Result{Files: true} // the job's COMMAND
	}
	if v := argValue(w.key(), w.pos); v != nil {
		return v(e, cur)
	}
	return Result{}
}

// state is what the words before the cursor say: the command they name,
// its options, and where in its arguments the cursor is.
type state struct {
	app  *cli.App
	path []*cli.Command // the commands named, outermost first
	cmd  *cli.Command   // the last of path; nil at the application
	// flags are the options the command accepts (its own and the
	// application's, which the commands read anywhere); offered are those
	// worth offering, without the application's below the top.
	flags, offered []cli.Flag
	pos            int      // positional arguments so far
	args           []string // and what they are
	dashdash       bool     // after "--": no more options
	jobLine        bool     // inside the job's command line
	jobAt          int      // the argument at which the job's command line starts; -1: none
	pending        cli.Flag // the previous word is this option, which wants a value
	globals        []string // the application's options, as typed
}

// key names the command for the value tables: "fluxq queue start".
func (s *state) key() string {
	parts := []string{s.app.Name}
	for _, c := range s.path {
		parts = append(parts, c.Name)
	}
	return strings.Join(parts, " ")
}

// walk reads words (those before the cursor) as the commands would.
func walk(app *cli.App, words []string) *state {
	s := &state{app: app, jobAt: -1}
	s.enter(nil)
	for i := 0; i < len(words); i++ {
		w := words[i]
		if s.jobLine {
			break
		}
		if !s.dashdash && w == "--" {
			s.dashdash = true
			if s.jobAt >= 0 && s.pos >= s.jobAt {
				s.jobLine = true
			}
			continue
		}
		if !s.dashdash && isOption(w, s.flags) {
			name, hasValue := args.OptionName(w)
			f := args.Lookup(s.flags, name)
			if f == nil && !strings.HasPrefix(w, "--") && len(name) > 1 {
				// -n2: a one-letter option with its value attached.
				if g := args.Lookup(s.flags, name[:1]); g != nil && args.TakesValue(g) {
					f, hasValue = g, true
				}
			}
			global := f != nil && args.Lookup(app.Flags, name) == f
			if global {
				s.globals = append(s.globals, w)
			}
			if f == nil || !args.TakesValue(f) || hasValue {
				continue
			}
			if i+1 == len(words) {
				s.pending = f
				continue
			}
			i++
			if global {
				s.globals = append(s.globals, words[i])
			}
			continue
		}
		// A positional argument: a subcommand's name, or an argument.
		if s.pos == 0 && !s.dashdash && (s.cmd == nil || len(s.cmd.Subcommands) > 0) {
			cmds := app.Commands
			if s.cmd != nil {
				cmds = s.cmd.Subcommands
			}
			if c := args.Find(cmds, w); c != nil {
				s.enter(c)
				continue
			}
		}
		s.pos++
		s.args = append(s.args, w)
		if s.jobAt >= 0 && s.pos > s.jobAt {
			s.jobLine = true
		}
	}
	return s
}

// enter makes c (nil: the application) the current command.
func (s *state) enter(c *cli.Command) {
	s.pos, s.args = 0, nil
	if c == nil {
		s.flags = args.WithHelp(s.app.Flags, s.app.HideHelp)
		s.offered = s.app.Flags
		return
	}
	s.path = append(s.path, c)
	s.cmd = c
	s.flags = append(args.WithHelp(c.Flags, c.HideHelp), s.app.Flags...)
	s.offered = c.Flags
	s.jobAt = -1
	if at, ok := jobLines[s.key()]; ok {
		s.jobAt = at
	}
}

// flagCandidates are the visible options of flags that start with cur:
// long names as --name, one-letter ones as -n (those only while cur is
// just "-", or the option itself, since a long name says more).
func flagCandidates(flags []cli.Flag, cur string) []Candidate {
	var out []Candidate
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		desc := ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			desc = strings.ReplaceAll(d.GetUsage(), "`", "")
		}
		for _, n := range f.Names() {
			word := "--" + n
			if len(n) == 1 {
				word = "-" + n
				if cur != "-" && cur != word {
					continue
				}
			}
			if strings.HasPrefix(word, cur) {
				out = append(out, Candidate{Value: word, Desc: desc})
			}
		}
	}
	return out
}

// commandCandidates are the visible commands of cmds, by their names.
func commandCandidates(cmds []*cli.Command) []Candidate {
	var out []Candidate
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		out = append(out, Candidate{Value: c.Name, Desc: c.Usage})
	}
	return out
}

// match keeps the candidates that start with cur.
func match(cands []Candidate, cur string) []Candidate {
	out := cands[:0:0]
	for _, c := range cands {
		if strings.HasPrefix(c.Value, cur) {
			out = append(out, c)
		}
	}
	return out
}

// isOption reports whether a looks like an option (as internal/cli/args
// reads them): a dash and a name; a negative number is an argument unless
// some option is named like it.
func isOption(a string, flags []cli.Flag) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	if isNumber(a) {
		name, _ := args.OptionName(a)
		return args.Lookup(flags, name) != nil
	}
	return true
}

// isNumber reports whether a is a dash and then a digit or a dot, which
// is how a negative number starts.
func isNumber(a string) bool {
	return len(a) >= 2 && a[0] == '-' && (a[1] >= '0' && a[1] <= '9' || a[1] == '.')
}
