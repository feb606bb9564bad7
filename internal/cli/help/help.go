// Package help gives fluxq, fluxres and fluxsched one look for their help
// and one answer to a typo: a help template that prints each command's
// examples after its options, `BIN help TOPIC` for what a flag alone cannot
// explain (jobspec, durations, constraints, queues, states, ids), and "Did
// you mean …?" for an unknown command, topic or flag.
//
// Commands keep their help where urfave/cli does, in the command
// definitions. A Description may end with an "EXAMPLES:" line; what follows
// it is printed as its own section, after OPTIONS, as gh and kubectl do:
//
//	Description: `What it does, and when to use it.
//
//	EXAMPLES:
//	  # What the example shows
//	  $ fluxq submit -n 4 -t 10m ./sim`,
package help

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/suggest"
)

// examplesHeader is the line of a Description that starts its examples.
const examplesHeader = "EXAMPLES:"

// Split cuts a command's Description into its prose and its examples
// (what follows the "EXAMPLES:" line), each without its common
// indentation and surrounding blank lines. Man pages use it to put the
// examples in their own section.
func Split(description string) (text, examples string) {
	lines := strings.Split(description, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == examplesHeader {
			return dedent(lines[:i]), dedent(lines[i+1:])
		}
	}
	return dedent(lines), ""
}

// dedent joins lines without the indentation (spaces and tabs) they all
// share, without trailing blanks, and without leading or trailing blank
// lines.
func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	common, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			common, first = lead, false
			continue
		}
		for !strings.HasPrefix(lead, common) {
			common = common[:len(common)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue // a blank line stays empty, without trailing spaces
		}
		out[i] = strings.TrimRight(l[len(common):], " \t")
	}
	return strings.Join(out, "\n")
}

// indent puts urfave/cli's three-space section indentation before every
// line that has text.
func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "   " + l
		}
	}
	return strings.Join(lines, "\n")
}

// literal is s as a text/template action that prints it verbatim, so that
// `{{id}}` in an example is not taken for a template action.
func literal(s string) string { return "{{" + strconv.Quote(s) + "}}" }

// section is a help section with a fixed body, or "" without one.
func section(title, body string) string {
	if body == "" {
		return ""
	}
	return "\n\n" + title + ":\n" + literal(indent(body))
}

// The parts of urfave/cli's own templates that fluxq keeps: name, usage,
// and the generated lists of commands and flags.
const (
	// nameUsage is urfave/cli's, but trims ArgsUsage: a blank one keeps
	// "[arguments...]" away without leaving spaces at the end of the line.
	nameUsage = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{if .UsageText}}{{wrap .UsageText 3}}{{else}}{{.HelpName}}{{if .VisibleFlags}} [command options]{{end}}{{if trim .ArgsUsage}} {{trim .ArgsUsage}}{{end}}{{end}}`
	// groupNameUsage is the same for a command that holds subcommands.
	groupNameUsage = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{if .UsageText}}{{wrap .UsageText 3}}{{else}}{{.HelpName}} command [command options]{{end}}`
	appNameUsage = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{if .UsageText}}{{wrap .UsageText 3}}{{else}}{{.HelpName}} {{if .VisibleFlags}}[global options]{{end}}{{if .Commands}} command [command options]{{end}}{{if .ArgsUsage}} {{.ArgsUsage}}{{else}}{{if .Args}} [arguments...]{{end}}{{end}}{{end}}{{if .Version}}{{if not .HideVersion}}

VERSION:
   {{.Version}}{{end}}{{end}}`
	// commandList leaves categories out (no command has one): a command's
	// categories exist only once urfave/cli has run it, and `help queue`
	// shows queue's help without running it.
	commandList = `{{if .VisibleCommands}}

COMMANDS:{{template "visibleCommandTemplate" .}}{{end}}`
	// visibleFlagTemplate ends without a newline, unlike
	// visibleFlagCategoryTemplate, so sections stay one blank line apart.
	optionList = `{{if .VisibleFlags}}

OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}`
	globalOptionList = `{{if .VisibleFlags}}

