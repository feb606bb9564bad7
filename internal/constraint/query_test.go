package constraint

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Expected JSON is what flux-core's MiniConstraintParser (flux submit
// --requires) returns: from flux-core's tests where they print it, and
// otherwise recorded by running flux's parser.py (commit 169fe7dd) with
// PLY 3.11 on the same string.
func TestParseQuery(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// flux-core t/python/t0027-constraint.py
		{"bare property", "foo", `{"properties":["foo"]}`},
		{"parenthesized", "(foo)", `{"properties":["foo"]}`},
		{"comma splits properties", "foo,bar", `{"properties":["foo","bar"]}`},
		{"not", "not foo,bar", `{"not":[{"properties":["foo","bar"]}]}`},
		{"hosts", "hosts:foo[1-10]", `{"hostlist":["foo[1-10]"]}`},
		{"and hosts", "foo and hosts:foo[1-10]", `{"and":[{"properties":["foo"]},{"hostlist":["foo[1-10]"]}]}`},
		{"and -hosts", "foo and -hosts:foo[1-10]",
			`{"and":[{"properties":["foo"]},{"not":[{"hostlist":["foo[1-10]"]}]}]}`},
		{"or (not host)", "foo or (not host:foo[1-10])",
			`{"or":[{"properties":["foo"]},{"not":[{"hostlist":["foo[1-10]"]}]}]}`},
		// flux-core t/t2240-job-constraints.t: --requires=foo,bar --requires=^baz
		// (flux joins repeated --requires with a space).
		{"joined requires", "foo,bar ^baz", `{"properties":["foo","bar","^baz"]}`},
		{"caret", "^xx", `{"properties":["^xx"]}`},
		{"rank", "rank:1", `{"ranks":["1"]}`},
		{"-rank", "-rank:0-2", `{"not":[{"ranks":["0-2"]}]}`},
		{"host", "host:node1", `{"hostlist":["node1"]}`},
		// Recorded from flux's parser.
		{"ranks long form", "ranks:0,2", `{"ranks":["0,2"]}`},
		{"hostlist long form", "hostlist:node[0-1]", `{"hostlist":["node[0-1]"]}`},
		{"properties long form keeps later colons", "properties:a:b", `{"properties":["a:b"]}`},
		{"juxtaposed properties combine", "a b c", `{"properties":["a","b","c"]}`},
		{"& combines", "a&b&c", `{"properties":["a","b","c"]}`},
		{"&& and 'and' combine", "a && b and c", `{"properties":["a","b","c"]}`},
		{"or", "a|b|c", `{"or":[{"properties":["a"]},{"properties":["b"]},{"properties":["c"]}]}`},
		{"or words", "a or b || c", `{"or":[{"properties":["a"]},{"properties":["b"]},{"properties":["c"]}]}`},
		{"& over |", "a|b&c", `{"or":[{"properties":["a"]},{"properties":["b","c"]}]}`},
		{"parens", "(a|b)&c", `{"and":[{"or":[{"properties":["a"]},{"properties":["b"]}]},{"properties":["c"]}]}`},
		{"parens negate", "(a|-b)&c",
			`{"and":[{"or":[{"properties":["a"]},{"not":[{"properties":["b"]}]}]},{"properties":["c"]}]}`},
		// PLY gives a term no precedence, so juxtaposition binds looser than |.
		{"space under |", "a|b c", `{"and":[{"or":[{"properties":["a"]},{"properties":["b"]}]},{"properties":["c"]}]}`},
		// ... and a '-' binds to the right after two operands.
		{"late negation", "a b -c",
			`{"and":[{"properties":["a"]},{"and":[{"properties":["b"]},{"not":[{"properties":["c"]}]}]}]}`},
		{"three negations", "-a -b -c",
			`{"and":[{"not":[{"properties":["a"]}]},{"and":[{"not":[{"properties":["b"]}]},{"not":[{"properties":["c"]}]}]}]}`},
		{"not absorbs a later not", "not a not b",
			`{"not":[{"and":[{"properties":["a"]},{"not":[{"properties":["b"]}]}]}]}`},
		{"not binds tight", "not a b", `{"and":[{"not":[{"properties":["a"]}]},{"properties":["b"]}]}`},
		{"not parens", "not (a b) c", `{"and":[{"not":[{"properties":["a","b"]}]},{"properties":["c"]}]}`},
		{"and list does not merge", "a host:x b",
			`{"and":[{"properties":["a"]},{"hostlist":["x"]},{"properties":["b"]}]}`},
		{"and list keeps neighbours", "host:x a b",
			`{"and":[{"hostlist":["x"]},{"properties":["a"]},{"properties":["b"]}]}`},
		{"nested and on the right", "a (b host:x)",
			`{"and":[{"properties":["a"]},{"and":[{"properties":["b"]},{"hostlist":["x"]}]}]}`},
		{"and on the left absorbs", "(a host:x) b",
			`{"and":[{"properties":["a"]},{"hostlist":["x"]},{"properties":["b"]}]}`},
		{"nested or on the right", "a|(b|c)",
			`{"or":[{"properties":["a"]},{"or":[{"properties":["b"]},{"properties":["c"]}]}]}`},
		{"or on the left absorbs", "(a|b)|c",
			`{"or":[{"properties":["a"]},{"properties":["b"]},{"properties":["c"]}]}`},
		{"empty property", "a,,b", `{"properties":["a","","b"]}`},
		{"quoted", "'a b'", `{"properties":["a b"]}`},
		{"quoted operand", "host:'node 1'", `{"hostlist":["node 1"]}`},
		{"operator glued across space", "host: node1", `{"hostlist":["node1"]}`},
		{"double quotes", `host:"a'b"`, `{"hostlist":["a'b"]}`},
		{"both quotes", `'host:a"b:'"c'd"`, `{"hostlist":["a\"b:c'd"]}`},
		{"rank and caret", "rank:0-3 ^gpu", `{"and":[{"ranks":["0-3"]},{"properties":["^gpu"]}]}`},
		{"keyword prefixes are terms", "nota andy orx", `{"properties":["nota","andy","orx"]}`},
		{"negated caret", "-^a", `{"not":[{"properties":["^a"]}]}`},
		{"double not", "not not a", `{"not":[{"not":[{"properties":["a"]}]}]}`},
		{"tabs and newlines", "a\tb\n|c", `{"or":[{"properties":["a","b"]},{"properties":["c"]}]}`},
		{"unicode term", "gpü", `{"properties":["gpü"]}`},
		{"hostname as property", "node7", `{"properties":["node7"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseQuery(tt.in)
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", tt.in, err)
			}
			got, _ := c.MarshalJSON()
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("ParseQuery(%q) (-want +got):\n%s", tt.in, diff)
			}
			// Both ways to the same tree agree.
			j, err := ParseJSON([]byte(tt.want))
			if err != nil {
				t.Fatalf("ParseJSON(%s): %v", tt.want, err)
			}
			if !j.Equal(c) {
				t.Errorf("ParseJSON(%s) differs from ParseQuery(%q)", tt.want, tt.in)
			}
		})
	}
}

// TestFluxParserTests replays flux-core's t/python/t0027-constraint-parser.py
// with the same parser configurations it uses.
func TestFluxParserTests(t *testing.T) {
	testParser := &dialect{defaultOp: "t", opMap: map[string]string{"a": "op-a"}}
	valid := []struct{ in, want string }{
		{"a", `{"t":["a"]}`},
		{"(a)", `{"t":["a"]}`},
		{"( a )", `{"t":["a"]}`},
		{"'a'", `{"t":["a"]}`},
		{"('a')", `{"t":["a"]}`},
		{"a|b", `{"or":[{"t":["a"]},{"t":["b"]}]}`},
		{"a or b", `{"or":[{"t":["a"]},{"t":["b"]}]}`},
		{"a || b", `{"or":[{"t":["a"]},{"t":["b"]}]}`},
		{"a||b", `{"or":[{"t":["a"]},{"t":["b"]}]}`},
		{"a b c", `{"and":[{"t":["a"]},{"t":["b"]},{"t":["c"]}]}`},
		{"a&b&c", `{"and":[{"t":["a"]},{"t":["b"]},{"t":["c"]}]}`},
		{"a and b and c", `{"and":[{"t":["a"]},{"t":["b"]},{"t":["c"]}]}`},
		{"a && b && c", `{"and":[{"t":["a"]},{"t":["b"]},{"t":["c"]}]}`},
		{"a&b|c", `{"or":[{"and":[{"t":["a"]},{"t":["b"]}]},{"t":["c"]}]}`},
		{"a&(b|c)", `{"and":[{"t":["a"]},{"or":[{"t":["b"]},{"t":["c"]}]}]}`},
		{"(a&(b|c))", `{"and":[{"t":["a"]},{"or":[{"t":["b"]},{"t":["c"]}]}]}`},
		{"(a&(b|-c))", `{"and":[{"t":["a"]},{"or":[{"t":["b"]},{"not":[{"t":["c"]}]}]}]}`},
		{"a or host:foo", `{"or":[{"t":["a"]},{"host":["foo"]}]}`},
		{"a or -host:foo", `{"or":[{"t":["a"]},{"not":[{"host":["foo"]}]}]}`},
		{"a or time:11:00am", `{"or":[{"t":["a"]},{"time":["11:00am"]}]}`},
		{"a or test:'a quoted string'", `{"or":[{"t":["a"]},{"test":["a quoted string"]}]}`},
		{"a or name:'/foo|(bar)|baz.*/'", `{"or":[{"t":["a"]},{"name":["/foo|(bar)|baz.*/"]}]}`},
	}
	for _, tt := range valid {
		n, err := testParser.parse(tt.in)
		if err != nil {
			t.Errorf("parse(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, rawJSON(n)); diff != "" {
			t.Errorf("parse(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, in := range []string{"a|", "a:' ", "(a", "(a))", "-(a|b)", "4g,host:foo", "foo and a:"} {
		if n, err := testParser.parse(in); err == nil {
			t.Errorf("parse(%q) = %s, want an error", in, rawJSON(n))
		}
	}
	// "ConstraintParser requires operator by default"
	if _, err := (&dialect{}).parse("foo"); err == nil || err.Error() != `missing required operator in "foo"` {
		t.Errorf(`parse("foo") without a default operator: %v`, err)
	}
	others := []struct {
		name string
		d    *dialect
		in   string
		want string
	}{
		{"split", &dialect{defaultOp: "t", split: map[string]string{"t": ","}}, "xx,yy", `{"t":["xx","yy"]}`},
		{"split one", &dialect{defaultOp: "t", split: map[string]string{"t": ","}}, "xx", `{"t":["xx"]}`},
		{"split explicit", &dialect{defaultOp: "t", split: map[string]string{"t": ","}}, "t:xx,yy", `{"t":["xx","yy"]}`},
		{"no combine unconfigured", &dialect{defaultOp: "t", combine: map[string]bool{"t": true}}, "a:xx b:yy",
			`{"and":[{"a":["xx"]},{"b":["yy"]}]}`},
		{"combine", &dialect{defaultOp: "t", combine: map[string]bool{"t": true}}, "xx and yy", `{"t":["xx","yy"]}`},
		{"combine nested", &dialect{defaultOp: "t", combine: map[string]bool{"t": true}}, "not (xx and yy)",
			`{"not":[{"t":["xx","yy"]}]}`},
		{"no combine under or", &dialect{defaultOp: "t", combine: map[string]bool{"t": true}}, "xx|yy",
			`{"or":[{"t":["xx"]},{"t":["yy"]}]}`},
	}
	for _, tt := range others {
		n, err := tt.d.parse(tt.in)
		if err != nil {
			t.Errorf("%s: parse(%q): %v", tt.name, tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, rawJSON(n)); diff != "" {
			t.Errorf("%s: parse(%q) (-want +got):\n%s", tt.name, tt.in, diff)
		}
	}
}

// Syntax errors are flux's parser's messages (first letter lowered), as
// recorded from parser.py; the rest are flux's validation messages.
func TestParseQueryErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "unexpected end of input in ''"},
		{"blank", "   ", "unexpected end of input in '   '"},
		{"trailing or", "a|", "unexpected end of input in 'a|'"},
		{"or at end", "foo or", "unexpected end of input in 'foo or'"},
		{"unclosed single quote", "a:' ", `unclosed quote "'" at position 3`},
		{"unclosed double quote", `a "b`, `unclosed quote '"' at position 3`},
		{"unclosed quote beats missing argument", "'abc:", `unclosed quote "'" at position 1`},
		{"unclosed parenthesis", "(a", "unclosed parenthesis in position 0"},
		{"unclosed reports last parenthesis", "((a)", "unclosed parenthesis in position 1"},
		// flux prints "{self.lexer.last_rparens}" literally here (a missing
		// f-string prefix); the position is given instead.
		{"extra parenthesis", "(a))", "mismatched parentheses starting at position 3"},
		{"stray parenthesis", "a b)", "mismatched parentheses starting at position 3"},
		{"empty parentheses", "()", "invalid token ')' at position 1"},
		{"negated group", "-(a|b)", "invalid token '(' at position 1"},
		{"double negation", "--a", "invalid token '-' at position 1"},
		{"negated not", "-not a", "invalid token 'not' at position 1"},
		{"leading and", "and", "invalid token 'and' at position 0"},
		{"leading &", "&x", "invalid token '&' at position 0"},
		{"two operators", "a\tb |&", "invalid token '&' at position 5"},
		{"bad operator", "4g,host:foo", "invalid character ',' in operator '4g,host:'"},
		{"bad operator char", "x=y:z", "invalid character '=' in operator 'x=y:'"},
		{"missing argument", "foo and a:", "missing argument to token 'a:'"},
		{"lexing runs ahead of operator check", "a$:b host:", "missing argument to token 'host:'"},
		// flux prints the character itself; an invisible one is escaped here.
		{"no-break space", "a\u00a0b", `illegal character '\u00a0' at position 1`},
		{"position counts characters", "nodé\u2003x", `illegal character '\u2003' at position 4`},
		{"control character in operator", "a\x01:b", `invalid character '\x01' in operator 'a\x01:'`},
		{"newline in message", "a\n|", `unexpected end of input in 'a\n|'`},
		{"invalid utf-8", "a\xffb", "invalid UTF-8 at byte 1"},
		// flux-core t/t2240-job-constraints.t: rejected at validation.
		{"unknown operator", "foo:bar", "unknown constraint operator: foo"},
		{"bad hostlist", "host:f[", `invalid hostlist 'f[' in ["f["]`},
		{"bad ranks", "ranks:1-0", `invalid idset '1-0' in ["1-0"]`},
		{"empty operator", ":foo", "unknown constraint operator: "},
		{"bad property", "a!b", `invalid character '!' in property "a!b"`},
		{"bad property backtick", "ok,a`b", "invalid character '`' in property \"a`b\""},
		{"first error in document order", "foo:x bar:y", "unknown constraint operator: foo"},
		{"too deep", strings.Repeat("not ", MaxDepth) + "a", "constraint nesting exceeds 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseQuery(tt.in)
			if err == nil {
				j, _ := c.MarshalJSON()
				t.Fatalf("ParseQuery(%q) = %s, want error %q", short(tt.in), short(string(j)), tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("ParseQuery(%q) error (-want +got):\n%s", short(tt.in), diff)
			}
		})
	}
	// The deepest nesting allowed still parses.
	if _, err := ParseQuery(strings.Repeat("not ", MaxDepth-1) + "a"); err != nil {
		t.Errorf("nesting of %d levels: %v", MaxDepth, err)
	}
	// Deep parentheses cost no tree depth and no stack.
	deep := strings.Repeat("(", 100000) + "a" + strings.Repeat(")", 100000)
	if _, err := ParseQuery(deep); err != nil {
		t.Errorf("100000 parentheses: %v", err)
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"property", "foo", "foo"},
		{"properties", "a b c", "a,b,c"},
		{"host shorthand", "hostlist:node[1-2]", "host:node[1-2]"},
		{"rank shorthand", "ranks:0-3", "rank:0-3"},
		{"negation", "-hosts:foo[1-10]", "-host:foo[1-10]"},
		{"not of a group", "not (a|b)", "not (a|b)"},
		{"and list", "foo and -hosts:foo[1-10]", "foo -host:foo[1-10]"},
		{"or keeps left grouping", "a|b c", "(a|b) c"},
		{"late negation parenthesized", "a b -c", "a (b -c)"},
		{"third negation parenthesized", "a host:x b (-c)", "a host:x b (-c)"},
		{"negation after not group", "not (a|b) -c", "not ((a|b) -c)"},
		{"not group then negation", "(not (a|b)) (-c)", "not (a|b) (-c)"},
		{"quoted property", "'a b'", "properties:'a b'"},
		{"property with colon", "properties:a:b", "properties:a:b"},
		{"property like a keyword", "properties:not", "properties:not"},
		{"property starting with -", "properties:-x", "properties:-x"},
		{"quoted host", "host:'node 1'", "host:'node 1'"},
		{"host ending in colon", "host: a:", "host:'a:'"},
		{"host with single quote", `host:"a'b"`, `host:"a'b"`},
		{"host with both quotes", `'host:a"b:'"c'd"`, `'host:a"b:'"c'd"`},
		{"empty properties", "a,,b", "a,,b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseQuery(tt.in)
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, c.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
			back, err := ParseQuery(c.String())
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", c.String(), err)
			}
			if !back.Equal(c) {
				a, _ := c.MarshalJSON()
				b, _ := back.MarshalJSON()
				t.Errorf("round trip through %q: %s became %s", c.String(), a, b)
			}
		})
	}
}

