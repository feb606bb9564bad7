package fluxres

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/api"
)

func TestNodeAdd(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want api.SpareParams
	}{
		{"hosts", []string{"--spare", "spare[0-1]"}, api.SpareParams{Hosts: "spare[0-1]"}},
		{"shape", []string{"--spare", "spare2", "--cores", "0-3", "--gpus", "0"}, api.SpareParams{Hosts: "spare2", Cores: "0-3", GPUs: "0"}},
		{"as scheduler", []string{"--as-scheduler", "--spare=spare3"}, api.SpareParams{Hosts: "spare3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeClient{spares: []string{"spare0"}}
			code, out, stderr := runRes(t, f, append([]string{"node", "add"}, tt.args...)...)
			if code != 0 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
			if diff := cmp.Diff([]api.SpareParams{tt.want}, f.added); diff != "" {
				t.Errorf("SpareParams (-want +got):\n%s", diff)
			}
		})
	}
	for _, args := range [][]string{{}, {"spare0"}, {"--spare", "spare[0-"}, {"--spare", "s0", "--cores", "x"}} {
		f := &fakeClient{}
		if code, _, stderr := runRes(t, f, append([]string{"node", "add"}, args...)...); code != 2 || len(f.added) != 0 {
			t.Errorf("node add %v: exit %d (%s), %d requests; want a usage error", args, code, stderr, len(f.added))
		}
	}
}

func TestNodeRemove(t *testing.T) {
	f := &fakeClient{}
	if code, out, _ := runRes(t, f, "node", "remove", "spare[0-1]"); code != 0 || out != "" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if diff := cmp.Diff([]string{"spare[0-1]"}, f.removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if code, _, _ := runRes(t, f, "node", "remove"); code != 2 {
		t.Errorf("remove without hosts: exit %d, want 2", code)
	}
}

func TestNodeList(t *testing.T) {
	f := &fakeClient{list: sampleList()}
	code, out, stderr := runRes(t, f, "node", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "NAME RANK ORIGIN SESSION HOLDER\n" +
		"node0 0 startup default -\n" +
		"node1 1 startup r1 r1\n" +
		"spare1 5 spare - -\n"
	var got []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	if diff := cmp.Diff(strings.Split(strings.TrimRight(want, "\n"), "\n"), got); diff != "" {
		t.Errorf("node list (-want +got):\n%s", diff)
	}
	if _, out, _ = runRes(t, f, "node", "list", "-n"); strings.Contains(out, "NAME") {
		t.Errorf("-n printed a header:\n%s", out)
	}
	_, out, _ = runRes(t, f, "node", "list", "--json")
	var doc struct {
		Nodes []api.NodeView `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Nodes) != 3 || doc.Nodes[2].Session != "" || doc.Nodes[1].Holder != "r1" {
		t.Errorf("--json: %v: %s", err, out)
	}
}