GLOBAL OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}`
)

// commandTemplate is the help of one command: its description and
// examples are fixed at installation, the rest is urfave/cli's.
func commandTemplate(c *cli.Command) string {
	text, examples := Split(c.Description)
	if !hasVisible(c.Subcommands) {
		return nameUsage + section("DESCRIPTION", text) + optionList + section("EXAMPLES", examples) + "\n"
	}
	return groupNameUsage + section("DESCRIPTION", text) + commandList + optionList + section("EXAMPLES", examples) + "\n"
}

// appTemplate is the help of the app itself: the commands, then the help
// topics, then the global options and examples.
func appTemplate(app *cli.App, topics []Topic) string {
	text, examples := Split(app.Description)
	t := appNameUsage + section("DESCRIPTION", text) + commandList
	if len(topics) > 0 {
		t += section("HELP TOPICS", topicList(topics)+"\n\nRead one with '"+app.Name+" help TOPIC'.")
	}
	return t + globalOptionList + section("EXAMPLES", examples) + "\n"
}

// topicList is one aligned line per topic: its name and summary.
func topicList(topics []Topic) string {
	width := 0
	for _, t := range topics {
		width = max(width, len(t.Name))
	}
	lines := make([]string, len(topics))
	for i, t := range topics {
		lines[i] = fmt.Sprintf("%-*s  %s", width, t.Name, t.Summary)
	}
	return strings.Join(lines, "\n")
}

func hasFlag(flags []cli.Flag, f cli.Flag) bool {
	for _, g := range flags {
		for _, n := range g.Names() {
			for _, m := range f.Names() {
				if n == m {
					return true
				}
			}
		}
	}
	return false
}

func hasVisible(cmds []*cli.Command) bool {
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			return true
		}
	}
	return false
}

// Install gives app the house help, for apps run by exitcode.Run (whose
// ExitErrHandler keeps urfave/cli from exiting): the help template on the
// app and on every command; a `help` command on the app and on every
// command with subcommands that shows a command's help at any depth (`fluxq
// help queue list`) and, on the app, the topics of app.Name; an unknown
// command, topic or flag answered with exit 2 and the closest names.
// Call it after the app's usage-error handlers are set: it wraps them.
// Installing again adds nothing twice.
func Install(app *cli.App) {
	topics := TopicsFor(app.Name)
	if app.CustomAppHelpTemplate == "" {
		app.CustomAppHelpTemplate = appTemplate(app, topics)
	}
	app.OnUsageError = suggestFlag(app.OnUsageError)
	if app.Command("help") == nil && !app.HideHelp && !app.HideHelpCommand {
		app.Commands = append(app.Commands, helpCommand(app, nil, topics, app.OnUsageError))
		// urfave/cli adds --help to the app only along with its own help
		// command, which ours replaces.
		if cli.HelpFlag != nil && !hasFlag(app.Flags, cli.HelpFlag) {
			app.Flags = append(app.Flags, cli.HelpFlag)
		}
	}
	switch {
	case app.Action == nil:
		app.Action = groupAction(app, nil)
	case hasVisible(app.Commands):
		// An app that runs without a command (fluxsched) still takes
		// "runn" for a misspelt command rather than an argument.
		app.Action = typoAction(app, app.Action)
	}
	for _, c := range app.Commands {
		installCommand(app, c)
	}
}

func installCommand(app *cli.App, c *cli.Command) {
	if c.Name == "help" {
		return // ours, or the app's own
	}
	c.OnUsageError = suggestFlag(c.OnUsageError)
	if hasVisible(c.Subcommands) {
		if c.Command("help") == nil && !c.HideHelp && !c.HideHelpCommand {
			c.Subcommands = append(c.Subcommands, helpCommand(app, c, nil, c.OnUsageError))
		}
		if c.Action == nil {
			c.Action = groupAction(app, c)
		}
	}
	if c.CustomHelpTemplate == "" {
		c.CustomHelpTemplate = commandTemplate(c)
	}
	for _, s := range c.Subcommands {
		installCommand(app, s)
	}
}

// exit2 is a usage error: exitcode.Code reads its status (it is a
// cli.ExitCoder), and exitcode.Run prints it as "bin: message".
func exit2(format string, a ...any) error { return cli.Exit(fmt.Sprintf(format, a...), 2) }

func quoteName(s string) string { return "'" + s + "'" }

func quoteFlag(s string) string {
	if len([]rune(s)) == 1 {
		return "-" + s
	}
	return "--" + s
}

// names are the visible names (and aliases) of cmds.
func names(cmds []*cli.Command) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c.Names()...)
		}
	}
	return out
}

