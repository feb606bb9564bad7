package bulk

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		argv    []string
		command []string
		sources []Source
		err     string
	}{
		{argv: []string{"echo", "{}"}, command: []string{"echo", "{}"}},
		{argv: []string{"echo", "{}", ":::", "1", "2"}, command: []string{"echo", "{}"},
			sources: []Source{{Delim: ":::", Args: []string{"1", "2"}}}},
		{argv: []string{":::", "a"}, command: []string{}, sources: []Source{{Delim: ":::", Args: []string{"a"}}}},
		{argv: []string{"e", ":::", "1", "2", ":::+", "3", "::::", "f", "::::+", "-"}, command: []string{"e"},
			sources: []Source{
				{Delim: ":::", Args: []string{"1", "2"}},
				{Delim: ":::+", Args: []string{"3"}, Linked: true},
				{Delim: "::::", File: "f"},
				{Delim: "::::+", File: "-", Linked: true},
			}},
		{argv: []string{"e", ":::"}, err: "::: (input list 1) has no inputs"},
		{argv: []string{"e", ":::", "1", ":::", ":::", "2"}, err: "::: (input list 2) has no inputs"},
		{argv: []string{"e", "::::", "a", "b"}, err: ":::: (input list 1) takes one FILE, not 2 arguments"},
		{argv: []string{"e", "::::"}, err: "takes one FILE, not 0"},
		{argv: []string{"e", "::::", ""}, err: "the file name is empty"},
		{argv: []string{"e", ":::+", "1"}, err: ":::+ links its inputs to the list before it, and there is none (use :::)"},
		{argv: []string{"e", ":::x", "1"}, err: `unknown input delimiter ":::x"`},
	} {
		cmd, src, err := Split(tc.argv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Split(%q) = %v, want error %q", tc.argv, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Split(%q): %v", tc.argv, err)
			continue
		}
		if !reflect.DeepEqual(cmd, tc.command) || !reflect.DeepEqual(src, tc.sources) {
			t.Errorf("Split(%q) = %q, %+v; want %q, %+v", tc.argv, cmd, src, tc.command, tc.sources)
		}
	}
}

