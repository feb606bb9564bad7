package fluxq

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/bulk"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
)

// Flag names of bulksubmit's own options.
const (
	flagDefine   = "define"
	flagShuffle  = "shuffle"
	flagSep      = "sep"
	flagProgress = "progress"
)

// maxInputText bounds what one input file (or stdin) may hold: the jobs
// it makes are bounded by bulk.MaxJobs anyway.
const maxInputText = 256 << 20

// bulkState is submit's state and bulksubmit's own repeatable option.
type bulkState struct {
	submitState
	defines []string
}

// mutableOption is an option whose value takes replacement fields, as in
// flux bulksubmit, with how the dry run shows it (Flux's spelling).
type mutableOption struct{ flag, show string }

// mutableOptions are in the order the dry run prints them.
var mutableOptions = []mutableOption{
	{flagQueue, "-q"}, {flagNTasks, "-n"}, {flagNodes, "-N"}, {flagCores, "-c"}, {flagGPUs, "-g"},
	{flagMem, "--mem="}, {flagMemPerCPU, "--mem-per-cpu="}, {flagTime, "-t"}, {flagUrgency, "--urgency="},
	{flagJobName, "--job-name="}, {flagInput, "--input="}, {flagOutput, "--output="}, {flagError, "--error="},
	{flagCC, "--cc="}, {flagBCC, "--bcc="}, {flagCwd, "--cwd="}, {flagBegin, "--begin-time="}, {flagTarget, "--target="},
}

// countFlags are submit's integer options, strings in bulksubmit until
// their fields are replaced (flux-bulksubmit(1)'s `-n {.p2}`).
var countFlags = map[string]bool{flagNTasks: true, flagCores: true, flagGPUs: true, flagNodes: true}

func (e *env) bulksubmitCommand() *cli.Command {
	st := &bulkState{}
	var flags []cli.Flag
	for _, f := range st.flags(true) {
		switch f := f.(type) {
		case *cli.IntFlag:
			if countFlags[f.Name] {
				def := f.DefaultText
				if def == "" {
					def = "0"
				}
				flags = append(flags, &cli.StringFlag{Name: f.Name, Aliases: f.Aliases, Usage: f.Usage, DefaultText: def})
				continue
			}
		case *cli.StringFlag:
			if f.Name == flagJobspec {
				continue
			}
		case *cli.BoolFlag:
			if f.Name == flagDryRun {
				flags = append(flags, &cli.BoolFlag{Name: f.Name, Usage: "print each job as flux bulksubmit does (bulksubmit: submit OPTIONS COMMAND) and submit nothing", DisableDefaultText: true})
				continue
			}
		}
		flags = append(flags, f)
	}
	flags = append(flags,
		&cli.GenericFlag{Name: flagDefine, Value: listValue{&st.defines}, Usage: "define an attribute {.NAME} of every input: `NAME=TEMPLATE`, a template of the input {x} (e.g. stem='{x./%}'; no Python is run) (repeatable)", DefaultText: "none"},
		&cli.BoolFlag{Name: flagShuffle, Usage: "submit the jobs in a random order ({seq} stays each combination's number)", DisableDefaultText: true},
		&cli.StringFlag{Name: flagSep, Value: `\n`, Usage: "split stdin and :::: files at `STRING` (\\n, \\t, \\0 escapes; none: at white space)", DefaultText: `\n`},
		&cli.BoolFlag{Name: flagProgress, Usage: "on a terminal, show the submission's progress line from the start", DisableDefaultText: true},
	)
	return &cli.Command{
		Name:      "bulksubmit",
		Usage:     "submit one job per input, or per combination of inputs; print their IDs",
		ArgsUsage: "[COMMAND [ARGS...]] [::: INPUTS... | :::+ INPUTS... | :::: FILE | ::::+ FILE]...",
		Description: `Submits one job per input, as flux bulksubmit (GNU parallel's syntax):
the inputs are the lines of stdin, or the lists given after ::: on the
command line. Replacement fields put an input into the command and into
every option but the flags (-x, --dry-run...): {} is the input (with
several lists, the next one), {0}, {1}... the input of list 0, 1...;
{.%} without its extension, {./} its base name, {.//} its directory,
{./%} the base name without extension ({1./} for list 1's...); {seq} and
{seq1} the job's number from 0 and from 1 ({seq:03}: 000, 001...); {cc}
the --cc copy's id (empty without --cc). {{ and }} are kept for the job
shell's {{id}}.

Several ::: lists make every combination, the last list varying
fastest; :::+ pairs a list with the one before it instead (cycled when
shorter). :::: FILE reads a list from the lines of FILE (- is stdin), and
::::+ FILE pairs it. --define NAME=TEMPLATE makes {.NAME}: TEMPLATE is
expanded for each input as {x} (Flux runs NAME=CODE as Python; fluxq runs
no code, and a TEMPLATE that never uses {x} is refused).

All jobs go in one request: all are stored, or, if any is refused, none
(one line says why; a job refused before it is sent is named by its
number and as --dry-run shows it). Takes submit's options (the job
shape, --mem, -t, -q, --env...), applied to every job.

EXAMPLES:
  # One job per line of stdin
  $ seq 1 4 | fluxq bulksubmit echo {}

  # Every combination: sim a 1, sim a 2, sim b 1, sim b 2
  $ fluxq bulksubmit ./sim {0} {1} ::: a b ::: 1 2

  # One job per file named in files.txt, output beside each input
  $ fluxq bulksubmit --mem 1G --output {.%}.out ./process {} :::: files.txt

  # Show the jobs without submitting them
  $ fluxq bulksubmit --dry-run -n {} hostname ::: 1 2 4`,
		Flags:  flags,
		Action: action(func(c *cli.Context) error { return e.bulksubmit(c, st) }),
	}
}