// commandPath is "fluxq" for the app, "fluxq queue" for a command.
func commandPath(app *cli.App, c *cli.Command) string {
	if c == nil {
		return app.Name
	}
	if c.HelpName != "" {
		return c.HelpName
	}
	return app.Name + " " + c.Name
}

// unknownCommand is the error for a word that names no command of cmds.
func unknownCommand(path, typed string, cmds []*cli.Command) error {
	msg := fmt.Sprintf("'%s' is not a %s command.", typed, path)
	if s := DidYouMean(suggest.Names(typed, names(cmds)), quoteName); s != "" {
		msg += " " + s
	}
	return exit2("%s", msg)
}

// groupAction runs for the app or a command that only holds subcommands
// (group nil: the app): without arguments it shows the help, with one it
// says the word is no command here, and which are close.
func groupAction(app *cli.App, group *cli.Command) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Args().Present() {
			cmds := app.Commands
			if group != nil {
				cmds = group.Subcommands
			}
			return unknownCommand(commandPath(app, group), c.Args().First(), cmds)
		}
		if group == nil {
			return cli.ShowAppHelp(c)
		}
		return cli.ShowSubcommandHelp(c)
	}
}

// typoAction wraps the action of an app that runs without a command: a
// first argument close to a command's name is taken for a typo of it.
func typoAction(app *cli.App, action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if first := c.Args().First(); first != "" && suggest.Names(first, names(app.Commands)) != nil {
			return unknownCommand(app.Name, first, app.Commands)
		}
		return action(c)
	}
}

// suggestFlag wraps a usage-error handler: an undefined flag gains the
// closest flags of the command ("Did you mean --filter?").
func suggestFlag(next cli.OnUsageErrorFunc) cli.OnUsageErrorFunc {
	return func(c *cli.Context, err error, isSubcommand bool) error {
		err = withFlagSuggestion(c, err)
		if next == nil {
			return err
		}
		return next(c, err, isSubcommand)
	}
}

// notDefined is how the flag package reports an unknown flag.
const notDefined = "flag provided but not defined: "

// didYouMean starts every suggestion; an error that has one already is
// left alone, so that wrapping a handler twice suggests once.
const didYouMean = "Did you mean "

// withFlagSuggestion says an undefined flag as getopt (and so Slurm)
// does, "unrecognized option '--ntaks'", with the flag as a person types
// it (the flag package reports "-ntaks" whatever was typed), and adds the
// command's closest flags.
func withFlagSuggestion(c *cli.Context, err error) error {
	if err == nil || strings.Contains(err.Error(), didYouMean) {
		return err
	}
	typed, ok := strings.CutPrefix(err.Error(), notDefined)
	if !ok {
		return err
	}
	typed = strings.TrimLeft(typed, "-")
	msg := "unrecognized option '" + quoteFlag(typed) + "'"
	if c == nil || c.Command == nil {
		return errors.New(msg)
	}
	var candidates []string
	for _, f := range c.Command.Flags {
		candidates = append(candidates, f.Names()...)
	}
	if !c.Command.HideHelp && cli.HelpFlag != nil {
		candidates = append(candidates, cli.HelpFlag.Names()...)
	}
	if s := DidYouMean(suggest.Names(typed, candidates), quoteFlag); s != "" {
		msg += ". " + s
	}
	return errors.New(msg)
}

