package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/fluid"
)

// A command's Printer comes from its --json, -o and -n and the global
// --color (NO_COLOR off a terminal); --json with -o, or a bad --color, is
// a usage error.
func TestFromContext(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		noColor string
		want    Printer
		code    int
	}{
		{name: "defaults", args: nil, want: Printer{}},
		{name: "json", args: []string{"cmd", "--json"}, want: Printer{JSON: true}},
		{name: "format, no header", args: []string{"cmd", "-o", "{{.id}}", "-n"}, want: Printer{Format: "{{.id}}", NoHeader: true}},
		{name: "colour always", args: []string{"--color", "always", "cmd"}, noColor: "1", want: Printer{Color: true}},
		{name: "colour never", args: []string{"--color", "never", "cmd"}, want: Printer{}},
		{name: "json and format", args: []string{"cmd", "--json", "-o", "x"}, code: exitcode.Usage},
		{name: "bad colour", args: []string{"--color", "pink", "cmd"}, code: exitcode.Usage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			var out bytes.Buffer
			var got *Printer
			var err error
			app := &cli.App{
				Name:   "fluxq",
				Writer: &out,
				Flags:  []cli.Flag{&cli.StringFlag{Name: FlagColor, Value: ColorAuto}},
				Commands: []*cli.Command{{
					Name:   "cmd",
					Flags:  ListFlags("default", "long"),
					Action: func(c *cli.Context) error { got, err = FromContext(c); return nil },
				}},
			}
			args := tc.args
			if args == nil {
				args = []string{"cmd"}
			}
			if rerr := app.Run(append([]string{"fluxq"}, args...)); rerr != nil {
				t.Fatal(rerr)
			}
			if code := exitcode.Code(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			if err != nil {
				return
			}
			if got.Out != &out {
				t.Error("the Printer does not write to the app's Writer")
			}
			got.Out = nil
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("Printer (-want +got):\n%s", diff)
			}
		})
	}
}

// -o's help names the presets, and says the table is the default.
func TestFormatFlagUsage(t *testing.T) {
	f := FormatFlag("default", "long").(*cli.StringFlag)
	if !strings.HasSuffix(f.Usage, "or a named format: default long") || f.DefaultText != "default" {
		t.Errorf("usage %q, default %q", f.Usage, f.DefaultText)
	}
	f = FormatFlag().(*cli.StringFlag)
	if strings.Contains(f.Usage, "named format") || f.DefaultText != "the table" {
		t.Errorf("without presets: usage %q, default %q", f.Usage, f.DefaultText)
	}
}

// Job IDs print as F58, in ASCII when FLUXQ_F58_FORCE_ASCII is set (and
// not 0).
func TestJobID(t *testing.T) {
	id := fluid.ID(16760438784)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "FLUXQ_F58_FORCE_ASCII" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct{ env, want string }{{"", "ƒSY4dXV"}, {"0", "ƒSY4dXV"}, {"1", "fSY4dXV"}} {
		if got := JobID(id, env(tc.env)); got != tc.want {
			t.Errorf("FLUXQ_F58_FORCE_ASCII=%q: %q, want %q", tc.env, got, tc.want)
		}
	}
}

// One object's keys and values, the keys aligned, with no header.
func TestKeyValues(t *testing.T) {
	var b bytes.Buffer
	if err := KeyValues(&b, [][2]string{{"id", "ƒSY4dXV"}, {"state", "RUN"}, {"nodelist", "node[0-1]"}}); err != nil {
		t.Fatal(err)
	}
	want := "id       ƒSY4dXV\nstate    RUN\nnodelist node[0-1]\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// The fsd and time template helpers take any number a --json field
// holds; anything else is an error.
func TestTemplateNumbers(t *testing.T) {
	ts := float64(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Unix())
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "0s"}, {int64(90), "1.5m"}, {uint64(7200), "2h"}, {2.5, "2.500s"}, {3, "3.000s"}, {json.Number("60"), "1m"}, {"0.5", "0.500s"},
	} {
		got, err := funcs["fsd"].(func(any) (string, error))(tc.v)
		if err != nil || got != tc.want {
			t.Errorf("fsd %#v = %q, %v; want %q", tc.v, got, err, tc.want)
		}
	}
	if _, err := funcs["fsd"].(func(any) (string, error))(true); err == nil {
		t.Error("fsd of a bool: no error")
	}
	timef := funcs["time"].(func(any, ...string) (string, error))
	if got, err := timef(ts, "2006-01-02"); err != nil || got != time.Unix(int64(ts), 0).Format("2006-01-02") {
		t.Errorf("time = %q, %v", got, err)
	}
	if got, err := timef(int64(0)); err != nil || got != "" {
		t.Errorf("time of 0 = %q, %v; want empty", got, err)
	}
}