// bulkJob is one combination of inputs, with its sequence number.
type bulkJob struct {
	seq    int
	inputs []string
}

func (e *env) bulksubmit(c *cli.Context, st *bulkState) error {
	command, sources, err := bulk.Split(c.Args().Slice())
	if err != nil {
		return exitcode.UsageErrorf("%v", err)
	}
	if len(command) == 0 {
		// flux bulksubmit: the inputs are the commands.
		command = []string{"{}"}
	}
	p, err := bulk.NewParser(st.defines)
	if err != nil {
		return exitcode.UsageErrorf("%v", err)
	}
	sep, err := bulk.ParseSep(c.String(flagSep))
	if err != nil {
		return exitcode.UsageErrorf("--%s: %v", flagSep, err)
	}
	lists, linked, err := e.bulkLists(c, sources, sep)
	if err != nil {
		return err
	}
	combos, err := bulk.Combine(lists, linked)
	if err != nil {
		return err
	}
	plan, err := newBulkPlan(c, p, command, &st.submitState)
	if err != nil {
		return err
	}
	if max := plan.maxIndex(); max >= len(lists) {
		return exitcode.UsageErrorf("{%d}: there %s only %s", max, isAre(len(lists)), plural(len(lists), "input list"))
	}
	order := make([]bulkJob, len(combos))
	for i, in := range combos {
		order[i] = bulkJob{seq: i, inputs: in}
	}
	if c.Bool(flagShuffle) {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	var jobs []api.SubmitJob
	lines := make([]string, 0, len(order))
	noCC := !c.IsSet(flagCC) && !c.IsSet(flagBCC)
	for _, bj := range order {
		js, line, err := plan.build(e, bulk.Env{Inputs: bj.inputs, Seq: bj.seq, NoCC: noCC})
		if err != nil {
			// The job as the dry run would show it, when it got that far.
			if line != "" {
				return wrapKeep(err, "job %d (%s)", bj.seq+1, line)
			}
			return wrapKeep(err, "job %d", bj.seq+1)
		}
		if len(jobs)+len(js) > maxCopies {
			return exitcode.UsageErrorf("more than %d jobs in one submission", maxCopies)
		}
		jobs = append(jobs, js...)
		lines = append(lines, line)
	}
	if c.Bool(flagDryRun) {
		w := bufio.NewWriterSize(stdout(c), 64<<10)
		if c.Bool(flagProgress) {
			fmt.Fprintf(w, "bulksubmit: submitting a total of %d jobs\n", len(jobs))
		}
		for _, l := range lines {
			w.WriteString("bulksubmit: submit " + l + "\n")
		}
		return w.Flush()
	}
	cl, ids, err := e.sendJobs(c, jobs, c.Bool(flagProgress))
	if err != nil {
		return err
	}
	defer cl.Close()
	return e.submitted(c, cl, ids)
}

// wrapKeep prefixes err, keeping its exit code (a usage error stays one).
func wrapKeep(err error, format string, a ...any) error {
	return exitcode.Prefix(fmt.Sprintf(format, a...), err)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// bulkLists reads the input lists: the command line's, each file's, or,
// with none given, stdin's lines.
func (e *env) bulkLists(c *cli.Context, sources []bulk.Source, sep string) ([][]string, []bool, error) {
	implicit := len(sources) == 0
	if implicit {
		sources = []bulk.Source{{Delim: bulk.DelimFile, File: "-"}}
	}
	lists := make([][]string, len(sources))
	linked := make([]bool, len(sources))
	for i, s := range sources {
		linked[i] = s.Linked
		if !s.IsFile() {
			lists[i] = s.Args
			continue
		}
		text, err := e.readInputs(c, s.File)
		if err != nil {
			return nil, nil, err
		}
		lists[i] = bulk.Inputs(text, sep)
		if len(lists[i]) == 0 {
			if implicit {
				return nil, nil, fmt.Errorf("no inputs: stdin is empty (give one input a line on stdin, or a list after ::: on the command line)")
			}
			return nil, nil, fmt.Errorf("%s %s (input list %d) holds no inputs", s.Delim, s.File, i+1)
		}
	}
	return lists, linked, nil
}

// readInputs reads an input file, or stdin for "-".
func (e *env) readInputs(c *cli.Context, path string) (string, error) {
	var r io.Reader
	name := path
	if path == "-" {
		r, name = c.App.Reader, "stdin"
		if r == nil {
			r = os.Stdin
		}
	} else {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", bulk.DelimFile, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInputText+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", name, err)
	}
	if len(b) > maxInputText {
		return "", fmt.Errorf("%s holds more than %dM of inputs", name, maxInputText>>20)
	}
	return string(b), nil
}

// bulkPlan holds the templates of one bulksubmit: the command's and each
// option's, parsed once, expanded for each job.
type bulkPlan struct {
	flags   *flagValues
	p       *bulk.Parser
	command []*bulk.Template
	opts    map[string]*bulk.Template // the mutable options given
	lists   [4][]*bulk.Template       // env rules, requires, dependencies, setopts
}

// The lists of a submitState, in bulkPlan.lists' order, and how the dry
// run shows them.
var bulkListShow = [4]string{"--env=", "--requires=", "--dependency=", "-o "}

func stateLists(st *submitState) [4]*[]string {
	return [4]*[]string{&st.envRules, &st.requires, &st.dependencies, &st.setopts}
}

func newBulkPlan(c *cli.Context, p *bulk.Parser, command []string, st *submitState) (*bulkPlan, error) {
	pl := &bulkPlan{flags: newFlagValues(c), p: p, opts: map[string]*bulk.Template{}}
	parse := func(where, s string) (*bulk.Template, error) {
		t, err := p.Parse(s)
		if err != nil {
			return nil, exitcode.UsageErrorf("%s: %v", where, err)
		}
		return t, nil
	}
	for _, a := range command {
		t, err := parse("COMMAND", a)
		if err != nil {
			return nil, err
		}
		pl.command = append(pl.command, t)
	}
	for _, m := range mutableOptions {
		if !c.IsSet(m.flag) {
			continue
		}
		t, err := parse("--"+m.flag, c.String(m.flag))
		if err != nil {
			return nil, err
		}
		pl.opts[m.flag] = t
	}
	for i, l := range stateLists(st) {
		for _, s := range *l {
			t, err := parse(strings.TrimSuffix(strings.TrimSpace(bulkListShow[i]), "="), s)
			if err != nil {
				return nil, err
			}
			pl.lists[i] = append(pl.lists[i], t)
		}
	}
	return pl, nil
}

// maxIndex is the highest input any template names.
func (pl *bulkPlan) maxIndex() int {
	m := -1
	all := append([]*bulk.Template{}, pl.command...)
	for _, t := range pl.opts {
		all = append(all, t)
	}
	for _, l := range pl.lists {
		all = append(all, l...)
	}
	for _, t := range all {
		m = max(m, t.MaxIndex())
	}
	return m
}

// build makes the jobs of one combination through submit's path, and the
// line the dry run prints for it: the options its fields changed (and
// --cc, --bcc), then the command, as flux bulksubmit prints them.
func (pl *bulkPlan) build(e *env, env bulk.Env) ([]api.SubmitJob, string, error) {
	var shown []string
	cmd := make([]string, len(pl.command))
	for i, t := range pl.command {
		s, err := pl.p.Expand(t, env)
		if err != nil {
			return nil, "", exitcode.UsageErrorf("%v", err)
		}
		cmd[i] = s
	}
	vals := map[string]string{}
	for _, m := range mutableOptions {
		t := pl.opts[m.flag]
		if t == nil {
			continue
		}
		s, err := pl.p.Expand(t, env)
		if err != nil {
			return nil, "", exitcode.UsageErrorf("--%s: %v", m.flag, err)
		}
		vals[m.flag] = s
		if t.HasFields() || m.flag == flagCC || m.flag == flagBCC {
			shown = append(shown, m.show+s)
		}
	}
	var sub submitState
	for i, l := range stateLists(&sub) {
		for _, t := range pl.lists[i] {
			s, err := pl.p.Expand(t, env)
			if err != nil {
				return nil, "", exitcode.UsageErrorf("%s: %v", strings.TrimSpace(bulkListShow[i]), err)
			}
			*l = append(*l, s)
			if t.HasFields() {
				shown = append(shown, bulkListShow[i]+s)
			}
		}
	}
	line := strings.Join(append(shown, cmd...), " ")
	o := bulkOptions{flagValues: pl.flags, vals: vals}
	copies, setCC, err := ccCopies(o)
	if err != nil {
		return nil, line, err
	}
	jobs, err := e.jobsFrom(o, cmd, &sub, copies, setCC)
	return jobs, line, err
}

// bulkOptions is the command line with one combination's fields replaced.
type bulkOptions struct {
	*flagValues
	vals map[string]string
}

// flagValues are the command line's values, read once: urfave/cli's
// lookups match every flag's names by regexp, which cost more than the
// jobspec itself when done for each of 100,000 jobs.
type flagValues struct {
	set     map[string]bool
	strings map[string]string
	bools   map[string]bool
}

func newFlagValues(c *cli.Context) *flagValues {
	v := &flagValues{set: map[string]bool{}, strings: map[string]string{}, bools: map[string]bool{}}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		v.set[name] = c.IsSet(name)
		switch f.(type) {
		case *cli.BoolFlag:
			v.bools[name] = c.Bool(name)
		case *cli.StringFlag:
			v.strings[name] = c.String(name)
		}
	}
	return v
}

func (v *flagValues) IsSet(name string) bool { return v.set[name] }
func (v *flagValues) Bool(name string) bool  { return v.bools[name] }

func (o bulkOptions) String(name string) string {
	if v, ok := o.vals[name]; ok {
		return v
	}
	return o.strings[name]
}

// Int reads a count after its fields are replaced, in the words submit's
// own parser would use.
func (o bulkOptions) Int(name string) (int, error) {
	if !o.IsSet(name) {
		return 0, nil
	}
	s := o.String(name)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, exitcode.UsageErrorf("--%s: invalid value %q: want an integer", name, s)
	}
	return n, nil
}
