package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// endedJobs submits n held jobs to a live server and cancels them: n
// inactive jobs, with their summaries stored, in one snapshot.
func endedJobs(t testing.TB, path string, n int) []fluid.ID {
	t.Helper()
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp", Name: "held"})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	jobs := make([]api.SubmitJob, n)
	for i := range jobs {
		jobs[i] = api.SubmitJob{Jobspec: spec}
	}
	_, final := request(t, path, "submit", api.SubmitParams{Jobs: jobs})
	var ids []fluid.ID
	if err := json.Unmarshal(final.Result, &ids); err != nil || len(ids) != n {
		t.Fatalf("submit: %s %v", final.Result, final.Err())
	}
	if _, final := request(t, path, "cancel", api.CancelParams{IDs: ids}); final.Err() != nil {
		t.Fatal(final.Err())
	}
	return ids
}

// All the jobs one snapshot finds ended go out in one batch: every line
// of it must reach the caller, each whole, in the order asked for.
func TestWaitAllBatchInOrder(t *testing.T) {
	path := liveServer(t)
	ids := endedJobs(t, path, 300)
	asked := slices.Clone(ids)
	slices.Reverse(asked)
	asked = append(asked[150:], asked[:150]...)
	stream, final := request(t, path, "wait-all", api.IDsParams{IDs: asked})
	if err := final.Err(); err != nil || !final.Final {
		t.Fatalf("final line %+v: %v", final, err)
	}
	if len(stream) != len(asked) {
		t.Fatalf("%d lines, want %d", len(stream), len(asked))
	}
	for i, line := range stream {
		s, err := api.StreamValue[api.JobSummary](&line)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if s.ID != asked[i] || s.State != job.Inactive || s.Result != job.Canceled || s.Name != "held" {
			t.Fatalf("line %d: %+v, want job %s canceled", i, s, asked[i])
		}
	}
}

// BenchmarkWaitAll is the server's cost per job of a wait-all stream of
// jobs already ended; the caller only counts lines.
func BenchmarkWaitAll(b *testing.B) {
	const n = 1000
	path := liveServer(b)
	ids := endedJobs(b, path, n)
	params, _ := json.Marshal(api.IDsParams{IDs: ids})
	call, _ := json.Marshal(api.Call{Method: "wait-all", Params: params})
	call = append(call, '\n')
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c, err := net.Dial("unix", path)
		if err != nil {
			b.Fatal(err)
		}
		c.Write(call)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReaderSize(c, 64<<10)
		lines := 0
		for {
			l, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatalf("after %d lines: %v", lines, err)
			}
			lines++
			if bytes.Contains(l, []byte(`"final":true`)) {
				break
			}
		}
		c.Close()
		if lines != n+1 {
			b.Fatalf("%d lines, want %d", lines, n+1)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/job")
}

// A stream's progress lines, written without json.Encoder, are the lines
// it writes for the Reply they stand for; an event line is too.
func TestStreamLinesAsEncoderWrites(t *testing.T) {
	m := api.Method[api.None, api.None, any]{Spec: api.Spec{Name: "test-stream", Stream: true}}
	values := []any{
		api.QueueCounts{Active: 3},
		api.JobSummary{ID: 2, Name: "x<y && y>z \u2028\n\"q\""},
		map[string]string{"<": ">&"},
		eventlog.Event{Name: "clean", Timestamp: 1.5, Context: map[string]any{"a": "<b>"}},
	}
	handle(m, func(ctx context.Context, s *Server, c *caller, p api.None, emit func(any) error) (api.None, error) {
		for _, v := range values {
			if err := emit(v); err != nil {
				return api.None{}, err
			}
		}
		return api.None{}, nil
	})
	defer delete(handlers, m.Name)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	got := make(chan []string, 1)
	go func() {
		r := bufio.NewReader(b)
		var lines []string
		for range len(values) + 1 {
			l, _ := r.ReadString('\n')
			lines = append(lines, l)
		}
		got <- lines
	}()
	if err := handlers[m.Name](context.Background(), nil, nil, nil, &writer{conn: a}); err != nil {
		t.Fatal(err)
	}
	lines := <-got
	for i, v := range values {
		r, _ := api.StreamLine(v)
		var want bytes.Buffer
		json.NewEncoder(&want).Encode(r)
		if lines[i] != want.String() {
			t.Errorf("line %d: %q, want %q", i, lines[i], want.String())
		}
	}
	if lines[len(values)] != "{\"result\":{},\"final\":true}\n" {
		t.Errorf("final line %q", lines[len(values)])
	}
}
