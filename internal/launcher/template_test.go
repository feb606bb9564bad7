package launcher

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

var agentCmd = []string{"/opt/fluxq/bin/fluxsched", "agent", "--attach", "--state-dir", "/var/lib/fluxq"}

func TestTemplateExpand(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		want []string
	}{
		{"srun --nodes=1 --ntasks=1 --overlap -w {host} {command}",
			append([]string{"srun", "--nodes=1", "--ntasks=1", "--overlap", "-w", "node1"}, agentCmd...)},
		{"ssh -F cfg {address} {command}", append([]string{"ssh", "-F", "cfg", "10.0.0.1"}, agentCmd...)},
		{`sh -c "cd / && {command}"`, []string{"sh", "-c", "cd / && /opt/fluxq/bin/fluxsched agent --attach --state-dir /var/lib/fluxq"}},
		{`kubectl exec -i pod-{host} -- {command}`, append([]string{"kubectl", "exec", "-i", "pod-node1", "--"}, agentCmd...)},
		{`run\ it {{x}} {command}`, append([]string{"run it", "{x}"}, agentCmd...)},
		{"  pdsh\t-w {host}  {command}  ", append([]string{"pdsh", "-w", "node1"}, agentCmd...)},
		{`x "" {command}`, append([]string{"x", ""}, agentCmd...)},
	} {
		tm, err := ParseTemplate(tc.tmpl)
		if err != nil {
			t.Errorf("ParseTemplate(%q): %v", tc.tmpl, err)
			continue
		}
		if got := tm.Expand("node1", "10.0.0.1", agentCmd); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q expands to %q, want %q", tc.tmpl, got, tc.want)
		}
	}
}

func TestTemplateRejects(t *testing.T) {
	for _, tc := range []struct{ tmpl, want string }{
		{"", "the template is empty"},
		{"   ", "the template is empty"},
		{"srun -w {host}", "the template has no {command}"},
		{"srun {command} {command}", "the template names {command} 2 times: want once"},
		{"srun -w {node} {command}", "the template names \"{node}\": want {host}, {address} or {command}"},
		{"srun -w {host {command}", "the template names \"{host {command}\""},
		{"srun -w {host", "the template has a { without its }"},
		{"srun 'x {command}", "the template's ' quote is not closed"},
		{`srun {command} \`, `the template ends with a lone \`},
		{"{command}", "the template begins with {command}"},
	} {
		_, err := ParseTemplate(tc.tmpl)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTemplate(%q) = %v, want %q", tc.tmpl, err, tc.want)
		}
	}
}

// A shell splits ShellQuote's line back into the words.
func TestShellQuote(t *testing.T) {
	words := []string{"plain", "with space", "it's", `"dq"`, "$HOME", "", "a;b", "*", "--x=y", "tab\there"}
	line := ShellQuote(words)
	out, err := exec.Command("sh", "-c", "set -- "+line+`; for w in "$@"; do printf '<%s>\n' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, w := range words {
		want.WriteString("<" + w + ">\n")
	}
	if string(out) != want.String() {
		t.Errorf("sh read %q back as\n%s\nwant\n%s", line, out, want.String())
	}
}

// Whatever the template, parsing never panics, and a template that parses
// expands with {command}'s words all there.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"srun -w {host} {command}", `sh -c "cd / && {command}"`, "ssh {address} {command}", "{{}} {command} '{x}'", `a\ b {command}`, "{", "}", "'", `"{command}"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTemplate(s)
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseTemplate(%q): error %q is not one line", s, err)
			}
			return
		}
		argv := tm.Expand("h", "a", []string{"CMD", "ARG"})
		if len(argv) == 0 {
			t.Fatalf("%q expands to nothing", s)
		}
		joined := strings.Join(argv, "\x00")
		if !strings.Contains(joined, "CMD") || !strings.Contains(joined, "ARG") {
			t.Fatalf("%q expands to %q: the command is lost", s, argv)
		}
	})
}
