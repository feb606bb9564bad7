// Package args lets options come after positional arguments, as Flux and
// Slurm users expect (docs/cli.md: `fluxres reservation extend r1 -N 2` is
// `fluxres reservation extend -N 2 r1`). urfave/cli, like Go's flag
// package, stops reading options at the first positional argument, so
// Reorder rewrites a command line before the app parses it: each command's
// own options move in front of its positional arguments, which follow a
// "--" so that none of them is read as an option afterwards.
package args

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Reorder returns argv (program name first) with the options of the
// command it names moved before that command's positional arguments.
// Commands in inOrder keep their arguments as given: in `submit`, `run` and
// `reservation target` everything from the job's COMMAND on belongs to the
// job. An option of the application (--state-dir, --color, --timeout)
// given after the command name moves to before it. Anything Reorder does
// not recognise stays where it was, so the parser reports it.
func Reorder(app *cli.App, argv []string, inOrder ...*cli.Command) []string {
	head, path, cmd, i := walk(app, argv, inOrder)
	if cmd == nil || cmd.SkipFlagParsing || len(cmd.Subcommands) > 0 {
		return argv
	}
	own := WithHelp(cmd.Flags, cmd.HideHelp)
	if slices.Contains(inOrder, cmd) {
		// Options end at the first positional argument: only spell them
		// out ("-n2" as "-n 2") up to there.
		out := append(head, path...)
		tail := argv[i:]
		for k := 0; k < len(tail); k++ {
			a := tail[k]
			if a == "--" || !isOption(a, own) {
				return append(out, tail[k:]...)
			}
			parts := splitShort(a, own)
			out = append(out, parts...)
			name, hasValue := OptionName(parts[0])
			if f := Lookup(own, name); f != nil && TakesValue(f) && !hasValue && len(parts) == 1 && k+1 < len(tail) {
				k++
				out = append(out, tail[k])
			}
		}
		return out
	}
	var flags, hoisted, positional []string
	tail := argv[i:]
	for k := 0; k < len(tail); k++ {
		a := tail[k]
		if a == "--" {
			positional = append(positional, tail[k+1:]...)
			break
		}
		if !isOption(a, own) {
			positional = append(positional, a)
			continue
		}
		parts := splitShort(a, own)
		name, hasValue := OptionName(parts[0])
		hasValue = hasValue || len(parts) == 2
		dst := &flags
		f := Lookup(own, name)
		if f == nil {
			if g := Lookup(app.Flags, name); g != nil {
				f, dst = g, &hoisted
			}
		}
		*dst = append(*dst, parts...)
		if f != nil && TakesValue(f) && !hasValue && k+1 < len(tail) {
			k++
			*dst = append(*dst, tail[k])
		}
	}
	out := make([]string, 0, len(argv)+1)
	out = append(out, head...)
	out = append(out, hoisted...)
	out = append(out, path...)
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// walk finds the command argv names: head is the program name and the
// application's options, path the command names with the options of
// those that have subcommands, and i the index of the command's first
// argument. It stops at a command of inOrder. cmd is nil when argv names
// none.
func walk(app *cli.App, argv []string, inOrder []*cli.Command) (head, path []string, cmd *cli.Command, i int) {
	if len(argv) < 2 {
		return nil, nil, nil, len(argv)
	}
	rootFlags := WithHelp(app.Flags, app.HideHelp)
	rootFlags = append(rootFlags, cli.VersionFlag)
	// The application's own options, up to the command name.
	i = skipFlags(argv, 1, rootFlags)
	if i >= len(argv) {
		return nil, nil, nil, i
	}
	head = slices.Clone(argv[:i])
	cmds := app.Commands
	for i < len(argv) {
		next := Find(cmds, argv[i])
		if next == nil {
			break
		}
		cmd = next
		path = append(path, argv[i])
		i++
		if len(cmd.Subcommands) == 0 || slices.Contains(inOrder, cmd) || cmd.SkipFlagParsing {
			break
		}
		// A command with subcommands: its own options, then the next name.
		j := skipFlags(argv, i, WithHelp(cmd.Flags, cmd.HideHelp))
		path = append(path, argv[i:j]...)
		i = j
		cmds = cmd.Subcommands
	}
	return head, path, cmd, i
}

// FirstAsOption rewrites a command line naming cmd so that cmd's first
// positional argument becomes the value of its option --name, placed
// before cmd's other options: `reservation target [OPTS] LIST CMD...`
// becomes `reservation target --target LIST [OPTS] CMD...`, so a command
// whose later arguments belong to a job (inOrder in Reorder) can still take
// a leading argument. Any other command line is returned as it is.
func FirstAsOption(app *cli.App, argv []string, cmd *cli.Command, name string) []string {
	_, _, found, i := walk(app, argv, []*cli.Command{cmd})
	if found != cmd {
		return argv
	}
	j := skipFlags(argv, i, WithHelp(cmd.Flags, cmd.HideHelp))
	if j >= len(argv) || argv[j] == "--" {
		return argv
	}
	out := make([]string, 0, len(argv)+1)
	out = append(out, argv[:i]...)
	out = append(out, "--"+name, argv[j])
	out = append(out, argv[i:j]...)
	return append(out, argv[j+1:]...)
}

// splitShort spells "-n2" (a one-letter option that takes a value, with
// the value attached, as getopt allows) as "-n", "2"; anything else is
// returned as it is.
func splitShort(a string, flags []cli.Flag) []string {
	if len(a) < 3 || a[0] != '-' || a[1] == '-' || strings.Contains(a, "=") {
		return []string{a}
	}
	if Lookup(flags, a[1:]) != nil {
		return []string{a}
	}
	if f := Lookup(flags, a[1:2]); f != nil && TakesValue(f) {
		return []string{a[:2], a[2:]}
	}
	return []string{a}
}

// skipFlags returns the index of the first argument from i on that is not
// an option of flags or an option's value.
func skipFlags(argv []string, i int, flags []cli.Flag) int {
	for i < len(argv) {
		a := argv[i]
		if a == "--" || !isOption(a, flags) {
			return i
		}
		name, hasValue := OptionName(a)
		i++
		if f := Lookup(flags, name); f != nil && TakesValue(f) && !hasValue {
			i++
		}
	}
	return i
}

// isOption reports whether a looks like an option: a dash and a name. A
// negative number is an argument unless some option is named like it.
func isOption(a string, flags []cli.Flag) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	if c := a[1]; (c >= '0' && c <= '9') || c == '.' {
		name, _ := OptionName(a)
		return Lookup(flags, name) != nil
	}
	return true
}

// OptionName returns the name in "-n", "--name" or "--name=value", and
// whether the value came with it.
func OptionName(a string) (string, bool) {
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, _, hasValue := strings.Cut(name, "=")
	return name, hasValue
}

// Lookup returns the flag of flags that has name, or nil.
func Lookup(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if f != nil && slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// TakesValue reports whether an option reads the next argument as its
// value: every kind but the booleans.
func TakesValue(f cli.Flag) bool {
	if v, ok := f.(interface{ TakesValue() bool }); ok {
		return v.TakesValue()
	}
	return true
}

// WithHelp is flags and, unless hide, the --help flag urfave/cli adds.
func WithHelp(flags []cli.Flag, hide bool) []cli.Flag {
	out := slices.Clone(flags)
	if !hide && cli.HelpFlag != nil {
		out = append(out, cli.HelpFlag)
	}
	return out
}

// Find returns the command of cmds called name (or aliased so), or nil.
func Find(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
