package fluxres

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/reservation"
)

// fakeClient is an instance in memory: it records the requests and
// answers what the test set. Methods the commands here do not call are
// left to the nil embedded interface.
type fakeClient struct {
	client.Client

	reserveErr error
	view       *api.ReservationView
	list       *api.ReservationList
	events     []api.ToolEvent
	spares     []string

	asScheduler bool
	reserves    []api.ReserveParams
	all         []bool
	follows     []bool
	added       []api.SpareParams
	removed     []string
	submits     [][]api.SubmitJob
}

func (f *fakeClient) open(c *cli.Context) (client.Client, error) {
	f.asScheduler = c.Bool(instance.FlagAsScheduler)
	return f, nil
}

func (f *fakeClient) Close() error { return nil }

func (f *fakeClient) Reserve(_ context.Context, p api.ReserveParams) (*api.ReservationView, error) {
	f.reserves = append(f.reserves, p)
	if f.reserveErr != nil {
		return nil, f.reserveErr
	}
	if f.view != nil {
		return f.view, nil
	}
	v := &api.ReservationView{State: "active"}
	v.ID, v.ReqID = "r1", p.ReqID
	if p.ID != "" {
		v.ID = p.ID
	}
	return v, nil
}

func (f *fakeClient) Reservations(_ context.Context, all bool) (*api.ReservationList, error) {
	f.all = append(f.all, all)
	if f.list == nil {
		return &api.ReservationList{Reservations: []api.ReservationView{}, Nodes: []api.NodeView{}}, nil
	}
	return f.list, nil
}

