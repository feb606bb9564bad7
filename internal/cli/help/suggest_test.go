package help

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/suggest"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"submit", "submit", 0},
		{"sumbit", "submit", 1}, // a swap of neighbours is one edit
		{"filer", "filter", 1},
		{"lst", "list", 1},
		{"qeueu", "queue", 2},
		{"ca", "abc", 3}, // optimal string alignment: no edit twice
		{"kitten", "sitting", 3},
		{"ƒNH", "fNH", 1}, // runes, not bytes
	}
	for _, tt := range tests {
		if got := suggest.Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := suggest.Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	commands := []string{"submit", "run", "jobs", "info", "eventlog", "attach", "output", "wait",
		"cancel", "urgency", "stats", "queue", "help", "h"}
	queue := []string{"list", "status", "enable", "disable", "start", "stop", "drain", "idle"}
	tests := []struct {
		name, typed string
		candidates  []string
		want        []string
	}{
		{"swap", "sumbit", commands, []string{"submit"}},
		{"the right case first", "SUBMIT", []string{"submit", "submix"}, []string{"submit"}},
		{"the name itself suggests nothing", "submit", []string{"submit"}, nil},
		{"upper-case typo", "Sumbit", commands, []string{"submit"}},
		{"missing letter", "jbs", commands, []string{"jobs"}},
		{"two edits in a long word", "evntlg", commands, []string{"eventlog"}},
		{"three edits are too many", "evtlg", commands, nil},
		{"ties are all kept, in order", "stup", []string{"stop", "start", "step"}, []string{"stop", "step"}},
		{"one edit in a short word", "stp", queue, []string{"stop"}},
		{"the closest wins", "stat", queue, []string{"start"}},
		{"prefix when nothing is close", "dis", queue, []string{"disable"}},
		{"prefix of several", "st", queue, []string{"status", "start", "stop"}},
		{"one letter suggests nothing", "x", []string{"a", "b", "xy"}, nil},
		{"short words allow one edit", "ls", []string{"list", "lz"}, []string{"lz"}},
		{"nothing near", "frobnicate", commands, nil},
		{"empty", "", commands, nil},
		{"duplicates once", "jbos", []string{"jobs", "jobs"}, []string{"jobs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, suggest.Names(tt.typed, tt.candidates)); diff != "" {
				t.Errorf("Suggest(%q) (-want +got):\n%s", tt.typed, diff)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	q := func(s string) string { return "'" + s + "'" }
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"submit"}, "Did you mean 'submit'?"},
		{[]string{"start", "stop"}, "Did you mean 'start' or 'stop'?"},
		{[]string{"a", "b", "c"}, "Did you mean 'a', 'b' or 'c'?"},
	}
	for _, tt := range tests {
		if got := DidYouMean(tt.in, q); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name, in, text, examples string
	}{
		{"no examples", "Does a thing.\nTwo lines.", "Does a thing.\nTwo lines.", ""},
		{"examples dedented", "Does a thing.\n\nEXAMPLES:\n  # A comment\n  $ fluxq x\n\n  $ fluxq y\n",
			"Does a thing.", "# A comment\n$ fluxq x\n\n$ fluxq y"},
		{"indented source", "\n\t\tText\n\t\tEXAMPLES:\n\t\t\t$ a", "Text", "$ a"},
		{"only examples", "EXAMPLES:\n    $ a\n      continued", "", "$ a\n  continued"},
		{"blank lines lose their spaces", "A\n   \nB", "A\n\nB", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, ex := Split(tt.in)
			if text != tt.text || ex != tt.examples {
				t.Errorf("Split(%q) = %q, %q; want %q, %q", tt.in, text, ex, tt.text, tt.examples)
			}
		})
	}
}
