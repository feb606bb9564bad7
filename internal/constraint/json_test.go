package constraint

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseJSONErrors(t *testing.T) {
	nest := func(depth int) string {
		return strings.Repeat(`{"not":[`, depth-1) + `{}` + strings.Repeat(`]}`, depth-1)
	}
	tests := []struct {
		name, in, want string
	}{
		// flux-core src/common/librlist/test/match.c validate_tests
		{"non-object", `[]`, "constraint must be JSON object"},
		{"unknown operator", `{ "foo": [] }`, "unknown constraint operator: foo"},
		{"and not an array", `{ "and": "foo" }`, "and operator value must be an array"},
		{"or not an array", `{ "or": "foo" }`, "or operator value must be an array"},
		{"properties not an array", `{ "properties": "foo" }`, "properties value must be an array"},
		{"non-string property", `{ "properties": [ "foo", 42 ] }`, "non-string property specified"},
		{"invalid property", `{ "properties": [ "foo", "bar&" ] }`, `invalid character '&' in property "bar&"`},
		{"invalid hostlist", `{"hostlist": ["foo0-10]"]}`, `invalid hostlist 'foo0-10]' in ["foo0-10]"]`},
		{"invalid idset", `{"ranks": ["5,1-3"]}`, `invalid idset '5,1-3' in ["5,1-3"]`},
		// flux-core match.c job_constraint_create
		{"two operators", `{"properties":["a"],"hostlist":["x"]}`, "constraint must only contain 1 element"},
		// flux-core t/t2240-job-constraints.t: system.constraints.and={}
		{"and object", `{"and":{}}`, "and operator value must be an array"},
		{"not object", `{"not":{"properties":["a"]}}`, "not operator value must be an array"},
		{"operand not an object", `{"and":[1]}`, "constraint must be JSON object"},
		{"nested unknown", `{"and":[{"or":[{"properties":["a"]},{"foo":[]}]}]}`, "unknown constraint operator: foo"},
		{"hostlist not an array", `{"hostlist":"x"}`, "hostlist operator argument not an array"},
		{"ranks not an array", `{"ranks":null}`, "idset operator argument not an array"},
		{"non-string hostlist", `{"hostlist":["a",1]}`, `invalid hostlist '1' in ["a", 1]`},
		{"non-string idset", `{"ranks":[[0]]}`, `invalid idset '[0]' in [[0]]`},
		{"second of two hostlists", `{"hostlist":["a","b[","c"]}`, `invalid hostlist 'b[' in ["a", "b[", "c"]`},
		{"rank too large", `{"ranks":["4294967295"]}`, `invalid idset '4294967295' in ["4294967295"]`},
		{"property in quotes", `{"properties":["a'b"]}`, `invalid character ''' in property "a'b"`},
		{"operator with newline", `{"a\nb":[]}`, `unknown constraint operator: a\nb`},
		{"null", `null`, "constraint must be JSON object"},
		{"string", `"properties"`, "constraint must be JSON object"},
		{"empty input", ``, "invalid JSON: unexpected end of input"},
		{"truncated", `{"properties":["a"]`, "invalid JSON: unexpected end of input"},
		{"syntax", `{"properties":[a]}`, "invalid JSON at offset 16: invalid character 'a' looking for beginning of value"},
		{"trailing data", `{} {}`, "invalid JSON: data after the constraint object"},
		{"too deep", nest(MaxDepth + 1), "constraint nesting exceeds 64 levels"},
		{"very deep", nest(5000), "constraint nesting exceeds 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseJSON([]byte(tt.in))
			if err == nil {
				j, _ := c.MarshalJSON()
				t.Fatalf("ParseJSON(%s) = %s, want error %q", short(tt.in), short(string(j)), tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("ParseJSON(%s) error (-want +got):\n%s", short(tt.in), diff)
			}
		})
	}
	if _, err := ParseJSON([]byte(nest(MaxDepth))); err != nil {
		t.Errorf("nesting of %d levels: %v", MaxDepth, err)
	}
	// Past encoding/json's own depth limit the decoder refuses first.
	_, err := ParseJSON([]byte(strings.Repeat(`{"and":[`, 100000)))
	if err == nil || !strings.HasPrefix(err.Error(), "invalid JSON") {
		t.Errorf("100000 levels: %v", err)
	}
}

