package fluxres

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/rset"
)

// resClient is an instance in memory with resources: its inventory, what
// jobs hold, drained ranks, and one running job's R.
type resClient struct {
	*fakeClient
	res   *api.ResourceInfo
	jobR  *rset.R
	jobID fluid.ID
}

func (f *resClient) Resources(context.Context) (*api.ResourceInfo, error) { return f.res, nil }

func (f *resClient) Job(_ context.Context, id fluid.ID) (*api.JobInfo, error) {
	info := &api.JobInfo{Summary: api.JobSummary{ID: id, State: job.Run}}
	if f.jobR != nil && id == f.jobID {
		b, err := f.jobR.MarshalJSON()
		if err != nil {
			return nil, err
		}
		info.R = b
	}
	return info, nil
}

// memInstance is two nodes of two cores and 4G each, node1 drained; a
// job holds core 0 and 3G of node0.
func memInstance(t *testing.T, mem bool) *resClient {
	t.Helper()
	var four, three uint64 = 4 << 30, 3 << 30
	if !mem {
		four, three = 0, 0
	}
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "node0", Cores: idset.Of(0, 1), Memory: four},
		{Rank: 1, Hostname: "node1", Cores: idset.Of(0, 1), Memory: four},
	})
	held := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.Of(0), Memory: three}})
	raw := func(r *rset.R) json.RawMessage {
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return &resClient{fakeClient: &fakeClient{}, jobID: fluid.ID(1 << 30), jobR: held,
		res: &api.ResourceInfo{Inventory: raw(inv), Allocated: raw(held), Drained: []api.DrainedRank{{Rank: 1, Reason: "fan"}}}}
}

func runMem(t *testing.T, f *resClient, argv ...string) (int, string, string) {
	t.Helper()
	t.Setenv("FLUXQ_F58_FORCE_ASCII", "1")
	app := newApp(func(*cli.Context) (client.Client, error) { return f, nil })
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	code := run(app, append([]string{"fluxres"}, argv...))
	return code, out.String(), errOut.String()
}

// Issue 26: every inventory view shows memory where the hosts' memory is
// known, in FormatMemory's words (--json in bytes); where none is known,
// each prints exactly as before memory was a resource.
func TestMemoryViews(t *testing.T) {
	jobID := fluid.ID(1 << 30).String()
	tests := []struct {
		name string
		mem  bool
		args []string
		want []string // patterns that match lines of stdout
		not  []string // patterns no line may match
	}{
		{name: "info", mem: true, args: []string{"info"}, want: []string{`^2 Nodes, 4 Cores, 0 GPUs, 8G Memory$`}},
		{name: "info without memory", args: []string{"info"}, want: []string{`^2 Nodes, 4 Cores, 0 GPUs$`}},

		{name: "list", mem: true, args: []string{"list"}, want: []string{
			`^STATE +NNODES +NCORES +NGPUS +MEMORY +NODELIST$`,
			`^free +1 +1 +0 +1G +node0$`,
			`^allocated +1 +1 +0 +3G +node0$`,
			`^down +1 +2 +0 +4G +node1$`,
		}},
		{name: "list without memory", args: []string{"list"}, want: []string{
			`^STATE +NNODES +NCORES +NGPUS +NODELIST$`,
			`^free +1 +1 +0 +node0$`,
		}, not: []string{`MEMORY`, `G `}},
		{name: "list --json", mem: true, args: []string{"list", "--json"}, want: []string{
			`"memory":1073741824,.*"state":"free"`, `"memory":3221225472,.*"state":"allocated"`}},
		{name: "list --json without memory", args: []string{"list", "--json"}, not: []string{`memory`}},
		{name: "list -o memory", mem: true, args: []string{"list", "-n", "-o", "{state} {memory}"},
			want: []string{`^free 1G$`, `^allocated 3G$`, `^down 4G$`}},
		{name: "list -o memory, template bytes", mem: true, args: []string{"list", "-s", "free", "-o", "{{.memory}}"},
			want: []string{`^1073741824$`}},
		{name: "list -o memory without memory drops", args: []string{"list", "-n", "-o", "{state}?:{memory}"},
			want: []string{`^free$`, `^allocated$`}},
		{name: "list -o help", mem: true, args: []string{"list", "-o", "help"},
			want: []string{`^  memory \* +MEMORY +memory, as the MEMORY column shows it`}},

		{name: "status", mem: true, args: []string{"status"}, want: []string{
			`^ +STATE +NNODES +MEMORY +MEMFREE +NODELIST +REASON$`,
			`^ +avail +1 +4G +1G +node0 +$`,
			`^ +drained +1 +4G +4G +node1 +fan$`,
		}},
		{name: "status without memory", args: []string{"status"}, want: []string{
			`^ +STATE +NNODES +NODELIST +REASON$`, `^ +avail +1 node0 +$`,
		}, not: []string{`MEM`}},
		{name: "status --json", mem: true, args: []string{"status", "--json"}, want: []string{
			`"hostname":"node0","state":"avail","memory":4294967296,"memory_free":1073741824\}`,
			`"hostname":"node1","state":"drained","reason":"fan","memory":4294967296,"memory_free":4294967296\}`,
		}},
		{name: "status --json without memory", args: []string{"status", "--json"}, not: []string{`memory`}},

		{name: "allocated", mem: true, args: []string{"allocated"}, want: []string{`^node0: rank0/core0 \(1 Node, 1 Core, 0 GPUs, 3G Memory\)$`}},
		{name: "allocated JOBID", mem: true, args: []string{"allocated", jobID}, want: []string{`^node0: rank0/core0 \(1 Node, 1 Core, 0 GPUs, 3G Memory\)$`}},
		{name: "allocated --json", mem: true, args: []string{"allocated", "--json"}, want: []string{`"memory":3221225472`}},
		{name: "allocated without memory", args: []string{"allocated"}, want: []string{`^node0: rank0/core0 \(1 Node, 1 Core, 0 GPUs\)$`}},
		{name: "available", mem: true, args: []string{"available"}, want: []string{`^node0: rank0/core1 \(1 Node, 1 Core, 0 GPUs, 1G Memory\)$`}},
		{name: "available without memory", args: []string{"available"}, want: []string{`^node0: rank0/core1 \(1 Node, 1 Core, 0 GPUs\)$`}},
		{name: "find", mem: true, args: []string{"find", "host:node1"}, want: []string{`^node1: rank1/core\[0-1\] \(1 Node, 2 Cores, 0 GPUs, 4G Memory\)$`}},
		{name: "find without memory", args: []string{"find", "host:node1"}, want: []string{`^node1: rank1/core\[0-1\] \(1 Node, 2 Cores, 0 GPUs\)$`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runMem(t, memInstance(t, tt.mem), tt.args...)
			if code != 0 {
				t.Fatalf("fluxres %s: exit %d: %s", strings.Join(tt.args, " "), code, stderr)
			}
			for _, p := range tt.want {
				if !regexp.MustCompile("(?m)" + p).MatchString(out) {
					t.Errorf("fluxres %s: no line matches %s in:\n%s", strings.Join(tt.args, " "), p, out)
				}
			}
			for _, p := range tt.not {
				if regexp.MustCompile("(?m)" + p).MatchString(out) {
					t.Errorf("fluxres %s: a line matches %s in:\n%s", strings.Join(tt.args, " "), p, out)
				}
			}
		})
	}
}
