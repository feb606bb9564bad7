package server

import (
	"fmt"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
)

// TestAppendResult: a long listing encoded in chunks on every core is the
// bytes of the listing encoded whole, at every length around a chunk's;
// any other answer is encoded as it is.
func TestAppendResult(t *testing.T) {
	for _, n := range []int{0, 1, listChunk - 1, listChunk, listChunk + 1, 2 * listChunk, 3*listChunk + 7} {
		list := make([]api.JobSummary, n)
		for i := range list {
			list[i] = api.JobSummary{ID: fluid.ID(i + 1), UserID: uint32(i % 3), Name: fmt.Sprintf("job<%d>", i), State: job.Sched,
				Annotations: map[string]any{"sched": map[string]any{"reason_pending": "insufficient resources"}}}
		}
		want, err := gojson.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendResult([]byte("x"), list)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "x"+string(want) {
			t.Errorf("%d jobs: appendResult differs from the listing encoded whole (%d bytes, want %d)", n, len(got)-1, len(want))
		}
	}
	got, err := appendResult(nil, api.JobCounts{Total: 2})
	if err != nil || string(got) != `{"states":null,"results":null,"total":2}` {
		t.Errorf("appendResult(counts) = %s, %v", got, err)
	}
}