// short keeps huge test inputs out of failure messages.
func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func TestParseJSONCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ` { } `, `{}`},
		{"whitespace removed", "{ \"properties\" : [ \"a\" ,\n \"b\" ] }", `{"properties":["a","b"]}`},
		{"duplicate key, last wins", `{"properties":["a"],"properties":["b"]}`, `{"properties":["b"]}`},
		{"no HTML escaping", `{"hostlist":["a<b>&"]}`, `{"hostlist":["a<b>&"]}`},
		{"escapes decoded", `{"properties":["\u0067pu"]}`, `{"properties":["gpu"]}`},
		{"caret inside allowed", `{"properties":["a^b","^^c"]}`, `{"properties":["a^b","^^c"]}`},
		{"nested empty", `{"and":[{},{"or":[]}]}`, `{"and":[{},{"or":[]}]}`},
		{"empty strings", `{"ranks":[""],"hostlist":[""]}`, ""},
		{"operands kept as written", `{"hostlist":["host0,host1"]}`, `{"hostlist":["host0,host1"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseJSON([]byte(tt.in))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseJSON(%s) succeeded, want an error", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseJSON(%s): %v", tt.in, err)
			}
			// json.Marshal would re-escape <, > and & in the result.
			got, err := c.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Marshal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnmarshalJSON(t *testing.T) {
	var js struct {
		Constraints Constraint `json:"constraints"`
	}
	if err := json.Unmarshal([]byte(`{"constraints":{"properties":["ssd"]}}`), &js); err != nil {
		t.Fatal(err)
	}
	if !js.Constraints.Match(Node{Properties: []string{"ssd"}}) || js.Constraints.Match(Node{}) {
		t.Errorf("decoded constraint matches wrongly: %v", js.Constraints)
	}
	err := json.Unmarshal([]byte(`{"constraints":{"foo":[]}}`), &js)
	if err == nil || !strings.Contains(err.Error(), "unknown constraint operator: foo") {
		t.Errorf("Unmarshal of a bad constraint: %v", err)
	}
	var zero Constraint
	if b, _ := json.Marshal(zero); string(b) != "{}" {
		t.Errorf("zero Constraint marshals as %s, want {}", b)
	}
}

// TestMatchFlux replays flux-core's src/common/librlist/test/match.c: one
// target "foo0", rank 0, with properties xx and yy.
func TestMatchFlux(t *testing.T) {
	foo0 := Node{Rank: 0, Hostname: "foo0", Properties: []string{"xx", "yy"}}
	tests := []struct {
		name, in string
		want     bool
	}{
		{"empty json object matches everything", `{}`, true},
		{"hostname property matches", `{"properties": ["foo0"]}`, true},
		{"empty properties dict matches everything", `{"properties": [] }`, true},
		{"property matches", `{"properties": ["xx"]}`, true},
		{"logical not on property", `{"properties": ["^xx"]}`, false},
		{"logical not on unset property", `{"properties": ["^zz"]}`, true},
		{"property list matches like 'and'", `{"properties": ["xx", "yy"]}`, true},
		{"property list match fails unless node has all", `{"properties": ["xx", "zz"]}`, false},
		{"property list match fails if property missing", `{"properties": ["zz"]}`, false},
		{"and with two true statements", `{"and": [ {"properties": ["xx"]}, {"properties": ["yy"]} ]}`, true},
		{"and with one false statement", `{"and": [ {"properties": ["xx"]}, {"properties": ["zz"]} ]}`, false},
		{"or with two true statements", `{"or": [ {"properties": ["xx"]}, {"properties": ["yy"]} ]}`, true},
		{"or with one true statements", `{"or": [ {"properties": ["zz"]}, {"properties": ["yy"]} ]}`, true},
		{"or with two false statements", `{"or": [ {"properties": ["zz"]}, {"properties": ["aa"]} ]}`, false},
		{"not with or with one true statement",
			`{"not": [ {"or": [ {"properties": ["zz"]}, {"properties": ["yy"]} ]} ] }`, false},
		{"hostlist operator works", `{"hostlist": ["foo[0-2]"]}`, true},
		{"hostlist operator works with non-matching hostlist", `{"hostlist": ["foo[1-3]"]}`, false},
		{"ranks operator works", `{"ranks": ["0,2", "1"]}`, true},
		{"ranks operator works with non-matching rank", `{"ranks": ["1-3"]}`, false},
		// Beyond flux's table.
		{"second hostlist matches", `{"hostlist": ["bar", "foo0"]}`, true},
		{"empty hostlist matches nothing", `{"hostlist": []}`, false},
		{"empty idset matches nothing", `{"ranks": [""]}`, false},
		{"negated hostname", `{"properties": ["^foo0"]}`, false},
		{"only one caret strips", `{"properties": ["^^xx"]}`, true},
		{"empty or matches", `{"or": []}`, true},
		{"empty not matches nothing", `{"not": []}`, false},
		{"not of several is not-and", `{"not": [{"properties": ["xx"]}, {"properties": ["zz"]}]}`, true},
		{"nested empty object", `{"and": [{}]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			if got := c.Match(foo0); got != tt.want {
				t.Errorf("Match(foo0) = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMatchRequires replays the --requires jobs of flux-core's
// t/t2240-job-constraints.t: ranks 0-1 have yy, 2 has xx and yy, 3 has xx.
func TestMatchRequires(t *testing.T) {
	nodes := []Node{
		{Rank: 0, Hostname: "node0", Properties: []string{"yy"}},
		{Rank: 1, Hostname: "node1", Properties: []string{"yy"}},
		{Rank: 2, Hostname: "node2", Properties: []string{"xx", "yy"}},
		{Rank: 3, Hostname: "node3", Properties: []string{"xx"}},
	}
	tests := []struct {
		in   string
		want []uint
	}{
		{"xx", []uint{2, 3}},
		{"yy", []uint{0, 1, 2}},
		{"xx,yy", []uint{2}},
		{"^xx", []uint{0, 1}},
		{"^yy", []uint{3}},
		{"rank:1", []uint{1}},
		{"rank:3", []uint{3}},
		{"-rank:0-2", []uint{3}},
		{"host:node1", []uint{1}},
		// Beyond flux's test.
		{"xx|rank:0", []uint{0, 2, 3}},
		{"not (xx yy)", []uint{0, 1, 3}},
		{"host:node[0-3] -yy", []uint{3}},
		{"node2", []uint{2}},
		{"zz", []uint{}},
		{"rank:0-4294967294 ^xx", []uint{0, 1}},
		{"host:node[0-99999999] rank:2", []uint{2}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := ParseQuery(tt.in)
			if err != nil {
				t.Fatalf("ParseQuery: %v", err)
			}
			if diff := cmp.Diff(tt.want, matchingRanks(c, nodes)); diff != "" {
				t.Errorf("matched ranks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProperties(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"b,^a (c|host:x) -rank:1 -d,a", []string{"a", "b", "c", "d"}},
		{"host:x", nil},
	}
	for _, tt := range tests {
		c, err := ParseQuery(tt.in)
		if err != nil {
			t.Fatalf("ParseQuery(%q): %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, c.Properties()); diff != "" {
			t.Errorf("Properties(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	if got := (Constraint{}).Properties(); got != nil {
		t.Errorf("empty constraint Properties() = %v", got)
	}
}

func TestEqual(t *testing.T) {
	parse := func(s string) Constraint {
		t.Helper()
		c, err := ParseJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		a, b string
		want bool
	}{
		{`{}`, `{}`, true},
		{`{}`, `{"and":[]}`, false},
		{`{"properties":["a","b"]}`, `{"properties":["a","b"]}`, true},
		{`{"properties":["a","b"]}`, `{"properties":["b","a"]}`, false},
		{`{"hostlist":["h[0-1]"]}`, `{"hostlist":["h0,h1"]}`, false},
		{`{"and":[{"ranks":["0"]}]}`, `{"or":[{"ranks":["0"]}]}`, false},
		{`{"not":[{"ranks":["0"]}]}`, `{"not":[{"ranks":["0"]}]}`, true},
		{`{"not":[{"ranks":["0"]}]}`, `{"not":[{"ranks":["0"]},{}]}`, false},
	}
	for _, tt := range tests {
		a, b := parse(tt.a), parse(tt.b)
		if got := a.Equal(b); got != tt.want {
			t.Errorf("%s Equal %s = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := b.Equal(a); got != tt.want {
			t.Errorf("%s Equal %s = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
	if !(Constraint{}).IsEmpty() || parse(`{"and":[]}`).IsEmpty() {
		t.Error("IsEmpty is wrong")
	}
}