func (f *fakeClient) ToolEvents(_ context.Context, follow bool, fn func(api.ToolEvent) error) error {
	f.follows = append(f.follows, follow)
	for _, e := range f.events {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeClient) AddSpares(_ context.Context, p api.SpareParams) ([]string, error) {
	f.added = append(f.added, p)
	return f.spares, nil
}

func (f *fakeClient) RemoveNodes(_ context.Context, hosts string) error {
	f.removed = append(f.removed, hosts)
	return nil
}

func (f *fakeClient) Submit(_ context.Context, jobs []api.SubmitJob) ([]fluid.ID, error) {
	f.submits = append(f.submits, jobs)
	return []fluid.ID{fluid.ID(1000)}, nil
}

// runRes runs fluxres on f as Main would, and returns the exit status,
// stdout and stderr.
func runRes(t *testing.T, f *fakeClient, argv ...string) (int, string, string) {
	t.Helper()
	t.Setenv("FLUXQ_F58_FORCE_ASCII", "1")
	app := newApp(f.open)
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	code := run(app, append([]string{"fluxres"}, argv...))
	return code, out.String(), errOut.String()
}

func u32(n uint32) *uint32 { return &n }
func boolp(b bool) *bool   { return &b }

func TestReserveParams(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want api.ReserveParams
	}{
		{"create -N", []string{"create", "-N", "2"}, api.ReserveParams{Op: "create", Count: 2}},
		{"create -N attached", []string{"create", "-N2"}, api.ReserveParams{Op: "create", Count: 2}},
		{"create everything", []string{"create", "--nodelist", "node[1-2]", "--time", "30m", "--warn", "60",
			"--req-id", "job-a", "--share", "--target", "f2a", "--inherit", "child-default"},
			api.ReserveParams{Op: "create", Nodelist: "node[1-2]", Time: 1800, Warn: u32(60), ReqID: "job-a",
				Share: boolp(true), Target: "f2a", Inherit: "child-default"}},
		{"create share=false is sent", []string{"create", "-N", "1", "--share=false"}, api.ReserveParams{Op: "create", Count: 1, Share: boolp(false)}},
		{"create --time inf", []string{"create", "-N", "1", "--time", "inf"}, api.ReserveParams{Op: "create", Count: 1, TimeInf: true}},
		{"create --warn 0 is sent", []string{"create", "-N", "1", "--warn", "0"}, api.ReserveParams{Op: "create", Count: 1, Warn: u32(0)}},
		// docs/cli.md: options may come before or after positional arguments.
		{"extend options first", []string{"extend", "-N", "2", "r1"}, api.ReserveParams{Op: "extend", ID: "r1", Count: 2}},
		{"extend options last", []string{"extend", "r1", "-N", "2"}, api.ReserveParams{Op: "extend", ID: "r1", Count: 2}},
		{"extend +FSD", []string{"extend", "r1", "--time", "+5m"}, api.ReserveParams{Op: "extend", ID: "r1", Time: 300}},
		{"extend FSD adds too", []string{"extend", "--time", "5m", "r1"}, api.ReserveParams{Op: "extend", ID: "r1", Time: 300}},
		{"extend by req-id", []string{"extend", "--req-id", "job-a", "--nodelist", "node3", "--inherit", "none"},
			api.ReserveParams{Op: "extend", ReqID: "job-a", Nodelist: "node3", Inherit: "none"}},
		// The instance says PMIX_ERR_BAD_PARAM for an extend without id,
		// after an unsupported inheritance: the CLI sends it as it is.
		{"extend without id is the instance's to reject", []string{"extend", "-N", "1"}, api.ReserveParams{Op: "extend", Count: 1}},
		{"release by id", []string{"release", "r2"}, api.ReserveParams{Op: "release", ID: "r2"}},
		{"release by req-id", []string{"release", "--req-id", "x"}, api.ReserveParams{Op: "release", ReqID: "x"}},
		{"reclaim", []string{"reclaim", "r3", "--as-scheduler"}, api.ReserveParams{Op: "reclaim", ID: "r3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeClient{}
			code, _, stderr := runRes(t, f, append([]string{"reservation"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if len(f.reserves) != 1 {
				t.Fatalf("%d requests, want 1", len(f.reserves))
			}
			if diff := cmp.Diff(tt.want, f.reserves[0]); diff != "" {
				t.Errorf("ReserveParams (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReserveUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"bad --time", []string{"create", "-N", "1", "--time", "soon"}, "fluxres: reservation create: --time: invalid Flux standard duration"},
		{"negative --time", []string{"extend", "r1", "--time", "-5m"}, "fluxres: reservation extend: --time:"},
		{"bad --inherit", []string{"create", "-N", "1", "--inherit", "parent"}, `fluxres: reservation create: --inherit: inheritance "parent" is not one of`},
		{"bad --inherit on extend", []string{"extend", "r1", "--inherit", "CHILD"}, "fluxres: reservation extend: --inherit:"},
		{"-N 0", []string{"create", "-N", "0"}, "fluxres: reservation create: -N: node count must be an integer >= 1"},
		{"bad --warn", []string{"create", "-N", "1", "--time", "1h", "--warn", "1m"}, `fluxres: reservation create: --warn: "1m" is not a number of seconds`},
		{"two ids", []string{"extend", "r1", "r2", "-N", "1"}, "fluxres: reservation extend: extend takes one allocation id"},
		{"create with an argument", []string{"create", "r1"}, "fluxres: reservation create: create takes no arguments"},
		{"unknown flag", []string{"create", "--nodes-please", "2"}, "unrecognized option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeClient{}
			code, stdout, stderr := runRes(t, f, append([]string{"reservation"}, tt.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
			}
			if !strings.Contains(stderr, tt.msg) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.msg)
			}
			if stdout != "" || len(f.reserves) != 0 {
				t.Errorf("stdout %q, %d requests: want none", stdout, len(f.reserves))
			}
		})
	}
}

func TestReserveOutput(t *testing.T) {
	f := &fakeClient{}
	if code, out, _ := runRes(t, f, "reservation", "create", "-N", "1"); code != 0 || out != "r1\n" {
		t.Errorf("create: exit %d, stdout %q; want r1", code, out)
	}
	if code, out, _ := runRes(t, f, "reservation", "create", "-N", "1", "--req-id", "job-a"); code != 0 || out != "r1 job-a\n" {
		t.Errorf("create --req-id: exit %d, stdout %q; want \"r1 job-a\"", code, out)
	}
	if code, out, _ := runRes(t, f, "reservation", "extend", "--req-id", "job-a", "-N", "1"); code != 0 || out != "r1\n" {
		t.Errorf("extend: exit %d, stdout %q; want r1", code, out)
	}
	for _, op := range []string{"release", "reclaim"} {
		if code, out, _ := runRes(t, f, "reservation", op, "r4"); code != 0 || out != "" {
			t.Errorf("%s: exit %d, stdout %q; want nothing", op, code, out)
		}
	}

	f.view = &api.ReservationView{State: "active", Origins: map[string]string{"node1": "startup"}}
	f.view.ID, f.view.ReqID, f.view.Nodes = "r1", "job-a", []string{"node1"}
	code, out, _ := runRes(t, f, "reservation", "create", "--json", "-N", "1", "--req-id", "job-a")
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("create --json: exit %d, %v: %q", code, err, out)
	}
	if got["alloc_id"] != "r1" || got["req_id"] != "job-a" || got["state"] != "active" {
		t.Errorf("create --json = %s", out)
	}
}

func TestReserveRejection(t *testing.T) {
	f := &fakeClient{reserveErr: &reservation.Error{Status: reservation.OutOfResource, Msg: "need 5 nodes, 4 available"}}
	code, out, stderr := runRes(t, f, "reservation", "create", "-N", "5")
	if code != 29 || out != "" {
		t.Errorf("exit %d, stdout %q; want 29 and nothing", code, out)
	}
	if want := "fluxres: reservation create: PMIX_ERR_OUT_OF_RESOURCE: need 5 nodes, 4 available\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

func TestAsScheduler(t *testing.T) {
	for _, args := range [][]string{
		{"reservation", "create", "-N", "1", "--as-scheduler"},
		{"reservation", "extend", "r1", "--as-scheduler", "-N", "1"},
		{"reservation", "release", "--as-scheduler", "r1"},
		{"reservation", "reclaim", "r1", "--as-scheduler"},
		{"reservation", "list", "--as-scheduler"},
		{"reservation", "show", "--as-scheduler", "r1"},
		{"reservation", "events", "--as-scheduler"},
	} {
		f := &fakeClient{list: sampleList()}
		if code, _, stderr := runRes(t, f, args...); code != 0 || !f.asScheduler {
			t.Errorf("%v: exit %d (%s), as scheduler %v", args, code, stderr, f.asScheduler)
		}
	}
}

func sampleList() *api.ReservationList {
	job := fluid.ID(1 << 30)
	r1 := api.ReservationView{State: "active", Origins: map[string]string{"node1": "startup", "node2": "startup", "spare0": "spare"},
		LiveChildren: []fluid.ID{job + 1}}
	r1.Reservation = reservation.Reservation{
		ID: "r1", ReqID: "job-a", Owner: reservation.ToolNS("alice"),
		Owners:    []reservation.Namespace{reservation.ToolNS("alice"), reservation.JobNS(job + 1)},
		Requester: reservation.ToolNS("alice"), RequesterClass: reservation.Tool,
		Inheritance: reservation.InheritChild, Nodes: []string{"node1", "node2", "spare0"},
		Created: 1700000000, Warn: 60,
		History: []reservation.Event{
			{Time: 1700000000, Name: "created", Detail: map[string]any{"nodes": []any{"node1", "node2"}}},
			{Time: 1700000010.5, Name: "extended", Detail: map[string]any{"nodes": []any{"spare0"}, "time": 60}},
		},
	}
	r2 := api.ReservationView{State: "ended", Origins: map[string]string{}, LiveChildren: []fluid.ID{}}
	r2.Reservation = reservation.Reservation{
		ID: "r2", Owner: reservation.JobNS(job), Owners: []reservation.Namespace{reservation.JobNS(job)},
		Requester: reservation.JobNS(job), RequesterClass: reservation.Application, Share: true,
		Nodes: []string{"node3"}, Created: 1700000000, Ended: 1700000100, EndReason: reservation.EndOwnerExit,
		History: []reservation.Event{
			{Time: 1700000000, Name: "created"},
			{Time: 1700000100, Name: "ended", Detail: map[string]any{"reason": "owner-exit"}},
		},
	}
	nodes := []api.NodeView{
		{Node: reservation.Node{Name: "node0", Rank: 0, Origin: reservation.Startup, In: true}, Session: "default"},
		{Node: reservation.Node{Name: "node1", Rank: 1, Origin: reservation.Startup, In: true, Holder: "r1"}, Session: "r1"},
		{Node: reservation.Node{Name: "spare1", Rank: 5, Origin: reservation.Spare}, Session: ""},
	}
	return &api.ReservationList{Reservations: []api.ReservationView{r1, r2}, Nodes: nodes}
}

func TestReservationList(t *testing.T) {
	f := &fakeClient{list: sampleList()}
	code, out, stderr := runRes(t, f, "reservation", "list", "-a")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "ALLOC_ID STATE  OWNER      NNODES NODELIST              SHARE INHERIT EXPIRES\n" +
		"r1       active tool:alice      3 node[1-2],spare0      no    child   -\n" +
		"r2       ended  " + fmtID(fluid.ID(1<<30)) + "          1 node3                 yes   default owner-exit\n"
	if diff := cmp.Diff(strings.Fields(want), strings.Fields(out)); diff != "" {
		t.Errorf("list (-want +got):\n%s\n%s", diff, out)
	}
	if !f.all[0] {
		t.Errorf("-a did not ask for ended reservations")
	}
	code, out, _ = runRes(t, f, "reservation", "list", "-n", "-o", "{{.alloc_id}}:{{.state}}")
	if code != 0 || out != "r1:active\nr2:ended\n" {
		t.Errorf("-o: exit %d, %q", code, out)
	}
	if f.all[1] {
		t.Errorf("list without -a asked for ended reservations")
	}
	code, out, _ = runRes(t, f, "reservation", "list", "--json")
	var doc api.ReservationList
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Reservations) != 2 || len(doc.Nodes) != 3 {
		t.Errorf("--json: exit %d, %v: %s", code, err, out)
	}
}

func TestReservationShow(t *testing.T) {
	t.Setenv("TZ", "UTC")
	f := &fakeClient{list: sampleList()}
	code, out, stderr := runRes(t, f, "reservation", "show", "r1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range []string{
		"alloc_id: r1\n", "req_id: job-a\n", "state: active\n", "owner: tool:alice\n",
		"owners: tool:alice," + fmtID(fluid.ID(1<<30+1)) + "\n",
		"requester: tool:alice (tool)\n", "share: no\n", "inheritance: child\n", "warn: 60s\n",
		"nodes:\n  node1 (startup)\n  node2 (startup)\n  spare0 (spare)\n",
		"live children: " + fmtID(fluid.ID(1<<30+1)) + "\n",
		"history:\n  2023-11-14T22:13:20.000000",
		" created nodes=node1,node2\n",
		"T22:13:30.500000", " extended nodes=spare0 time=60\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("show lacks %q:\n%s", line, out)
		}
	}
	_, out, _ = runRes(t, f, "reservation", "show", "r2")
	if !strings.Contains(out, "state: ended\n") || !strings.Contains(out, " ended reason=owner-exit\n") ||
		strings.Contains(out, "req_id") || !strings.Contains(out, "live children: -\n") {
		t.Errorf("show r2:\n%s", out)
	}
	_, out, _ = runRes(t, f, "reservation", "show", "--json", "r1")
	var v api.ReservationView
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID != "r1" || v.Origins["spare0"] != "spare" {
		t.Errorf("show --json: %v: %s", err, out)
	}
	if !f.all[0] {
		t.Errorf("show did not look among ended reservations")
	}

	code, out, stderr = runRes(t, f, "reservation", "show", "x")
	if code != 46 || out != "" || stderr != "fluxres: reservation show: PMIX_ERR_NOT_FOUND: allocation \"x\" does not exist\n" {
		t.Errorf("show x: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if code, _, _ := runRes(t, f, "reservation", "show"); code != 2 {
		t.Errorf("show without id: exit %d, want 2", code)
	}
}

func TestReservationEvents(t *testing.T) {
	t.Setenv("TZ", "UTC")
	f := &fakeClient{events: []api.ToolEvent{
		{Seq: 1, Warning: reservation.Warning{AllocID: "r1", ReqID: "job-a", TimeRemaining: 60, To: reservation.ToolNS("alice"), Time: 1700000000}},
		{Seq: 2, Warning: reservation.Warning{AllocID: "r2", TimeRemaining: 5, To: reservation.ToolNS("alice"), Time: 1700000001}},
	}}
	code, out, _ := runRes(t, f, "reservation", "events")
	want := "2023-11-14T22:13:20.000000Z alloc-timeout-warning alloc_id=r1 req_id=job-a time_remaining=60\n" +
		"2023-11-14T22:13:21.000000Z alloc-timeout-warning alloc_id=r2 time_remaining=5\n"
	if code != 0 || out != want {
		t.Errorf("events: exit %d\n%s\nwant\n%s", code, out, want)
	}
	_, out, _ = runRes(t, f, "reservation", "events", "--json")
	var arr []api.ToolEvent
	if err := json.Unmarshal([]byte(out), &arr); err != nil || len(arr) != 2 || arr[1].AllocID != "r2" {
		t.Errorf("events --json: %v: %s", err, out)
	}
	_, out, _ = runRes(t, f, "reservation", "events", "--json", "--follow")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var e api.ToolEvent
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &e) != nil || e.ReqID != "job-a" {
		t.Errorf("events --json --follow: %s", out)
	}
	if diff := cmp.Diff([]bool{false, false, true}, f.follows); diff != "" {
		t.Errorf("follow (-want +got):\n%s", diff)
	}
	f.events = nil
	if _, out, _ = runRes(t, f, "reservation", "events", "--json"); out != "[]\n" {
		t.Errorf("no events --json: %q, want []", out)
	}
}

// submittedJob decodes the one job a target command submitted.
func submittedJob(t *testing.T, f *fakeClient) (targets []any, command []any) {
	t.Helper()
	if len(f.submits) != 1 || len(f.submits[0]) != 1 {
		t.Fatalf("submits: %v", f.submits)
	}
	var js struct {
		Tasks []struct {
			Command []any `json:"command"`
		} `json:"tasks"`
		Attributes struct {
			System map[string]any `json:"system"`
		} `json:"attributes"`
	}
	if err := json.Unmarshal(f.submits[0][0].Jobspec, &js); err != nil {
		t.Fatal(err)
	}
	targets, _ = js.Attributes.System["targets"].([]any)
	return targets, js.Tasks[0].Command
}

func TestReservationTarget(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		targets     []any
		command     []any
		asScheduler bool
	}{
		{"list then --", []string{"r1", "--", "hostname"}, []any{"r1"}, []any{"hostname"}, false},
		{"union with default", []string{"r1,default", "-N", "1", "sh", "-c", "true"}, []any{"r1", "default"}, []any{"sh", "-c", "true"}, false},
		{"options first", []string{"-N", "1", "--as-scheduler", "r2", "--", "sleep", "1"}, []any{"r2"}, []any{"sleep", "1"}, true},
		// The job's own options stay the job's, even submit's letters.
		{"job options", []string{"r1", "-n", "1", "ls", "-n", "-N", "2"}, []any{"r1"}, []any{"ls", "-n", "-N", "2"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeClient{}
			code, out, stderr := runRes(t, f, append([]string{"reservation", "target"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := fmtID(fluid.ID(1000)) + "\n"; out != want {
				t.Errorf("stdout %q, want %q", out, want)
			}
			targets, command := submittedJob(t, f)
			if diff := cmp.Diff(tt.targets, targets); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.command, command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if f.asScheduler != tt.asScheduler {
				t.Errorf("as scheduler %v, want %v", f.asScheduler, tt.asScheduler)
			}
		})
	}
	for _, args := range [][]string{{}, {"--", "hostname"}, {"-N", "1"}, {"r1"}} {
		f := &fakeClient{}
		code, _, stderr := runRes(t, f, append([]string{"reservation", "target"}, args...)...)
		if code != 2 || len(f.submits) != 0 || !strings.HasPrefix(stderr, "fluxres: reservation target: ") {
			t.Errorf("target %v: exit %d, %d submits, stderr %q; want a usage error", args, code, len(f.submits), stderr)
		}
	}
}

func TestMoveTargets(t *testing.T) {
	app := newApp(nil)
	tests := []struct{ in, want string }{
		{"fluxres reservation target r1 -- true", "fluxres reservation target --target r1 -- true"},
		{"fluxres --state-dir d reservation target -N 1 r1 -n 2 true", "fluxres --state-dir d reservation target --target r1 -N 1 -n 2 true"},
		{"fluxres reservation target -N1 r1 true", "fluxres reservation target --target r1 -N1 true"},
		{"fluxres reservation target -- true", "fluxres reservation target -- true"},
		{"fluxres reservation extend r1 -N 2", "fluxres reservation extend r1 -N 2"},
		{"fluxres list", "fluxres list"},
	}
	for _, tt := range tests {
		got := strings.Join(moveTargets(app, reservationTarget(app), strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("moveTargets(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
