package shell

import "testing"

func TestUnknownTag(t *testing.T) {
	for _, tc := range []struct{ tmpl, want string }{
		{"out.txt", ""},
		{"{{id}}.out", ""},
		{"{{jobid}}-{{name}}-{{id.dec}}-{{taskid}}-{{node.name}}-{{nnodes}}", ""},
		{"{{cc}}.out", "{{cc}}"},
		{"{{id.nosuch}}", "{{id.nosuch}}"},
		{"a{{id}}b{{nope}}", "{{nope}}"},
		{"{{id", ""}, // not a tag: text, as render leaves it
		{"{{}}", "{{}}"},
	} {
		if got := UnknownTag(tc.tmpl); got != tc.want {
			t.Errorf("UnknownTag(%q) = %q, want %q", tc.tmpl, got, tc.want)
		}
	}
}
