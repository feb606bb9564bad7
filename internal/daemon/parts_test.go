package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/daemon"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/server"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// A listing of more jobs than one part holds, through a served socket:
// the client's listing, taken in parts, is the one line a caller that
// asks for no parts gets, job for job.
func TestListingInParts(t *testing.T) {
	opts := options(t, twoCores)
	d, err := daemon.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	reqs := submitRequests(t, 2*8192+5, []string{"true"})
	for i := range reqs {
		reqs[i].Urgency = 0 // held: they stay pending
	}
	_, err = d.Loop().Do(context.Background(), func(tx *store.Tx, jm *jobmgr.Manager) (any, error) {
		_, recs, err := state.Submit(tx, jm.Now(), reqs, nil)
		if err != nil {
			return nil, err
		}
		return nil, jm.Submitted(tx, recs)
	})
	if err != nil {
		t.Fatal(err)
	}
	q := api.JobsQuery{States: job.All, AllUsers: true}
	cl, err := client.Open(context.Background(), client.Options{StateDir: opts.StateDir})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got, err := cl.Jobs(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}

	c, err := net.Dial("unix", server.SocketPath(opts.StateDir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	params, _ := json.Marshal(q)
	line, _ := json.Marshal(api.Call{Method: api.Jobs.Name, Params: params})
	if _, err := c.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	raw, err := bufio.NewReaderSize(c, 1<<20).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var r api.Reply
	var want []api.JobSummary
	if err := gojson.Unmarshal(raw, &r); err != nil || !r.Final {
		t.Fatalf("the one-line answer: %v (final %v)", err, r.Final)
	}
	if err := gojson.Unmarshal(r.Result, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(reqs) || len(want) != len(reqs) {
		t.Fatalf("listed %d jobs in parts, %d in one line; want %d", len(got), len(want), len(reqs))
	}
	// And the answer to a caller that asks is in parts indeed.
	c2, err := net.Dial("unix", server.SocketPath(opts.StateDir))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	line, _ = json.Marshal(api.Call{Method: api.Jobs.Name, Params: params, Parts: true})
	if _, err := c2.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(c2, 1<<20)
	parts := 0
	for {
		l, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := api.PartOf(l); !ok {
			break
		}
		parts++
	}
	if parts != 2 {
		t.Errorf("%d part lines before the final one, want 2", parts)
	}
	g, _ := gojson.Marshal(got)
	w, _ := gojson.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("the listing in parts differs from the one line")
	}
}
