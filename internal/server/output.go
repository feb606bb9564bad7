package server

import (
	"context"
	"sync"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Bounds of one job-output answer: what is read of each host's stream
// (so that a job of many hosts answers within a few MiB per call, and a
// follower asks again for the rest), and how many hosts are asked at once.
const (
	outputChunk    = 256 << 10
	outputParallel = 16
)

func init() {
	handle(api.JobOutput, func(ctx context.Context, s *Server, c *caller, p api.OutputParams, _ func(api.None) error) (api.Outputs, error) {
		return s.jobOutput(ctx, c, p)
	})
}

// jobOutput answers job-output: each of the job's hosts' stdout and
// stderr from where the caller left off, read from the host's exec agent
// through the exec service (exec.Outputs). A host that cannot be read is
// one chunk's Error, naming it; the others are answered all the same.
func (s *Server) jobOutput(ctx context.Context, c *caller, p api.OutputParams) (api.Outputs, error) {
	if s.Output == nil {
		return api.Outputs{}, api.ErrOutputLocal
	}
	var info api.JobInfo
	err := s.Store.View(func(tx *store.Tx) error {
		var err error
		info, err = state.ReadJob(tx, c.as, api.IDParams{ID: p.ID})
		return err
	})
	if err != nil {
		return api.Outputs{}, err
	}
	out := api.Outputs{Hosts: []string{}, Chunks: []api.OutputChunk{}}
	if len(info.R) == 0 {
		return out, nil // not allocated: it ran nowhere
	}
	r, err := rset.Parse(info.R)
	if err != nil {
		return api.Outputs{}, err
	}
	seen := map[string]bool{}
	for _, n := range r.Nodes() {
		if !seen[n.Hostname] {
			seen[n.Hostname] = true
			out.Hosts = append(out.Hosts, n.Hostname)
		}
	}
	from := map[[2]string]int64{}
	for _, f := range p.From {
		if f.Offset < 0 {
			return api.Outputs{}, api.Errorf(api.CodeBadRequest, "job-output: offset %d of %s's %s is negative", f.Offset, f.Host, f.Stream)
		}
		from[[2]string{f.Host, f.Stream}] = f.Offset
	}
	for _, h := range out.Hosts {
		for _, st := range []string{agentproto.StreamStdout, agentproto.StreamStderr} {
			out.Chunks = append(out.Chunks, api.OutputChunk{Host: h, Stream: st, Offset: from[[2]string{h, st}]})
		}
	}
	sem := make(chan struct{}, outputParallel)
	var wg sync.WaitGroup
	for i := range out.Chunks {
		ch := &out.Chunks[i]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			got, err := s.Output.Read(ctx, ch.Host, agentproto.OutputRequest{ID: p.ID, UserID: info.Summary.UserID,
				Stream: ch.Stream, Offset: ch.Offset, Max: outputChunk})
			if err != nil {
				ch.Error = "host " + ch.Host + ": " + err.Error()
				return
			}
			ch.Data = got.Data
			ch.More = ch.Offset+int64(len(got.Data)) < got.Size
		}()
	}
	wg.Wait()
	return out, nil
}
