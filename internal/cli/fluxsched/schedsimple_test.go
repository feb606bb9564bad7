package fluxsched

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

func lines(t *testing.T, msgs ...wire.Message) string {
	t.Helper()
	var b strings.Builder
	for _, m := range msgs {
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// must is for messages built from values that always encode.
func must(m wire.Message, err error) wire.Message {
	if err != nil {
		panic(err)
	}
	return m
}

// The hidden command speaks RFC 27 as JSON lines on stdin/stdout and
// exits 0 when stdin ends.
func TestSchedSimpleCommand(t *testing.T) {
	inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node0", Cores: "0-3"}})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := inv.MarshalJSON()
	up := "0"
	js, _ := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, NTasks: 2})
	spec, _ := js.MarshalJSON()
	in := lines(t,
		must(wire.NewResponse(schedproto.TopicAcquire, schedproto.Acquire{Resources: res, Up: &up})),
		wire.NewError(schedproto.TopicHello, wire.ENODATA, ""),
		must(wire.NewResponse(schedproto.TopicReady, schedproto.ReadyResponse{})),
		must(wire.NewRequest(schedproto.TopicAlloc, schedproto.Alloc{ID: 7, Priority: 16, UserID: 1, Jobspec: spec})),
	)
	var out, errOut bytes.Buffer
	app := &cli.App{Name: "fluxsched", Commands: []*cli.Command{SchedSimpleCommand()},
		Reader: strings.NewReader(in), Writer: &out, ErrWriter: &errOut}
	if code := exitcode.Run(app, []string{"fluxsched", "sched-simple", "--policy", "first", "--limit", "3"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m wire.Message
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		got = append(got, string(m.Type)+" "+m.Topic+" "+string(m.Payload))
	}
	want := []string{
		"request resource.acquire ",
		"request job-manager.sched-hello ",
		`request job-manager.sched-ready {"mode":"limited","limit":3}`,
		`response sched.alloc {"id":7,"type":0,"annotations":{"sched":{"resource_summary":"rank0/core[0-1]","reason_pending":null,"t_estimate":null}},"R":`,
	}
	if len(got) == 4 {
		got[3] = got[3][:strings.Index(got[3], `"R":`)+4]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestSchedSimpleUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "fcfs"}, "--policy: unknown allocation mode: fcfs"},
		{[]string{"--limit", "-1"}, "--limit: must be 0 (unlimited) or more, not -1"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tc := range tests {
		var errOut bytes.Buffer
		app := &cli.App{Name: "fluxsched", Commands: []*cli.Command{SchedSimpleCommand()},
			Reader: strings.NewReader(""), Writer: &bytes.Buffer{}, ErrWriter: &errOut}
		code := exitcode.Run(app, append([]string{"fluxsched", "sched-simple"}, tc.args...))
		if code != exitcode.Usage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), exitcode.Usage, tc.want)
		}
	}
}
