package schedproto

import (
	"testing"

	"github.com/fluxq/fluxq/internal/wire"
)

// BenchmarkDecodeAllocResponse is the job manager reading a SUCCESS as the
// scheduler sends it for a one-core job.
func BenchmarkDecodeAllocResponse(b *testing.B) {
	m := msg(TopicAlloc, wire.Response, `{"id":123456789,"type":0,"annotations":{"sched":{"resource_summary":"rank0/core3"}},"R":{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"3"}}],"nodelist":["node0"],"starttime":0,"expiration":0}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeAllocResponse(m); err != nil {
			b.Fatal(err)
		}
	}
}
