package client

import (
	"encoding/json"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/job"
)

// waitLine is a wait-all stream line as fluxsched writes it for a `true`
// job that completed.
func waitLine() []byte {
	rc, ws := 0, 0
	s := api.JobSummary{
		ID: 123456789012345, UserID: 0, Queue: "", Name: "true", State: job.Inactive, Result: job.Completed,
		Urgency: 16, Priority: 16, NTasks: 1, NNodes: 1, NCores: 1, TSubmit: 1764197000.123456,
		TDepend: 1764197000.123501, TRun: 1764197000.2, TCleanup: 1764197000.21, TInactive: 1764197000.22,
		Nodelist: "node0", ReturnCode: &rc, WaitStatus: &ws, Usage: &execproto.Usage{},
		Command: []string{"true"}, Cwd: "/tmp",
	}
	raw, _ := json.Marshal(s)
	return api.AppendProgressLine(nil, raw)
}

// BenchmarkWaitLine is the client's decoding of one wait-all line: the
// reply, then the summary it carries.
func BenchmarkWaitLine(b *testing.B) {
	line := waitLine()
	b.ReportAllocs()
	for b.Loop() {
		var resp api.Reply
		if err := decodeReply(line, &resp); err != nil {
			b.Fatal(err)
		}
		if _, err := api.StreamValue[api.JobSummary](&resp); err != nil {
			b.Fatal(err)
		}
	}
}
