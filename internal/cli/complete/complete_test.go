package complete_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/complete"
	"github.com/fluxq/fluxq/internal/cli/fluxq"
	"github.com/fluxq/fluxq/internal/cli/fluxres"
	"github.com/fluxq/fluxq/internal/cli/fluxsched"
	"github.com/fluxq/fluxq/internal/cli/help"
	"github.com/fluxq/fluxq/internal/fluid"
)

// fake is an instance with two named queues, two jobs, a reservation and
// three hosts, one drained, one spare.
type fake struct{ err error }

const (
	job1 = fluid.ID(16760438784) // ƒSY4dXV
	job2 = fluid.ID(33554432)
)

func (f fake) Queues(context.Context) ([]complete.Candidate, error) {
	return []complete.Candidate{{Value: "batch", Desc: "default"}, {Value: "debug"}}, f.err
}

func (f fake) Jobs(context.Context) ([]complete.Job, error) {
	return []complete.Job{{ID: job1, State: "held", Name: "sleep"}, {ID: job2, State: "RUN", Name: "hostname"}}, f.err
}

func (f fake) Reservations(context.Context) ([]complete.Candidate, error) {
	return []complete.Candidate{{Value: "r1", Desc: "node1"}}, f.err
}

func (f fake) Hosts(context.Context) ([]complete.Host, error) {
	return []complete.Host{{Name: "node0"}, {Name: "node1", Drained: true}, {Name: "spare0", Spare: true}}, f.err
}

func (f fake) Properties(context.Context) ([]complete.Candidate, error) {
	return []complete.Candidate{{Value: "gpu"}, {Value: "ssd"}}, f.err
}

func id(i fluid.ID) string    { s, _ := i.Encode(fluid.F58); return s }
func ascii(i fluid.ID) string { s, _ := i.Encode(fluid.F58Plain); return s }