func TestCombine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lists  [][]string
		linked []bool
		want   [][]string
		err    string
	}{
		{name: "one", lists: [][]string{{"1", "2"}}, linked: []bool{false}, want: [][]string{{"1"}, {"2"}}},
		// flux-bulksubmit(1): ::: 1 2 ::: 3 4 gives (1,3) (1,4) (2,3) (2,4).
		{name: "product", lists: [][]string{{"1", "2"}, {"3", "4"}}, linked: []bool{false, false},
			want: [][]string{{"1", "3"}, {"1", "4"}, {"2", "3"}, {"2", "4"}}},
		{name: "linked", lists: [][]string{{"1", "2"}, {"3", "4"}}, linked: []bool{false, true},
			want: [][]string{{"1", "3"}, {"2", "4"}}},
		{name: "linked cycles", lists: [][]string{{"a", "b", "c"}, {"x"}}, linked: []bool{false, true},
			want: [][]string{{"a", "x"}, {"b", "x"}, {"c", "x"}}},
		{name: "linked longer", lists: [][]string{{"a"}, {"x", "y"}}, linked: []bool{false, true},
			want: [][]string{{"a", "x"}}},
		// A linked list in the middle keeps its place among the inputs.
		{name: "linked middle", lists: [][]string{{"1", "2"}, {"L1", "L2", "L3"}, {"a", "b"}}, linked: []bool{false, true, false},
			want: [][]string{{"1", "L1", "a"}, {"1", "L2", "b"}, {"2", "L3", "a"}, {"2", "L1", "b"}}},
		{name: "empty", lists: [][]string{{}}, linked: []bool{false}, err: "input list 1 is empty"},
		{name: "too many", lists: [][]string{make([]string, 1001), make([]string, 1000)}, linked: []bool{false, false},
			err: "more than 1000000 jobs"},
	} {
		got, err := Combine(tc.lists, tc.linked)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestInputsAndSep(t *testing.T) {
	if got := Inputs("a\n\nb c\n", "\n"); !reflect.DeepEqual(got, []string{"a", "b c"}) {
		t.Errorf("newline: %q", got)
	}
	if got := Inputs(" a\tb\n c ", ""); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("white space: %q", got)
	}
	for _, tc := range []struct{ in, want, err string }{
		{in: `\n`, want: "\n"}, {in: "none", want: ""}, {in: "NONE", want: ""}, {in: ",", want: ","},
		{in: `a\tb\\`, want: "a\tb\\"}, {in: `\0`, want: "\x00"},
		{in: `\q`, err: `unknown escape \q`}, {in: `x\`, err: "lone backslash"}, {in: "", err: "empty"},
	} {
		got, err := ParseSep(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSep(%q) err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSep(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	p, err := NewParser([]string{"out=results/{x./%}.out", "tag={x.%}-{seq1}"})
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Inputs: []string{"data/run.1.csv", "B"}, Seq: 4}
	if tm, _ := p.Parse("a{cc}b"); tm != nil {
		if got, _ := p.Expand(tm, Env{NoCC: true}); got != "ab" {
			t.Errorf("{cc} without --cc = %q, want it empty, as Flux", got)
		}
	}
	for _, tc := range []struct{ tmpl, want, err string }{
		{tmpl: "plain", want: "plain"},
		{tmpl: "{}", want: "data/run.1.csv"},
		{tmpl: "{} {}", want: "data/run.1.csv B"},
		{tmpl: "{1}{0}", want: "Bdata/run.1.csv"},
		{tmpl: "{.%}", want: "data/run.1"},
		{tmpl: "{0./}", want: "run.1.csv"},
		{tmpl: "{0.//}", want: "data"},
		{tmpl: "{./%}", want: "run.1"},
		{tmpl: "{seq}-{seq1}", want: "4-5"},
		{tmpl: "{seq:03}|{seq1:3}|{seq:03d}", want: "004|  5|004"},
		{tmpl: "{cc}:{}", want: "{cc}:data/run.1.csv"},
		{tmpl: "o.{{id}}.{1}", want: "o.{{id}}.B"},
		{tmpl: "{.out}", want: "results/run.1.out"},
		{tmpl: "{1.tag}", want: "B-5"},
		{tmpl: "{2}", err: "there are only 2 input lists ({0} to {1})"},
		{tmpl: "{} {0}", err: "mixes {} and numbered fields"},
		{tmpl: "{foo}", err: `unknown name "foo"`},
		{tmpl: "{.nope}", err: "unknown attribute .nope"},
		{tmpl: "{0!r}", err: "conversions"},
		{tmpl: "{0[1]}", err: "indexing"},
		{tmpl: "{0:>5}", err: "applies only to {seq}"},
		{tmpl: "{seq:x}", err: "want a width"},
		{tmpl: "{seq:0999}", err: "at most 64"},
		{tmpl: "{seq.%}", err: "takes no attribute"},
		{tmpl: "{0.}", err: "attribute after '.' is missing"},
		{tmpl: "{0.%.%}", err: "one attribute per field"},
		{tmpl: "a}b", err: "single '}'"},
		{tmpl: "a{b", err: "'{' not closed"},
		{tmpl: "{0{1}}", err: "fields do not nest"},
		{tmpl: "{99999999999999999999}", err: "at most 65536 input lists"},
	} {
		tm, err := p.Parse(tc.tmpl)
		var got string
		if err == nil {
			got, err = p.Expand(tm, env)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q, %v; want error %q", tc.tmpl, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q = %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
	}
}

func TestPathAttributes(t *testing.T) {
	// Python's os.path.splitext, basename and dirname.
	for _, tc := range []struct{ in, noExt, base, dir string }{
		{"a/b.c", "a/b", "b.c", "a"},
		{"b.tar.gz", "b.tar", "b.tar.gz", ""},
		{".bashrc", ".bashrc", ".bashrc", ""},
		{"x/..a", "x/..a", "..a", "x"},
		{"a.b/c", "a.b/c", "c", "a.b"},
		{"a/b/", "a/b/", "", "a/b"},
		{"/b", "/b", "b", "/"},
		{"a//b", "a//b", "b", "a"},
		{"//b", "//b", "b", "//"},
	} {
		if got := splitExt(tc.in); got != tc.noExt {
			t.Errorf("splitExt(%q) = %q, want %q", tc.in, got, tc.noExt)
		}
		if got := baseName(tc.in); got != tc.base {
			t.Errorf("baseName(%q) = %q, want %q", tc.in, got, tc.base)
		}
		if got := dirName(tc.in); got != tc.dir {
			t.Errorf("dirName(%q) = %q, want %q", tc.in, got, tc.dir)
		}
	}
}

func TestDefines(t *testing.T) {
	for _, tc := range []struct {
		defs []string
		err  string
	}{
		{defs: []string{"a={x}"}},
		{defs: []string{"p2=2**int(x)"}, err: "never uses the input {x} (fluxq evaluates no Python"},
		{defs: []string{"noequals"}, err: "want NAME=TEMPLATE"},
		{defs: []string{"1a={x}"}, err: "NAME must be letters"},
		{defs: []string{"a={x}", "a={x.%}"}, err: "given twice"},
		{defs: []string{"a={}"}, err: "in --define the input is {x}"},
		{defs: []string{"a={0}"}, err: "in --define the input is {x}"},
		{defs: []string{"a={x}", "b={x.a}"}, err: "unknown attribute .a (in --define"},
	} {
		_, err := NewParser(tc.defs)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("NewParser(%q) = %v, want %q", tc.defs, err, tc.err)
		}
	}
}

// FuzzTemplate: no template or define panics, and an accepted one expands
// without a panic for any inputs.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{}", "{0.%}{1./}", "{seq:03}", "{{id}}", "{.d}", "a}", "{", "{0!r}", "{x}"} {
		f.Add(s, "d={x./%}", "a/b.c")
	}
	f.Fuzz(func(t *testing.T, tmpl, define, input string) {
		p, err := NewParser([]string{define})
		if err != nil {
			p, _ = NewParser(nil)
		}
		tm, err := p.Parse(tmpl)
		if err != nil {
			return
		}
		if tm.String() != tmpl {
			t.Fatalf("String() = %q, want %q", tm.String(), tmpl)
		}
		out, err := p.Expand(tm, Env{Inputs: []string{input, input}, Seq: 3})
		if err == nil && !tm.HasFields() && out != tmpl {
			t.Fatalf("no fields, yet %q became %q", tmpl, out)
		}
	})
}

// FuzzSplit: any command line splits or is refused; what splits combines
// without a panic.
func FuzzSplit(f *testing.F) {
	f.Add("echo {} ::: 1 2 :::+ a ::: x y")
	f.Add(":::: f ::::+ - :::")
	f.Fuzz(func(t *testing.T, line string) {
		_, src, err := Split(strings.Fields(line))
		if err != nil {
			return
		}
		lists := make([][]string, len(src))
		linked := make([]bool, len(src))
		for i, s := range src {
			lists[i] = s.Args
			if s.IsFile() {
				lists[i] = []string{s.File}
			}
			linked[i] = s.Linked
		}
		if len(lists) == 0 {
			return
		}
		combos, err := Combine(lists, linked)
		if err != nil {
			return
		}
		for _, c := range combos {
			if len(c) != len(lists) {
				t.Fatalf("a combination of %d inputs from %d lists", len(c), len(lists))
			}
		}
	})
}
