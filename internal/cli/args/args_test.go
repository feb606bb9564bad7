package args

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"
)

func testApp() (*cli.App, *cli.Command) {
	submit := &cli.Command{Name: "submit", Flags: []cli.Flag{
		&cli.IntFlag{Name: "ntasks", Aliases: []string{"n"}},
		&cli.BoolFlag{Name: "wait"},
		&cli.StringFlag{Name: "queue", Aliases: []string{"q"}},
	}}
	app := &cli.App{
		Name:  "fluxq",
		Flags: []cli.Flag{&cli.StringFlag{Name: "state-dir"}, &cli.StringFlag{Name: "color"}},
		Commands: []*cli.Command{
			submit,
			{Name: "jobs", Flags: []cli.Flag{
				&cli.BoolFlag{Name: "a"},
				&cli.StringFlag{Name: "format", Aliases: []string{"o"}},
				&cli.IntFlag{Name: "count", Aliases: []string{"c"}},
			}},
			{Name: "urgency", Flags: []cli.Flag{&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}}}},
			{Name: "reservation", Subcommands: []*cli.Command{
				{Name: "extend", Flags: []cli.Flag{&cli.IntFlag{Name: "N"}, &cli.StringFlag{Name: "time"}}},
			}},
		},
	}
	return app, submit
}

func TestReorder(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		// docs/cli.md: options may come before or after positional arguments.
		{"options after the argument", "fluxq jobs ƒ2 -a -o x", "fluxq jobs -a -o x -- ƒ2"},
		{"options before stay", "fluxq jobs -a ƒ2", "fluxq jobs -a -- ƒ2"},
		{"value taken with its option", "fluxq jobs ƒ2 -o {{.id}} ƒ3", "fluxq jobs -o {{.id}} -- ƒ2 ƒ3"},
		{"value after =", "fluxq jobs ƒ2 --format={{.id}}", "fluxq jobs --format={{.id}} -- ƒ2"},
		{"no positional arguments", "fluxq jobs -a", "fluxq jobs -a"},
		{"-- ends the options", "fluxq jobs ƒ2 -- -a", "fluxq jobs -- ƒ2 -a"},
		{"attached short value", "fluxq jobs ƒ2 -c3", "fluxq jobs -c 3 -- ƒ2"},
		{"negative number is an argument", "fluxq urgency ƒ2 -1 -v", "fluxq urgency -v -- ƒ2 -1"},
		{"unknown option stays an option", "fluxq jobs ƒ2 --nosuch", "fluxq jobs --nosuch -- ƒ2"},
		{"help after the argument", "fluxq jobs ƒ2 --help", "fluxq jobs --help -- ƒ2"},
		// The application's own options may follow the command name.
		{"global option hoisted", "fluxq jobs ƒ2 --color always -a", "fluxq --color always jobs -a -- ƒ2"},
		{"global option before stays", "fluxq --state-dir /s jobs ƒ2 -a", "fluxq --state-dir /s jobs -a -- ƒ2"},
		// docs/cli.md's example: `extend r1 -N 2` is `extend -N 2 r1`.
		{"subcommand", "fluxq reservation extend r1 -N 2", "fluxq reservation extend -N 2 -- r1"},
		// docs/cli.md: in submit, everything from COMMAND on is the job's.
		{"submit keeps the job's options", "fluxq submit -n 2 echo -n 3", "fluxq submit -n 2 echo -n 3"},
		{"submit spells -n2", "fluxq submit -n2 --wait echo -n3", "fluxq submit -n 2 --wait echo -n3"},
		{"submit after --", "fluxq submit -q b -- -x", "fluxq submit -q b -- -x"},
		{"unknown command untouched", "fluxq nosuch -a x", "fluxq nosuch -a x"},
		{"no command", "fluxq --color never", "fluxq --color never"},
		{"just the program", "fluxq", "fluxq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app, submit := testApp()
			got := Reorder(app, strings.Fields(tt.in), submit)
			if diff := cmp.Diff(strings.Fields(tt.want), got); diff != "" {
				t.Errorf("Reorder(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// The rewritten command line parses to what the user meant.
func TestReorderParses(t *testing.T) {
	app, submit := testApp()
	var gotArgs []string
	var gotFormat string
	var gotA bool
	app.Commands[1].Action = func(c *cli.Context) error {
		gotArgs, gotFormat, gotA = c.Args().Slice(), c.String("format"), c.Bool("a")
		return nil
	}
	argv := strings.Fields("fluxq jobs ƒ2 -o x ƒ3 -a")
	if err := app.Run(Reorder(app, argv, submit)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ƒ2", "ƒ3"}, gotArgs); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if gotFormat != "x" || !gotA {
		t.Errorf("format %q, a %v; want x, true", gotFormat, gotA)
	}
}