// TestStringJSONOnly covers trees no query produces: String gives a query
// that selects the same targets.
func TestStringJSONOnly(t *testing.T) {
	nodes := []Node{
		{Rank: 0, Hostname: "n0", Properties: []string{"a"}},
		{Rank: 1, Hostname: "n1", Properties: []string{"b"}},
		{Rank: 2, Hostname: "n2", Properties: []string{"a", "b"}},
		{Rank: 3, Hostname: "x"},
		{Rank: 4, Hostname: ""},
	}
	tests := []struct {
		name, in, want string
	}{
		{"empty", `{}`, ""},
		{"empty properties", `{"properties":[]}`, "-x,^x"},
		{"empty and", `{"and":[]}`, "-x,^x"},
		{"empty or", `{"or":[]}`, "-x,^x"},
		{"empty not", `{"not":[]}`, "x,^x"},
		{"empty hostlist", `{"hostlist":[]}`, "x,^x"},
		{"empty hostlist string", `{"hostlist":[""]}`, "x,^x"},
		{"empty ranks string", `{"ranks":[""]}`, "x,^x"},
		{"empty property", `{"properties":[""]}`, ","},
		{"nested empty", `{"and":[{"properties":["a"]},{}]}`, "a (-x,^x)"},
		{"one-element or", `{"or":[{"properties":["a"]}]}`, "a"},
		{"one-element and", `{"and":[{"properties":["a"]}]}`, "a"},
		{"several hostlists", `{"hostlist":["n0","n[1-2]"]}`, "host:n0|host:n[1-2]"},
		{"several idsets", `{"ranks":["0","3"]}`, "rank:0|rank:3"},
		{"not of two", `{"not":[{"properties":["a"]},{"properties":["b"]}]}`, "not (a b)"},
		{"and of properties", `{"and":[{"properties":["a"]},{"properties":["b"]}]}`, "a b"},
		{"or first", `{"or":[{"or":[{"properties":["a"]}, {"properties":["b"]}]},{"ranks":["3"]}]}`, "(a|b)|rank:3"},
		{"several hostlists in and", `{"and":[{"properties":["a"]},{"hostlist":["n0","n2"]}]}`, "a (host:n0|host:n2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			if diff := cmp.Diff(tt.want, c.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
			if c.IsEmpty() {
				return
			}
			q, err := ParseQuery(c.String())
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", c.String(), err)
			}
			if diff := cmp.Diff(matchingRanks(c, nodes), matchingRanks(q, nodes)); diff != "" {
				t.Errorf("query %q selects other targets (-json +query):\n%s", c.String(), diff)
			}
		})
	}
}