// helpCommand is `help` for the app (owner nil) or for a command with
// subcommands: no argument shows the owner's help, a command path shows
// that command's, and on the app a topic name shows the topic. Commands win
// over topics of the same name.
func helpCommand(app *cli.App, owner *cli.Command, topics []Topic, onUsage cli.OnUsageErrorFunc) *cli.Command {
	path := commandPath(app, owner)
	h := &cli.Command{
		Name:         "help",
		Aliases:      []string{"h"},
		Usage:        "show help for a command",
		ArgsUsage:    "[COMMAND...]",
		OnUsageError: onUsage,
		// Without this urfave/cli gives it a help command of its own, and
		// `help help` would run that one, which then holds itself as a
		// subcommand: a loop for whoever walks the commands next.
		HideHelpCommand: true,
	}
	desc := "Shows what a command does, its options and examples, as COMMAND --help\n" +
		"does; without COMMAND, the commands of " + path + "."
	examples := fmt.Sprintf("# The commands of %s\n$ %s help", path, path)
	if first := firstVisible(app, owner); first != nil {
		examples += fmt.Sprintf("\n\n# The options of %[1]s %[2]s, the same as %[1]s %[2]s --help\n$ %[1]s help %[2]s",
			path, first.Name)
	}
	if len(topics) > 0 {
		h.Usage = "show help for a command or a topic"
		h.ArgsUsage = "[COMMAND... | TOPIC]"
		desc = "Shows what a command does, its options and examples, as COMMAND --help\n" +
			"does, or explains a topic that many commands share. Without an argument,\n" +
			"the commands and topics of " + path + ". A command wins over a topic of\n" +
			"the same name.\n\nTOPICS:\n" + indent(topicList(topics))
		t := topics[0]
		if d, ok := lookupTopic(topics, "durations"); ok {
			t = d // every binary takes durations
		}
		examples += fmt.Sprintf("\n\n# A topic: %s\n$ %s help %s", t.Summary, path, t.Name)
	}
	h.Description = desc + "\n\n" + examplesHeader + "\n" + examples
	h.CustomHelpTemplate = commandTemplate(h) // installCommand passes help by
	h.Action = func(c *cli.Context) error {
		return showHelp(c, app, owner, topics)
	}
	return h
}

func firstVisible(app *cli.App, owner *cli.Command) *cli.Command {
	cmds := app.Commands
	if owner != nil {
		cmds = owner.Subcommands
	}
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			return c
		}
	}
	return nil
}

// showHelp is the help command's action.
func showHelp(c *cli.Context, app *cli.App, owner *cli.Command, topics []Topic) error {
	args := c.Args().Slice()
	ctx := cli.NewContext(c.App, nil, c)
	if len(args) == 0 {
		if owner == nil {
			return cli.ShowAppHelp(ctx)
		}
		ctx.Command = owner
		return cli.ShowSubcommandHelp(ctx)
	}
	// Walk the command path; the last word's parent shows its help.
	parent := owner
	cmds := app.Commands
	if owner != nil {
		cmds = owner.Subcommands
	}
	for i, a := range args {
		var found *cli.Command
		for _, cmd := range cmds {
			if cmd.HasName(a) {
				found = cmd
				break
			}
		}
		if found == nil {
			if i == 0 && owner == nil {
				if t, ok := lookupTopic(topics, a); ok {
					return writeTopic(c.App.Writer, app.Name, t)
				}
			}
			return unknownHelp(args[:i+1], cmds, topics, i == 0 && owner == nil)
		}
		if found.HelpName == "" {
			found.HelpName = commandPath(app, parent) + " " + found.Name
		}
		if i == len(args)-1 {
			if parent == nil {
				ctx.Command = &cli.Command{} // ShowCommandHelp then looks in app.Commands
			} else {
				ctx.Command = parent
			}
			return cli.ShowCommandHelp(ctx, found.Name)
		}
		parent, cmds = found, found.Subcommands
	}
	return nil
}

// unknownHelp is the error for `help WORDS` when the last word names
// nothing: the closest commands (and on the app, topics) are suggested.
func unknownHelp(words []string, cmds []*cli.Command, topics []Topic, withTopics bool) error {
	typed := words[len(words)-1]
	candidates := names(cmds)
	if withTopics {
		for _, t := range topics {
			candidates = append(candidates, t.Name)
		}
	}
	prefix := strings.Join(words[:len(words)-1], " ")
	if prefix != "" {
		prefix += " "
	}
	msg := fmt.Sprintf("help: no help topic or command '%s'", strings.Join(words, " "))
	if !withTopics {
		msg = fmt.Sprintf("help: no command '%s'", strings.Join(words, " "))
	}
	if s := DidYouMean(suggest.Names(typed, candidates), func(s string) string { return quoteName(prefix + s) }); s != "" {
		msg += ". " + s
	}
	return exit2("%s", msg)
}

// writeTopic prints a topic in the layout of a command's help.
func writeTopic(w io.Writer, bin string, t Topic) error {
	if w == nil {
		w = os.Stdout
	}
	_, err := fmt.Fprintf(w, "NAME:\n   %s help %s - %s\n\n%s\n", bin, t.Name, t.Summary, strings.TrimRight(t.Text, "\n"))
	if err != nil {
		return errors.New("help: " + err.Error())
	}
	return nil
}
