package constraint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rfcNodes are the targets the RFC 31 examples are matched against.
var rfcNodes = []Node{
	{Rank: 0, Hostname: "host0", Properties: []string{"ssd"}},
	{Rank: 1, Hostname: "host1", Properties: []string{"ssd", "slowgpu"}},
	{Rank: 2, Hostname: "host2", Properties: []string{"huge", "foo"}},
	{Rank: 3, Hostname: "host3", Properties: []string{"foo", "bar", "slowgpu"}},
}

// matchingRanks returns the ranks of the targets in nodes that c matches.
func matchingRanks(c Constraint, nodes []Node) []uint {
	out := []uint{}
	for _, n := range nodes {
		if c.Match(n) {
			out = append(out, n.Rank)
		}
	}
	return out
}

type rfcExample struct {
	file string
	want []uint // ranks of rfcNodes matched
}

func TestRFC31Examples(t *testing.T) {
	tests := []rfcExample{
		// RFC 31: all execution targets have property ssd.
		{"spec31-ex1-ssd.json", []uint{0, 1}},
		// RFC 31: no execution targets with property slowgpu, via '^'.
		{"spec31-ex2-not-slowgpu-caret.json", []uint{0, 2}},
		// RFC 31: ... or, the same, via "not".
		{"spec31-ex3-not-slowgpu.json", []uint{0, 2}},
		// RFC 31: property ssd or huge.
		{"spec31-ex4-ssd-or-huge.json", []uint{0, 1, 2}},
		// RFC 31: only hostnames host0 and host1.
		{"spec31-ex5-hostlist.json", []uint{0, 1}},
		// RFC 31: exclude hosts host0 and host1.
		{"spec31-ex6-not-hostlist.json", []uint{2, 3}},
		// RFC 31: hosts host[0-1] and property ssd.
		{"spec31-ex7-hostlist-and-ssd.json", []uint{0, 1}},
		// RFC 31: only those on rank 0.
		{"spec31-ex8-rank0.json", []uint{0}},
		// RFC 31 "not": resources that do not have both foo and bar.
		{"spec31-op-not-foo-bar.json", []uint{0, 1, 2}},
		// RFC 31 "or": resources that have either foo or bar.
		{"spec31-op-or-foo-bar.json", []uint{2, 3}},
		// RFC 31: { "or": [] } and { "and": [] } match anything.
		{"spec31-empty-or.json", []uint{0, 1, 2, 3}},
		{"spec31-empty-and.json", []uint{0, 1, 2, 3}},
		// RFC 31: { "not": [] } matches nothing.
		{"spec31-empty-not.json", []uint{}},
	}
	files, err := filepath.Glob("testdata/rfc/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !slices.ContainsFunc(tests, func(tt rfcExample) bool { return tt.file == filepath.Base(f) }) {
			t.Errorf("%s has no expectation in TestRFC31Examples", f)
		}
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/rfc", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseJSON(data)
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			if diff := cmp.Diff(tt.want, matchingRanks(c, rfcNodes)); diff != "" {
				t.Errorf("matched ranks (-want +got):\n%s", diff)
			}
			// The canonical form is the RFC's object without whitespace.
			got, _ := c.MarshalJSON()
			want := strings.Join(strings.Fields(string(data)), "")
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("MarshalJSON (-want +got):\n%s", diff)
			}
			// Its query form selects the same targets.
			q, err := ParseQuery(c.String())
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", c.String(), err)
			}
			if diff := cmp.Diff(tt.want, matchingRanks(q, rfcNodes)); diff != "" {
				t.Errorf("query %q matched ranks (-want +got):\n%s", c.String(), diff)
			}
		})
	}
}

// TestRFC35Examples replays RFC 35's examples, which assume a default
// operator "name", through the query parser configured that way.
func TestRFC35Examples(t *testing.T) {
	d := &dialect{defaultOp: "name"}
	tests := []struct {
		name, in, want string
	}{
		// RFC 35: "foo".
		{"term", "foo", `{"name":["foo"]}`},
		// RFC 35: "foo bar".
		{"juxtaposition", "foo bar", `{"and":[{"name":["foo"]},{"name":["bar"]}]}`},
		// RFC 35: "foo bar state:started".
		{"explicit operator", "foo bar state:started",
			`{"and":[{"name":["foo"]},{"name":["bar"]},{"state":["started"]}]}`},
		// RFC 35: "a|b|c".
		{"or", "a|b|c", `{"or":[{"name":["a"]},{"name":["b"]},{"name":["c"]}]}`},
		// RFC 35: "a|b&c".
		{"and binds tighter", "a|b&c", `{"or":[{"name":["a"]},{"and":[{"name":["b"]},{"name":["c"]}]}]}`},
		// RFC 35: "(a|b)&c".
		{"parentheses", "(a|b)&c", `{"and":[{"or":[{"name":["a"]},{"name":["b"]}]},{"name":["c"]}]}`},
		// RFC 35: "(a|-b)&c".
		{"negation", "(a|-b)&c",
			`{"and":[{"or":[{"name":["a"]},{"not":[{"name":["b"]}]}]},{"name":["c"]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := d.parse(tt.in)
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, rawJSON(n)); diff != "" {
				t.Errorf("parse(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	// RFC 35: "-(a|b) SHALL be a syntax error".
	if _, err := d.parse("-(a|b)"); err == nil {
		t.Errorf(`parse("-(a|b)") succeeded, want a syntax error`)
	}
}

// rawJSON writes a parsed but unvalidated tree, whatever its operators.
func rawJSON(n *node) string {
	var b strings.Builder
	b.WriteString(`{"` + n.op + `":[`)
	if n.isLeaf() {
		for i, v := range n.values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteJSON(v))
		}
	} else {
		for i, k := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(rawJSON(k))
		}
	}
	b.WriteString("]}")
	return b.String()
}
