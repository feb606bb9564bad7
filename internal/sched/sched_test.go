package sched

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// The harness lets a test say, in a few lines, "given these nodes and these
// requests, these responses come out" (as Nomad's scheduler tests do).
// Responses are rendered one per line:
//
//	"1 SUCCESS rank0/core0"                 (summary; R and nulls are checked)
//	"3 ANNOTATE insufficient resources"
//	"4 DENY unsatisfiable request"
//	"5 CANCEL"
//	"2 FREE"
type harness struct {
	t   *testing.T
	s   *Scheduler
	now float64
}

// tsubmit gives each request a submit time in order of its id, so the
// queue order is the order a test names jobs in unless priority says
// otherwise.
const tsubmitBase = 1000.0

func newHarness(t *testing.T, policy resource.Policy, config ...resource.ConfigEntry) *harness {
	t.Helper()
	inv, err := resource.FromConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, s: New(inv, QueuePolicy{Match: policy}, 8), now: 5000}
}

// op is one input to the scheduler; it returns the rendered responses.
type op func(h *harness) []string

// spec builds a jobspec the way fluxq submit would from these options.
func spec(t *testing.T, o jobspec.Options) json.RawMessage {
	t.Helper()
	o.Command = []string{"sleep", "1"}
	js, err := jobspec.FromOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// alloc is sched.alloc for job id at the default priority (16) asking for
// o; a zero Options is one task of one core.
func alloc(id uint64, o jobspec.Options) op { return allocPrio(id, 16, o) }

func allocPrio(id uint64, priority int64, o jobspec.Options) op {
	return func(h *harness) []string {
		h.t.Helper()
		return h.allocRaw(schedproto.Alloc{ID: fluid.ID(id), Priority: priority, UserID: 1000,
			TSubmit: tsubmitBase + float64(id), Jobspec: spec(h.t, o)})
	}
}

func (h *harness) allocRaw(a schedproto.Alloc) []string {
	h.t.Helper()
	resps, err := h.s.Alloc(a)
	if err != nil {
		h.t.Fatalf("Alloc(%d): %v", a.ID, err)
	}
	return h.render(resps)
}

func cancel(id uint64) op {
	return func(h *harness) []string { return h.render(h.s.Cancel(fluid.ID(id))) }
}

func prioritize(pairs ...[2]uint64) op {
	return func(h *harness) []string {
		h.s.Prioritize(schedproto.Prioritize{Jobs: pairs})
		return nil
	}
}

func free(id uint64) op {
	return func(h *harness) []string {
		h.t.Helper()
		resp, err := h.s.Free(fluid.ID(id))
		if err != nil {
			h.t.Errorf("Free(%d): %v", id, err)
		}
		if resp.ID != fluid.ID(id) {
			h.t.Errorf("Free(%d) answered for %d", id, resp.ID)
		}
		return []string{fmt.Sprintf("%d FREE", id)}
	}
}

func down(ranks string) op {
	return func(h *harness) []string { h.s.SetDown(idset.MustParse(ranks)); return nil }
}

func up(ranks string) op {
	return func(h *harness) []string { h.s.SetUp(idset.MustParse(ranks)); return nil }
}

// hello replays a job holding R summarised as in rset.R.String, on a
// pool whose hostnames are node0, node1, ...
func hello(id uint64, summary string) op {
	return func(h *harness) []string {
		h.t.Helper()
		r := h.s.Pool().Inventory().Intersection(parseSummary(h.t, summary))
		raw, err := r.MarshalJSON()
		if err != nil {
			h.t.Fatal(err)
		}
		if err := h.s.Hello(schedproto.HelloJob{ID: fluid.ID(id), Priority: 16, UserID: 1000, TSubmit: 1, R: raw}); err != nil {
			h.t.Fatalf("Hello(%d): %v", id, err)
		}
		return nil
	}
}

// schedule is one Schedule pass.
func schedule() op {
	return func(h *harness) []string { return h.render(h.s.Schedule(h.now)) }
}

// run applies ops, then one Schedule pass, and checks the responses.
func (h *harness) run(ops []op, want ...string) {
	h.t.Helper()
	var got []string
	for _, o := range append(ops, schedule()) {
		got = append(got, o(h)...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		h.t.Errorf("responses (-want +got):\n%s", diff)
	}
}

func do(ops ...op) []op { return ops }

// render checks each response against RFC 27 and writes it as one line.
func (h *harness) render(resps []schedproto.AllocResponse) []string {
	h.t.Helper()
	var out []string
	for _, r := range resps {
		// Every response must pass the job manager's own RFC 27 checks.
		m := mustMessage(h.t, r)
		if _, err := schedproto.DecodeAllocResponse(m); err != nil {
			h.t.Errorf("response violates RFC 27: %v", err)
		}
		switch r.Type {
		case schedproto.Success:
			out = append(out, fmt.Sprintf("%d SUCCESS %s", r.ID, h.checkSuccess(r)))
		case schedproto.Annotate:
			var a struct {
				Sched map[string]json.RawMessage `json:"sched"`
			}
			if err := json.Unmarshal(r.Annotations, &a); err != nil {
				h.t.Fatal(err)
			}
			var reason string
			if err := json.Unmarshal(a.Sched["reason_pending"], &reason); err != nil {
				h.t.Fatalf("reason_pending: %v", err)
			}
			line := fmt.Sprintf("%d ANNOTATE %s", r.ID, reason)
			if est, ok := a.Sched["t_estimate"]; ok {
				line += " eta=" + string(est)
			}
			out = append(out, line)
		case schedproto.Deny:
			out = append(out, fmt.Sprintf("%d DENY %s", r.ID, r.Note))
		case schedproto.Cancel:
			out = append(out, fmt.Sprintf("%d CANCEL", r.ID))
		}
	}
	return out
}

// checkSuccess checks a SUCCESS response's R and annotations and returns
// its resource summary.
func (h *harness) checkSuccess(resp schedproto.AllocResponse) string {
	h.t.Helper()
	r, err := rset.Parse(resp.R)
	if err != nil {
		h.t.Fatalf("SUCCESS R: %v", err)
	}
	if r.StartTime() != h.now {
		h.t.Errorf("job %d: starttime %v, want now (%v)", resp.ID, r.StartTime(), h.now)
	}
	if got := h.s.Pool().Allocated(resp.ID); !got.Equal(r) {
		h.t.Errorf("job %d: pool holds %v, R says %v", resp.ID, got, r)
	}
	// RFC 27: "If a key exists and the new value is JSON null, the key
	// SHALL be removed": SUCCESS deletes the keys a waiting job had.
	want := fmt.Sprintf(`{"sched":{"resource_summary":%q,"reason_pending":null,"t_estimate":null}}`, r.String())
	if string(resp.Annotations) != want {
		h.t.Errorf("job %d: annotations %s, want %s", resp.ID, resp.Annotations, want)
	}
	return r.String()
}

func parseSummary(t *testing.T, s string) *rset.R {
	t.Helper()
	var nodes []rset.Node
	for _, group := range strings.Fields(s) {
		ranks, kids, _ := strings.Cut(strings.TrimPrefix(group, "rank"), "/")
		var n rset.Node
		for _, kid := range strings.Split(kids, ";") {
			switch {
			case strings.HasPrefix(kid, "core"):
				n.Cores = idset.MustParse(strings.TrimPrefix(kid, "core"))
			case strings.HasPrefix(kid, "gpu"):
				n.GPUs = idset.MustParse(strings.TrimPrefix(kid, "gpu"))
			}
		}
		for rank := range idset.MustParse(ranks).All() {
			n.Rank = rank
			nodes = append(nodes, n)
		}
	}
	return rset.New(nodes)
}

var (
	oneHost2Cores = resource.ConfigEntry{Hosts: "node0", Cores: "0-1"}
	oneCore       = jobspec.Options{}
)

// The scenario: 1 host with 2 cores, five one-core jobs.
func TestFiveJobsTwoCores(t *testing.T) {
	h := newHarness(t, resource.WorstFit, oneHost2Cores)
	h.run(do(alloc(1, oneCore), alloc(2, oneCore), alloc(3, oneCore), alloc(4, oneCore), alloc(5, oneCore)),
		"1 SUCCESS rank0/core0",
		"2 SUCCESS rank0/core1",
		"3 ANNOTATE insufficient resources",
		"4 ANNOTATE insufficient resources",
		"5 ANNOTATE insufficient resources",
	)
	// Nothing changed: nothing is sent again.
	h.run(nil)
	// RFC 27: free is answered with the id once processed; the freed core
	// admits the next job, and the others, still waiting for the same
	// reason, are not annotated again.
	h.run(do(free(1)),
		"1 FREE",
		"3 SUCCESS rank0/core0",
	)
	// RFC 27: on sched.cancel "it SHALL respond to the sched.alloc request
	// with a CANCEL response".
	h.run(do(cancel(4)),
		"4 CANCEL",
	)
	// RFC 27: a cancel for a job without a pending alloc is ignored.
	h.run(do(cancel(2), cancel(4), cancel(99)))
	h.run(do(free(2), free(3)),
		"2 FREE", "3 FREE",
		"5 SUCCESS rank0/core0",
	)
	if h.s.Pending() != 0 {
		t.Errorf("Pending() = %d", h.s.Pending())
	}
}

// The queue is ordered by priority, then submit time: a job submitted
// later with a higher priority (urgency 31, expedite) goes first.
func TestPriorityOrder(t *testing.T) {
	h := newHarness(t, resource.WorstFit, oneHost2Cores)
	h.run(do(alloc(1, oneCore), alloc(2, oneCore), alloc(3, oneCore), alloc(4, oneCore)),
		"1 SUCCESS rank0/core0",
		"2 SUCCESS rank0/core1",
		"3 ANNOTATE insufficient resources",
		"4 ANNOTATE insufficient resources",
	)
	h.run(do(allocPrio(5, 4294967295, oneCore)),
		"5 ANNOTATE insufficient resources",
	)
	// sched.prioritize: job 4 jumps ahead; a held job (priority 0) goes
	// last but stays queued. RFC 27: "Job IDs which cannot be correlated
	// to a pending sched.alloc request may be safely ignored." The
	// reasons are unchanged, so nothing is annotated.
	h.run(do(prioritize([2]uint64{4, 4294967295}, [2]uint64{5, 0}, [2]uint64{77, 5})))
	// Same priority: the earlier submit time wins, whatever the id says.
	h.run(do(func(h *harness) []string {
		return h.allocRaw(schedproto.Alloc{ID: 6, Priority: 16, TSubmit: 1, Jobspec: spec(t, oneCore)})
	}),
		"6 ANNOTATE insufficient resources",
	)
	h.run(do(free(1)), "1 FREE", "4 SUCCESS rank0/core0")
	// The held job is still scheduled when its turn comes; holding jobs
	// back is the job manager's concern.
	h.run(do(free(2), free(4)), "2 FREE", "4 FREE", "6 SUCCESS rank0/core0", "3 SUCCESS rank0/core1")
}

// Strict FIFO: the first job that does not fit blocks every job behind it,
// even one that would fit (no backfill).
func TestNoBackfill(t *testing.T) {
	h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-3"})
	h.run(do(alloc(1, jobspec.Options{NTasks: 6}), alloc(2, jobspec.Options{NTasks: 4}), alloc(3, oneCore)),
		"1 SUCCESS rank0/core[0-3] rank1/core[0-1]",
		"2 ANNOTATE insufficient resources",
		"3 ANNOTATE insufficient resources",
	)
	h.run(do(free(1)), "1 FREE", "2 SUCCESS rank0/core[0-3]", "3 SUCCESS rank1/core0")
}

// RFC 33 queues are FIFO each on their own: a job that does not fit blocks
// only its own queue, and jobs_ahead counts its own queue.
func TestQueuesAreSeparateFIFOs(t *testing.T) {
	h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-1"})
	batch := func(n int) jobspec.Options { return jobspec.Options{NTasks: n, Queue: "batch"} }
	debug := jobspec.Options{Queue: "debug"}
	// Job 3 would fit, but waits behind job 2 in batch; debug's job 4
	// passes them both.
	h.run(do(alloc(1, batch(3)), alloc(2, batch(2)), alloc(3, batch(1)), alloc(4, debug), alloc(5, debug)),
		"1 SUCCESS rank0/core[0-1] rank1/core0",
		"2 ANNOTATE insufficient resources",
		"3 ANNOTATE insufficient resources",
		"4 SUCCESS rank1/core1",
		"5 ANNOTATE insufficient resources",
	)
	h.run(do(free(1)), "1 FREE", "2 SUCCESS rank0/core[0-1]", "3 SUCCESS rank1/core0")
}

// A queue's own match policy (its policy.scheduler.match-policy) places its
// jobs; others keep the instance's.
func TestQueuePolicy(t *testing.T) {
	h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-3"})
	h.s.SetQueuePolicy("packed", QueuePolicy{Match: resource.FirstFit})
	h.run(do(alloc(1, oneCore), alloc(2, oneCore)), "1 SUCCESS rank0/core0", "2 SUCCESS rank1/core0")
	h.run(do(alloc(3, jobspec.Options{Queue: "packed"}), alloc(4, jobspec.Options{Queue: "packed"})),
		"3 SUCCESS rank0/core1", "4 SUCCESS rank0/core2")
}

// DENY for what can never fit the configured inventory (RFC 27: "If the
// resource request can never be fulfilled, the scheduler SHALL respond to
// the sched.alloc with a DENY type response"), at once, without blocking
// the queue.
func TestDeny(t *testing.T) {
	config := []resource.ConfigEntry{
		{Hosts: "node[0-1]", Cores: "0-3", Properties: []string{"batch"}},
		{Hosts: "node1", GPUs: "0"},
	}
	tests := []struct {
		name string
		o    jobspec.Options
		want string
	}{
		{"too many cores", jobspec.Options{NTasks: 9}, "1 DENY unsatisfiable request"},
		{"too many cores per task", jobspec.Options{CoresPerTask: 5}, "1 DENY unsatisfiable request"},
		{"too many nodes", jobspec.Options{Nodes: 3}, "1 DENY unsatisfiable request"},
		{"three cores on each of two nodes fit", jobspec.Options{Nodes: 2, NTasks: 2, CoresPerTask: 3}, ""},
		{"too many cores per node", jobspec.Options{Nodes: 1, NTasks: 2, CoresPerTask: 3}, "1 DENY unsatisfiable request"},
		{"too many gpus", jobspec.Options{NTasks: 2, GPUsPerTask: 1}, "1 DENY unsatisfiable request"},
		{"no node has the property", jobspec.Options{Constraints: json.RawMessage(`{"properties":["gpu"]}`)}, "1 DENY no resources satisfy provided constraints"},
		{"matching nodes too small", jobspec.Options{NTasks: 5, Constraints: json.RawMessage(`{"hostlist":["node1"]}`)}, "1 DENY unsatisfiable constrained request"},
		{"fits", jobspec.Options{NTasks: 8}, "1 SUCCESS rank[0-1]/core[0-3]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, resource.WorstFit, config...)
			var want []string
			if tc.want != "" {
				want = append(want, tc.want)
			} else {
				want = append(want, "1 SUCCESS rank[0-1]/core[0-2]")
			}
			h.run(do(alloc(1, tc.o)), want...)
		})
	}
	// A denied job never enters the queue, so it blocks nothing.
	h := newHarness(t, resource.WorstFit, config...)
	h.run(do(alloc(1, jobspec.Options{NTasks: 7}), alloc(2, jobspec.Options{NTasks: 100}), alloc(3, oneCore)),
		"2 DENY unsatisfiable request",
		"1 SUCCESS rank0/core[0-3] rank1/core[0-2]",
		"3 SUCCESS rank1/core3",
	)
	// A jobspec the scheduler cannot read is denied with the reason.
	h.run(do(func(h *harness) []string {
		return h.allocRaw(schedproto.Alloc{ID: 4, Priority: 16, Jobspec: json.RawMessage(`{"version":1}`)})
	}), "4 DENY missing key (resources)")
}

// Drained or offline ranks make jobs wait, never deny; up lets them run.
func TestDownRanksWait(t *testing.T) {
	h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-1"})
	h.run(do(down("1"), alloc(1, jobspec.Options{Nodes: 2}), alloc(2, oneCore)),
		"1 ANNOTATE insufficient resources",
		"2 ANNOTATE insufficient resources",
	)
	h.run(do(up("1")),
		"1 SUCCESS rank[0-1]/core[0-1]",
	)
	// Draining a node with a running job leaves the job alone; its free
	// does not make the node usable.
	h.run(do(down("0"), free(1)), "1 FREE", "2 SUCCESS rank1/core0")
	h.run(do(alloc(3, jobspec.Options{NTasks: 2})), "3 ANNOTATE insufficient resources")
	h.run(do(up("0")), "3 SUCCESS rank0/core[0-1]")
}

// RFC 27: "For each job response, the scheduler SHALL mark its assigned
// resources allocated internally": new work goes elsewhere.
func TestHelloReplay(t *testing.T) {
	h := newHarness(t, resource.FirstFit, resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-1", GPUs: "0"})
	h.run(do(hello(100, "rank0/core0-1;gpu0"), hello(101, "rank1/core0"),
		alloc(1, oneCore), alloc(2, jobspec.Options{GPUsPerTask: 1})),
		"1 SUCCESS rank1/core1",
		"2 ANNOTATE insufficient resources",
	)
	h.run(do(free(100)), "100 FREE", "2 SUCCESS rank0/core0,gpu0")

	// A replayed R that clashes is marked as far as it can be, and said so.
	err := h.s.Hello(schedproto.HelloJob{ID: 102, R: mustR(t, h, "rank0/core0-1")})
	if err == nil || !strings.Contains(err.Error(), "core 0 is already allocated (marked rank0/core1 allocated)") {
		t.Errorf("clashing hello: %v", err)
	}
	if got := h.s.Pool().Allocated(102).String(); got != "rank0/core1" {
		t.Errorf("clashing hello marked %q", got)
	}
	if err := h.s.Hello(schedproto.HelloJob{ID: 103}); err == nil {
		t.Error("hello without R accepted")
	}
}

func mustR(t *testing.T, h *harness, summary string) json.RawMessage {
	t.Helper()
	raw, err := h.s.Pool().Inventory().Intersection(parseSummary(t, summary)).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Placement policy, GPUs, exclusive nodes and constraints reach R.
func TestPlacement(t *testing.T) {
	config := []resource.ConfigEntry{
		{Hosts: "node[0-2]", Cores: "0-3"},
		{Hosts: "node2", GPUs: "0-1", Properties: []string{"gpu"}},
	}
	tests := []struct {
		name   string
		policy resource.Policy
		ops    []op
		want   []string
	}{
		{"worst-fit spreads jobs", resource.WorstFit, do(alloc(1, oneCore), alloc(2, oneCore), alloc(3, oneCore)),
			[]string{"1 SUCCESS rank0/core0", "2 SUCCESS rank1/core0", "3 SUCCESS rank2/core0"}},
		{"first-fit packs low ranks", resource.FirstFit, do(alloc(1, oneCore), alloc(2, oneCore), alloc(3, oneCore)),
			[]string{"1 SUCCESS rank0/core0", "2 SUCCESS rank0/core1", "3 SUCCESS rank0/core2"}},
		{"best-fit fills the fullest node", resource.BestFit, do(alloc(1, jobspec.Options{NTasks: 3}), alloc(2, oneCore), alloc(3, jobspec.Options{NTasks: 2})),
			[]string{"1 SUCCESS rank0/core[0-2]", "2 SUCCESS rank0/core3", "3 SUCCESS rank1/core[0-1]"}},
		{"gpus", resource.WorstFit, do(alloc(1, jobspec.Options{GPUsPerTask: 2})),
			[]string{"1 SUCCESS rank2/core0,gpu[0-1]"}},
		{"exclusive nodes", resource.WorstFit, do(alloc(1, oneCore), alloc(2, jobspec.Options{Nodes: 2})),
			[]string{"1 SUCCESS rank0/core0", "2 SUCCESS rank1/core[0-3] rank2/core[0-3],gpu[0-1]"}},
		{"constraint", resource.FirstFit, do(alloc(1, jobspec.Options{Constraints: json.RawMessage(`{"properties":["gpu"]}`)})),
			[]string{"1 SUCCESS rank2/core0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			newHarness(t, tc.policy, config...).run(tc.ops, tc.want...)
		})
	}
}

// R's times: starttime is now; expiration is now + duration, or 0 without
// a duration.
func TestTimes(t *testing.T) {
	h := newHarness(t, resource.WorstFit, oneHost2Cores)
	resps, err := h.s.Alloc(schedproto.Alloc{ID: 1, Priority: 16, Jobspec: spec(t, jobspec.Options{Duration: 60})})
	if err != nil || resps != nil {
		t.Fatal(resps, err)
	}
	if _, err := h.s.Alloc(schedproto.Alloc{ID: 2, Priority: 16, Jobspec: spec(t, oneCore)}); err != nil {
		t.Fatal(err)
	}
	out := h.s.Schedule(h.now)
	if len(out) != 2 {
		t.Fatalf("got %d responses", len(out))
	}
	for i, want := range []float64{h.now + 60, 0} {
		r, err := rset.Parse(out[i].R)
		if err != nil {
			t.Fatal(err)
		}
		if r.StartTime() != h.now || r.Expiration() != want || r.NSlots() != 1 {
			t.Errorf("job %d: start %v expiration %v nslots %d, want %v %v 1", out[i].ID, r.StartTime(), r.Expiration(), r.NSlots(), h.now, want)
		}
	}
}

// RFC 27: "There SHALL NOT be more than one sched.alloc ... request in
// flight for each job": a second one is a protocol error.
func TestDuplicateAlloc(t *testing.T) {
	h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node0", Cores: "0"})
	h.run(do(alloc(1, oneCore), alloc(2, oneCore)), "1 SUCCESS rank0/core0", "2 ANNOTATE insufficient resources")
	for _, id := range []fluid.ID{1, 2} {
		if _, err := h.s.Alloc(schedproto.Alloc{ID: id, Priority: 16, Jobspec: spec(t, oneCore)}); err == nil {
			t.Errorf("second alloc for job %d accepted", id)
		}
	}
	if _, err := h.s.Free(42); err == nil {
		t.Error("free of a job holding nothing not reported")
	}
}

// Limited mode is the job manager's business: the scheduler asks for it in
// sched-ready and serves whatever it is sent.
func TestReadyAndLimit(t *testing.T) {
	inv, _ := resource.FromConfig([]resource.ConfigEntry{{Hosts: "node0", Cores: "0"}})
	for limit, want := range map[int]schedproto.Ready{
		0: {Mode: schedproto.ModeUnlimited},
		8: {Mode: schedproto.ModeLimited, Limit: 8},
		1: {Mode: schedproto.ModeLimited, Limit: 1},
	} {
		s := New(inv, QueuePolicy{}, limit)
		if got := s.Ready(); got != want {
			t.Errorf("limit %d: Ready() = %+v, want %+v", limit, got, want)
		}
	}
	h := &harness{t: t, s: New(inv, QueuePolicy{}, 1), now: 1}
	var ops []op
	var want []string
	for id := uint64(1); id <= 3; id++ {
		ops = append(ops, alloc(id, oneCore))
	}
	want = append(want, "1 SUCCESS rank0/core0",
		"2 ANNOTATE insufficient resources", "3 ANNOTATE insufficient resources")
	h.run(ops, want...)
}

func mustMessage(t *testing.T, r schedproto.AllocResponse) wire.Message {
	t.Helper()
	m, err := wire.NewResponse(schedproto.TopicAlloc, r)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Queues that interleave in priority order block only their own jobs: a
// pass merges them in order.
func TestInterleavedQueues(t *testing.T) {
	h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node0", Cores: "0"})
	q := func(name string) jobspec.Options { return jobspec.Options{Queue: name} }
	h.run(do(alloc(1, q("a")), alloc(2, q("a")), alloc(3, q("b")), alloc(4, q("a")), alloc(5, q("b")), alloc(6, q("a"))),
		"1 SUCCESS rank0/core0",
		"2 ANNOTATE insufficient resources",
		"3 ANNOTATE insufficient resources",
		"4 ANNOTATE insufficient resources",
		"5 ANNOTATE insufficient resources",
		"6 ANNOTATE insufficient resources",
	)
	h.run(do(free(1)), "1 FREE", "2 SUCCESS rank0/core0")
}