func TestComplete(t *testing.T) {
	apps := map[string]*cli.App{"fluxq": fluxq.New(), "fluxres": fluxres.New(), "fluxsched": fluxsched.New()}
	files := []string{complete.FilesLine}
	tests := []struct {
		name string
		line string // the words; a trailing space starts a new, empty word
		want []string
	}{
		{"subcommands", "fluxq qu", []string{"queue"}},
		{"nested subcommands", "fluxq queue st", []string{"status", "start", "stop"}},
		{"hidden commands are not offered", "fluxq __", nil},
		{"long options", "fluxq submit --que", []string{"--queue"}},
		{"short options with a lone dash", "fluxq urgency -", []string{"--verbose", "-v"}},
		{"the application's options", "fluxq --st", []string{"--state-dir"}},
		{"queue names for -q", "fluxq submit -q ", []string{"batch", "debug"}},
		{"queue names for --queue=", "fluxq submit --queue=d", []string{"--queue=debug"}},
		{"queue lists for jobs -q", "fluxq jobs -q batch,", []string{"batch,debug"}},
		{"queue names for a queue verb", "fluxq queue start ", []string{"batch", "debug"}},
		{"a queue verb takes one queue", "fluxq queue start batch ", nil},
		{"options after a queue", "fluxq queue stop batch --m", []string{"--message"}},
		{"job ids for cancel", "fluxq cancel ", []string{id(job1), id(job2)}},
		{"cancel leaves out jobs already named", "fluxq cancel " + id(job2) + " ", []string{id(job1)}},
		{"job ids in ASCII when typed so", "fluxq wait f", []string{ascii(job1), ascii(job2)}},
		{"job ids in decimal when typed so", "fluxq info 1", []string{"16760438784"}},
		{"after an option with a value", "fluxq cancel -m note ", []string{id(job1), id(job2)}},
		{"urgency values", "fluxq urgency " + id(job1) + " h", []string{"hold"}},
		{"info keys", "fluxq info " + id(job1) + " ", []string{"jobspec", "R", "eventlog"}},
		{"attach takes one job", "fluxq attach " + id(job1) + " ", nil},
		{"dependency types", "fluxq submit --dependency afterok", []string{"afterok:"}},
		{"dependency ids", "fluxq submit --dependency afterany:", []string{"afterany:" + id(job1), "afterany:" + id(job2)}},
		{"the job's command is files", "fluxq submit -n2 sleep ", files},
		{"no fluxq option after the job's command", "fluxq submit sleep --qu", files},
		{"after -- in submit", "fluxq run -- ", files},
		{"bulksubmit: queue names", "fluxq bulksubmit -q ", []string{"batch", "debug"}},
		{"bulksubmit: no fluxq option after the command", "fluxq bulksubmit echo --qu", files},
		{"a short option as typed", "fluxq submit -q", []string{"-q"}},
		{"a short option's attached value", "fluxq submit -qbatch -n2 sleep ", files},
		{"colour", "fluxq --color a", []string{"auto", "always"}},
		{"global options anywhere", "fluxq cancel --color ", []string{"auto", "always", "never"}},
		{"state directory is a path", "fluxres --state-dir ", files},
		{"--input is a file", "fluxq run --input ", files},
		{"alloc's options", "fluxq alloc --b", []string{"--begin-time", "--bg"}},
		{"run's --pty", "fluxq run --pt", []string{"--pty"}},
		{"--target in fluxq", "fluxq submit --target ", []string{"r1", "default"}},
		{"shells", "fluxq completion ", []string{"bash", "zsh", "fish"}},
		{"reservation ids", "fluxres reservation extend ", []string{"r1"}},
		{"reservation ids after options", "fluxres reservation release --as-scheduler ", []string{"r1"}},
		{"reservation target list", "fluxres reservation target r1,", []string{"r1,default"}},
		{"reservation target options", "fluxres reservation target r1 -q ", []string{"batch", "debug"}},
		{"reservation target command", "fluxres reservation target r1 ", files},
		{"create --target is a job", "fluxres reservation create --target ", []string{id(job1), id(job2)}},
		{"inheritance", "fluxres reservation create --inherit child", []string{"child", "child-default"}},
		{"drain hosts", "fluxres drain ", []string{"node0"}},
		{"undrain hosts", "fluxres undrain ", []string{"node1"}},
		{"nodelist", "fluxres reservation create --nodelist node0,", []string{"node0,node1", "node0,spare0"}},
		{"spare hosts", "fluxres node remove ", []string{"spare0"}},
		{"policies", "fluxsched --policy ", []string{"fcfs", "easy", "hybrid", "conservative"}},
		{"policies of run", "fluxsched run --policy e", []string{"easy"}},
		{"policies of sim", "fluxsched sim --policy c", []string{"conservative"}},
		{"policies to compare", "fluxsched sim --compare fcfs,", []string{"fcfs,easy", "fcfs,hybrid", "fcfs,conservative"}},
		{"modes", "fluxsched run --mode l", []string{"limited="}},
		{"config file", "fluxsched config check ", files},
		{"unknown command", "fluxq nosuch ", nil},
		{"cancel states only", "fluxq cancel -S ", []string{"depend", "priority", "sched", "run", "pending", "running", "active"}},
		{"cancel state lists", "fluxq cancel -S pending,r", []string{"pending,run", "pending,running"}},
		{"jobs -f keeps every state", "fluxq jobs -f comp", []string{"completed"}},
		{"requires: properties and host:", "fluxq submit --requires ", []string{"gpu", "ssd", "host:"}},
		{"requires: a negated property", "fluxq run --requires ^s", []string{"^ssd"}},
		{"requires: host names", "fluxq submit --requires host:", []string{"host:node0", "host:node1"}},
		{"requires: a list", "fluxq submit --requires gpu,", []string{"gpu,ssd", "gpu,host:"}},
		{"negative numbers are arguments", "fluxq urgency -1 ", []string{"hold", "default", "expedite"}},
		{"update keys", "fluxq update 1 ", []string{"duration=", "queue=", "name=", "urgency=", "attributes.user."}},
		{"update keys repeat", "fluxq update 1 name=x u", []string{"urgency="}},
		{"update urgency", "fluxq update 1 urgency=h", []string{"urgency=hold"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			words := strings.Split(tt.line, " ")
			got := run(apps[words[0]], words[1:], fake{})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// BIN help offers the commands, then the help topics (the help command
// is installed as the binaries run, by exitcode.Run).
func TestHelpTopics(t *testing.T) {
	fq, fr := fluxq.New(), fluxres.New()
	help.Install(fq)
	help.Install(fr)
	tests := []struct {
		app  *cli.App
		line string
		want []string
	}{
		{fq, "help ", []string{"submit", "run", "bulksubmit", "alloc", "jobs", "info", "eventlog", "attach", "output", "wait", "cancel", "purge", "urgency", "update", "resubmit", "stats", "top", "queue", "completion", "help",
			"constraints", "durations", "formats", "ids", "jobspec", "queues", "states"}},
		{fq, "help du", []string{"durations"}},
		{fq, "help s", []string{"submit", "stats", "states"}},
		{fr, "help con", []string{"constraints"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, run(tt.app, strings.Split(tt.line, " "), fake{})); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tt.app.Name, tt.line, diff)
		}
	}
}

// run completes words and returns the lines __complete would print,
// without descriptions.
func run(app *cli.App, words []string, src complete.Source) []string {
	var b bytes.Buffer
	complete.Write(&b, complete.Complete(context.Background(), app, words, src, func(string) string { return "" }))
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if v, _, _ := strings.Cut(l, "\t"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// An instance that cannot be reached offers nothing, and says nothing.
func TestUnreachable(t *testing.T) {
	for _, line := range []string{"cancel ", "submit -q ", "queue start b"} {
		if got := run(fluxq.New(), strings.Split(line, " "), fake{err: errors.New("down")}); got != nil {
			t.Errorf("%q: got %q", line, got)
		}
	}
}

func TestDescriptions(t *testing.T) {
	var b bytes.Buffer
	complete.Write(&b, complete.Complete(context.Background(), fluxq.New(), []string{"cancel", ""}, fake{}, func(string) string { return "" }))
	want := id(job1) + "\theld sleep\n" + id(job2) + "\tRUN hostname\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestScript(t *testing.T) {
	for _, sh := range complete.Shells {
		s, err := complete.Script(sh, "fluxres")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s, "fluxres __complete") && !strings.Contains(s, "$prog __complete") {
			t.Errorf("%s script does not call __complete:\n%s", sh, s)
		}
		if strings.Contains(s, "{{") {
			t.Errorf("%s script has a template left:\n%s", sh, s)
		}
	}
	if _, err := complete.Script("tcsh", "fluxq"); err == nil {
		t.Error("tcsh: no error")
	}
}

// Completion must not create an instance where there is none: the state
// directory named by --state-dir (in either spelling) stays absent.
func TestLiveNoInstance(t *testing.T) {
	for _, words := range [][]string{
		{"--state-dir", "DIR", "cancel", ""},
		{"--state-dir=DIR", "queue", "start", ""},
		{"cancel", "--state-dir", "DIR", ""},
	} {
		dir := filepath.Join(t.TempDir(), "state")
		for i, w := range words {
			words[i] = strings.ReplaceAll(w, "DIR", dir)
		}
		src := complete.Live(fluxq.New(), words)
		if js, err := src.Jobs(context.Background()); err == nil {
			t.Errorf("%q: jobs %v, no error", words, js)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: state directory: %v", words, err)
		}
		src.Close()
	}
}

// Every command and option the value tables name exists, so that a
// renamed one is noticed here rather than by a user whose TAB stops
// working.
func TestTablesNameRealCommands(t *testing.T) {
	apps := map[string]*cli.App{"fluxq": fluxq.New(), "fluxres": fluxres.New(), "fluxsched": fluxsched.New()}
	// resolve returns the flags in scope of the command key names.
	resolve := func(key string) ([]cli.Flag, bool) {
		words := strings.Fields(key)
		app := apps[words[0]]
		if app == nil {
			return nil, false
		}
		flags := slices.Clone(app.Flags)
		cmds := app.Commands
		for _, w := range words[1:] {
			if w == "help" {
				return flags, true // urfave/cli's own
			}
			i := slices.IndexFunc(cmds, func(c *cli.Command) bool { return c.Name == w })
			if i < 0 {
				return nil, false
			}
			flags = append(flags, cmds[i].Flags...)
			cmds = cmds[i].Subcommands
		}
		return flags, true
	}
	commands, options := complete.TableKeys()
	for _, k := range commands {
		if _, ok := resolve(k); !ok {
			t.Errorf("%q: no such command", k)
		}
	}
	for _, k := range options {
		cmd, opt, _ := strings.Cut(k, "--")
		cmd = strings.TrimSpace(cmd)
		if cmd == "" || !strings.Contains(cmd, " ") && apps[cmd] != nil {
			continue // an option of any command (of that binary)
		}
		flags, ok := resolve(cmd)
		if !ok {
			t.Errorf("%q: no such command", k)
			continue
		}
		if !slices.ContainsFunc(flags, func(f cli.Flag) bool { return f.Names()[0] == opt }) {
			t.Errorf("%q: %s has no option --%s", k, cmd, opt)
		}
	}
}
