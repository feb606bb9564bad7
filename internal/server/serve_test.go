package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// liveServer is a server with its loop over a fresh store of one node, as
// fluxsched assembles them, with an exec service that runs nothing.
func liveServer(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, state.StoreFile), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
	raw, _ := inv.MarshalJSON()
	var qs map[string]queue.State
	err = st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		var err error
		qs, err = state.StartQueues(tx, queue.Anonymous())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	owner := uint32(os.Getuid())
	jm := jobmgr.New(jobmgr.Config{Inventory: inv, Owner: owner})
	jm.SetQueues(queue.Anonymous(), qs)
	schedConn, schedEnd := wire.Pipe()
	execConn, execEnd := wire.Pipe()
	go sched.Run(schedEnd, sched.Options{Default: sched.DefaultPolicy(), Limit: 8})
	go func() {
		hello, _ := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: "job-exec"})
		if execEnd.Send(hello) != nil {
			return
		}
		for {
			if _, err := execEnd.Recv(); err != nil {
				return
			}
		}
	}()
	l := loop.New(st, jm, loop.Once(schedConn), loop.Once(execConn), nil)
	path := SocketPath(dir)
	ln, err := Listen(path, false)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Store: st, Loop: l, JobsDir: filepath.Join(dir, state.JobsFolder), Owner: owner}
	ctx, cancel := context.WithCancel(context.Background())
	ran, served := make(chan error, 1), make(chan error, 1)
	go func() { ran <- l.Run(ctx) }()
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-ran
		<-served
		schedConn.Close()
		execConn.Close()
		st.Close()
	})
	return path
}

// request sends one call and returns its stream lines and final line.
func request(t testing.TB, path, method string, params any) ([]api.Reply, api.Reply) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := api.Call{Method: method, Timeout: 5}
	if params != nil {
		call.Params, _ = json.Marshal(params)
	}
	line, _ := json.Marshal(call)
	if _, err := c.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	var stream []api.Reply
	for {
		raw, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var rep api.Reply
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		switch {
		case rep.Working:
		case rep.Final || rep.Error != "":
			return stream, rep
		default:
			stream = append(stream, rep)
		}
	}
}

// Every entry answered by a live server, in the order a user would make
// them, over the socket as the client speaks it.
func TestServeEveryEntry(t *testing.T) {
	path := liveServer(t)
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/tmp", Name: "held"})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := js.MarshalJSON()
	ok := func(method string, params, result any) []api.Reply {
		t.Helper()
		stream, final := request(t, path, method, params)
		if err := final.Err(); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if result != nil {
			if err := json.Unmarshal(final.Result, result); err != nil {
				t.Fatalf("%s: result %s: %v", method, final.Result, err)
			}
		}
		return stream
	}
	var ids []uint64
	ok("submit", api.SubmitParams{Jobs: []api.SubmitJob{{Jobspec: spec, Urgency: 0}}}, &ids)
	if len(ids) != 1 {
		t.Fatalf("submit: %v", ids)
	}
	id := ids[0]
	var sums []api.JobSummary
	ok("jobs", api.JobsQuery{}, &sums)
	if len(sums) != 1 || sums[0].Name != "held" {
		t.Errorf("jobs: %+v", sums)
	}
	var info api.JobInfo
	ok("job", map[string]uint64{"id": id}, &info)
	if info.Summary.Name != "held" || len(info.Eventlog) == 0 {
		t.Errorf("job: %+v", info)
	}
	ok("urgency", map[string]any{"id": id, "urgency": 0}, nil) // held still: nothing runs it
	if evs := ok("events", map[string]any{"id": id}, nil); len(evs) == 0 || evs[0].Event == nil || evs[0].Event.Name != "submit" {
		t.Errorf("events: %+v", evs)
	}
	var qi api.QueueInfo
	ok("queues", nil, &qi)
	if qi.Counts[""].Active != 1 {
		t.Errorf("queues: %+v", qi.Counts)
	}
	off := false
	ok("queue-change", api.QueueChange{All: true, Enable: &off}, &qi)
	if qi.States[""].Enabled {
		t.Errorf("queue-change: %+v", qi.States)
	}
	ok("drain", api.DrainParams{Ranks: "0", Reason: "test"}, nil)
	var res api.ResourceInfo
	ok("resources", nil, &res)
	if len(res.Drained) != 1 {
		t.Errorf("resources: %+v", res)
	}
	ok("undrain", api.DrainParams{Ranks: "0"}, nil)
	var cres api.CancelResult
	ok("cancel", api.CancelParams{IDs: []fluid.ID{fluid.ID(id)}}, &cres)
	if len(cres) != 1 || cres[0] != nil {
		t.Errorf("cancel: %+v", cres)
	}
	var sum api.JobSummary
	ok("wait", map[string]uint64{"id": id}, &sum)
	if sum.State != job.Inactive || sum.Result != job.Canceled {
		t.Errorf("wait: %+v", sum)
	}
	var c api.QueueCounts
	ok("queue-wait", api.QueueWait{}, &c)
	var st api.JobCounts
	ok("stats", nil, &st)
	if st.Total != 1 {
		t.Errorf("stats: %+v", st)
	}
	var list api.ReservationList
	ok("reservations", api.ReservationsParams{All: true}, &list)
	ok("tool-events", api.ToolEventsParams{}, nil)
	_, final := request(t, path, "reserve", api.ReserveParams{Op: "bogus"})
	if final.Code != api.CodeReservation || final.Status == 0 {
		t.Errorf("reserve: %+v", final)
	}
	_, final = request(t, path, "spare-add", api.SpareParams{Hosts: "spare["})
	if final.Error == "" {
		t.Errorf("spare-add of a bad hostlist: %+v", final)
	}
	_, final = request(t, path, "node-remove", api.SpareParams{Hosts: "spare["})
	if final.Error != `invalid hostlist "spare["` {
		t.Errorf("node-remove of a bad hostlist: %+v", final)
	}
}
