package server

import (
	"bufio"
	"fmt"
	"net"
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

// TestResultInParts: to a caller that asks for parts, a long listing is
// part lines and a final line whose arrays, joined, are the listing
// encoded whole; a short one, or one to a caller that does not ask, is
// the one line it always was.
func TestResultInParts(t *testing.T) {
	for _, n := range []int{listChunk, listChunk + 1, 2 * listChunk, 3*listChunk + 7} {
		list := make([]api.JobSummary, n)
		for i := range list {
			list[i] = api.JobSummary{ID: fluid.ID(i + 1), Name: fmt.Sprintf("job<%d>", i), State: job.Sched}
		}
		a, b := net.Pipe()
		got := make(chan []string, 1)
		go func() {
			var ls []string
			r := bufio.NewReaderSize(b, 1<<20)
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					break
				}
				ls = append(ls, l)
			}
			got <- ls
		}()
		(&writer{conn: a, parts: true}).result(list)
		a.Close()
		ls := <-got
		b.Close()
		wantLines := (n + listChunk - 1) / listChunk
		if len(ls) != wantLines {
			t.Fatalf("%d jobs: %d lines, want %d", n, len(ls), wantLines)
		}
		var joined []api.JobSummary
		for i, l := range ls {
			part, ok := api.PartOf([]byte(l))
			if i < len(ls)-1 {
				if !ok {
					t.Fatalf("%d jobs: line %d is not a part: %.40q", n, i, l)
				}
			} else {
				var r api.Reply
				if ok || gojson.Unmarshal([]byte(l), &r) != nil || !r.Final {
					t.Fatalf("%d jobs: the last line is not a final result: %.40q", n, l)
				}
				part = r.Result
			}
			var v []api.JobSummary
			if err := gojson.Unmarshal(part, &v); err != nil {
				t.Fatalf("%d jobs: line %d: %v", n, i, err)
			}
			joined = append(joined, v...)
		}
		want, _ := gojson.Marshal(list)
		if g, _ := gojson.Marshal(joined); string(g) != string(want) {
			t.Errorf("%d jobs: the parts joined are not the listing", n)
		}
	}
}
