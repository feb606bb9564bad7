package constraint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzNodes are the targets the fuzz targets compare matches on.
var fuzzNodes = []Node{
	{Rank: 0, Hostname: "host0", Properties: []string{"ssd", "a"}},
	{Rank: 1, Hostname: "host1", Properties: []string{"slowgpu", "b"}},
	{Rank: 2, Hostname: "x", Properties: []string{"a", "b", "^a"}},
	{Rank: 3, Hostname: "", Properties: []string{""}},
	{Rank: 7, Hostname: "node[1]", Properties: []string{"a b", "c:d"}},
	{Rank: 4294967294, Hostname: "a", Properties: nil},
}

var querySeeds = []string{
	// RFC 35 examples (with properties as the default operator).
	"foo", "foo bar", "foo bar state:started", "a|b|c", "a|b&c", "(a|b)&c", "(a|-b)&c",
	// flux-core tests.
	"foo,bar", "not foo,bar", "hosts:foo[1-10]", "foo and -hosts:foo[1-10]",
	"foo or (not host:foo[1-10])", "foo,bar ^baz", "rank:1", "-rank:0-2", "host:node1",
	"a or test:'a quoted string'", "a|", "a:' ", "(a", "(a))", "-(a|b)", "4g,host:foo",
	"foo and a:", "host:f[", "ranks:1-0", "foo:bar", "&x",
	// Precedence and combining quirks, quoting, errors.
	"a|b c", "a b -c", "-a -b -c", "not a not b", "a (b host:x)", "(a host:x) b",
	"a,,b", "host: node1", `'host:a"b:'"c'd"`, "host:'a:'", "properties:-x",
	"nota andy orx", "a\u00a0b", "rank:0-4294967294", "host:node[0-9999999999]",
	"(((a)))", "not not not a", "properties:'a b'", "a\xffb", "",
}

var jsonSeeds = []string{
	`{}`, `{"properties":[]}`, `{"and":[]}`, `{"or":[]}`, `{"not":[]}`,
	`{"properties":["a","^b",""]}`, `{"hostlist":["host[0-1]","x"]}`, `{"ranks":["0,2","1"]}`,
	`{"and":[{},{"or":[{"properties":["a"]}]}]}`, `{"not":[{"properties":["a"]},{"ranks":["7"]}]}`,
	`{"hostlist":[""]}`, `{"hostlist":["a\"b:c'd"]}`, `{"properties":["a:b","-x","not"]}`,
	`{"properties":["a"],"properties":["b"]}`, `{"properties":["a"],"ranks":["0"]}`,
	`{"foo":[]}`, `{"and":"x"}`, `[]`, `null`, `{"ranks":["5,1-3"]}`, `{"hostlist":[1]}`,
	`{"properties":["bar&"]}`, `{"ranks":["0-4294967294"]}`, `{"hostlist":["n[0-9999999999]"]}`,
}

// faithful reports whether String can express n exactly enough for
// matching: not a property containing ',' nor an operand holding both
// quote characters.
func faithful(n *node) bool {
	for _, v := range n.values {
		if n.op == opProperties && strings.Contains(v, ",") ||
			strings.Contains(v, "'") && strings.Contains(v, `"`) {
			return false
		}
	}
	for _, k := range n.kids {
		if !faithful(k) {
			return false
		}
	}
	return true
}

func FuzzParseJSON(f *testing.F) {
	files, _ := filepath.Glob("testdata/rfc/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseJSON(data)
		if err != nil {
			return
		}
		j1, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		c2, err := ParseJSON(j1)
		if err != nil {
			t.Fatalf("ParseJSON(%q) ok, but its MarshalJSON %s does not parse: %v", data, j1, err)
		}
		if !c2.Equal(c) {
			t.Fatalf("ParseJSON(%q) = %s, which parses to a different tree", data, j1)
		}
		if j2, _ := c2.MarshalJSON(); !bytes.Equal(j1, j2) {
			t.Fatalf("MarshalJSON not canonical: %s then %s", j1, j2)
		}
		_ = c.Properties()
		if c.IsEmpty() || !faithful(c.root) {
			return
		}
		// The query form selects the same targets.
		s := c.String()
		q, err := ParseQuery(s)
		if err != nil {
			if strings.Contains(err.Error(), "nesting exceeds") {
				return // constant forms add a level or two
			}
			t.Fatalf("%s: String() = %q does not parse: %v", j1, s, err)
		}
		for _, n := range fuzzNodes {
			if c.Match(n) != q.Match(n) {
				t.Fatalf("%s matches %+v: %v, but its String() %q: %v", j1, n, c.Match(n), s, q.Match(n))
			}
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		c, err := ParseQuery(q)
		if err != nil {
			return
		}
		s1 := c.String()
		c2, err := ParseQuery(s1)
		if err != nil {
			t.Fatalf("ParseQuery(%q) ok, but its String() %q does not parse: %v", q, s1, err)
		}
		j1, _ := c.MarshalJSON()
		j2, _ := c2.MarshalJSON()
		if !c2.Equal(c) || !bytes.Equal(j1, j2) {
			t.Fatalf("ParseQuery(%q) = %s; String() %q parses to %s", q, j1, s1, j2)
		}
		if s2 := c2.String(); s2 != s1 {
			t.Fatalf("String not canonical: %q then %q", s1, s2)
		}
		// The JSON form is the same tree too.
		c3, err := ParseJSON(j1)
		if err != nil || !c3.Equal(c) {
			t.Fatalf("ParseQuery(%q) = %s, which ParseJSON reads as %v, %v", q, j1, c3, err)
		}
		for _, n := range fuzzNodes {
			_ = c.Match(n)
		}
		_ = c.Properties()
	})
}
