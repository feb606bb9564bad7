package reservation

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/google/go-cmp/cmp"
)

// TestDecisionTable checks every row of the specification's routing table
// (spec "Allocation behavior").
func TestDecisionTable(t *testing.T) {
	type want struct {
		Status   Status
		Owner    Namespace
		Owners   []Namespace
		Share    bool
		Sessions map[string]string // of every node
		Reserved map[string][]uint
		Outside  []uint
	}
	// Two nodes are asked for: the two free spares join (decision 2).
	reservedR1 := map[string]string{"h0": "default", "h1": "default", "h2": "default", "h3": "default", "s4": "r1", "s5": "r1"}
	sharedR1 := map[string]string{"h0": "default", "h1": "default", "h2": "default", "h3": "default", "s4": "default", "s5": "default"}
	untouched := map[string]string{"h0": "default", "h1": "default", "h2": "default", "h3": "default", "s4": "", "s5": ""}
	tests := []struct {
		name string
		spec string // the sentence checked
		who  Requester
		req  Request
		want want
	}{
		{
			name: "tool with target",
			spec: `Tool - <nspace> - absent / false - reservation owned by <nspace>`,
			who:  alice,
			req:  Request{Op: OpNew, Count: 2, Target: ptr(JobNS(jobA))},
			want: want{Owner: JobNS(jobA), Owners: []Namespace{JobNS(jobA)}, Sessions: reservedR1, Reserved: map[string][]uint{"r1": {4, 5}}},
		},
		{
			name: "tool with target and share false",
			spec: `Tool - <nspace> - absent / false - reservation owned by <nspace>`,
			who:  alice,
			req:  Request{Op: OpNew, Count: 2, Target: ptr(JobNS(jobA)), Share: ptr(false)},
			want: want{Owner: JobNS(jobA), Owners: []Namespace{JobNS(jobA)}, Sessions: reservedR1, Reserved: map[string][]uint{"r1": {4, 5}}},
		},
		{
			name: "tool with target and share",
			spec: `PMIX_ALLOC_TARGET independently designates the owning namespace for inheritance and accounting, which still applies even when the nodes are shared`,
			who:  alice,
			req:  Request{Op: OpNew, Count: 2, Target: ptr(JobNS(jobA)), Share: ptr(true)},
			want: want{Owner: JobNS(jobA), Owners: []Namespace{JobNS(jobA)}, Share: true, Sessions: sharedR1, Reserved: map[string][]uint{}},
		},
		{
			name: "tool without target",
			spec: `Tool - absent - absent / false - reservation owned by the tool's own namespace`,
			who:  alice,
			req:  Request{Op: OpNew, Count: 2},
			want: want{Owner: ToolNS("alice"), Owners: []Namespace{ToolNS("alice")}, Sessions: reservedR1, Reserved: map[string][]uint{"r1": {4, 5}}},
		},
		{
			name: "tool share",
			spec: `Tool - absent - true - default session (shared)`,
			who:  alice,
			req:  Request{Op: OpNew, Count: 2, Share: ptr(true)},
			want: want{Owner: ToolNS("alice"), Owners: []Namespace{ToolNS("alice")}, Share: true, Sessions: sharedR1, Reserved: map[string][]uint{}},
		},
		{
			name: "application without target",
			spec: `Application - absent - absent / false - reservation owned by the application's namespace`,
			who:  app(jobA),
			req:  Request{Op: OpNew, Count: 2},
			want: want{Owner: JobNS(jobA), Owners: []Namespace{JobNS(jobA)}, Sessions: reservedR1, Reserved: map[string][]uint{"r1": {4, 5}}},
		},
		{
			name: "application share",
			spec: `Application - absent - true - default session (shared)`,
			who:  app(jobA),
			req:  Request{Op: OpNew, Count: 2, Share: ptr(true)},
			want: want{Owner: JobNS(jobA), Owners: []Namespace{JobNS(jobA)}, Share: true, Sessions: sharedR1, Reserved: map[string][]uint{}},
		},
		{
			name: "application with target",
			spec: `Application - present - any - rejected - PMIX_ERR_NO_PERMISSIONS`,
			who:  app(jobA),
			req:  Request{Op: OpNew, Count: 2, Target: ptr(JobNS(jobB))},
			want: want{Status: NoPermissions, Sessions: untouched, Reserved: map[string][]uint{}, Outside: []uint{4, 5}},
		},
		{
			name: "application with target and share",
			spec: `Application - present - any - rejected - PMIX_ERR_NO_PERMISSIONS`,
			who:  app(jobA),
			req:  Request{Op: OpNew, Count: 2, Target: ptr(JobNS(jobA)), Share: ptr(true)},
			want: want{Status: NoPermissions, Sessions: untouched, Reserved: map[string][]uint{}, Outside: []uint{4, 5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestState(t, Support{})
			ch, err := s.Allocate(tt.req, tt.who, 10)
			got := want{Status: statusOf(err), Sessions: sessionsOf(s)}
			got.Reserved, got.Outside = s.Sessions()
			if err == nil {
				r := ch.Reservation
				got.Owner, got.Owners, got.Share = r.Owner, r.Owners, r.Share
				if r.ID != "r1" || r.Requester != tt.who.NS || r.RequesterClass != tt.who.Class {
					t.Errorf("reservation %s requested by %v %v, want r1 by %v %v", r.ID, r.RequesterClass, r.Requester, tt.who.Class, tt.who.NS)
				}
				if diff := cmp.Diff([]string{"s4", "s5"}, ch.Joined); diff != "" {
					t.Errorf("Joined (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("spec %q (-want +got):\n%s", tt.spec, diff)
			}
			if err := checkConsistent(s); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestPick checks which nodes a request gets (docs/reservations.md decision 2:
// "-N K takes free spare nodes first, then idle default-session startup
// nodes, lowest names first; --nodelist names them. Too few:
// PMIX_ERR_OUT_OF_RESOURCE (29), nothing changes"; decision 1: "The first
// startup node never leaves").
func TestPick(t *testing.T) {
	busy := func(ranks ...uint) func(uint) bool {
		return func(r uint) bool {
			for _, b := range ranks {
				if b == r {
					return false
				}
			}
			return true
		}
	}
	tests := []struct {
		name   string
		req    Request
		nodes  []string
		status Status
		msg    string
	}{
		{name: "spares first", req: Request{Count: 1}, nodes: []string{"s4"}},
		{name: "then idle startup nodes", req: Request{Count: 4}, nodes: []string{"h1", "h2", "s4", "s5"}},
		{name: "busy nodes skipped", req: Request{Count: 3, Idle: busy(1)}, nodes: []string{"h2", "s4", "s5"}},
		{name: "first node never", req: Request{Count: 6}, status: OutOfResource, msg: "need 6 nodes, 5 available"},
		{name: "too few", req: Request{Count: 5, Idle: busy(2)}, status: OutOfResource, msg: "need 5 nodes, 4 available"},
		{name: "named", req: Request{Names: []string{"h3", "s5"}}, nodes: []string{"h3", "s5"}},
		{name: "named first node", req: Request{Names: []string{"h0"}}, status: OutOfResource},
		{name: "named busy", req: Request{Names: []string{"h2"}, Idle: busy(2)}, status: OutOfResource},
		{name: "named unknown", req: Request{Names: []string{"nosuch"}}, status: NotFound},
		{name: "named twice", req: Request{Names: []string{"h1", "h1"}}, status: BadParam},
		{name: "no count", req: Request{}, status: BadParam},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestState(t, Support{})
			before := snapshot(t, s)
			tt.req.Op = OpNew
			ch, err := s.Allocate(tt.req, alice, 1)
			if got := statusOf(err); got != tt.status {
				t.Fatalf("status %v (%v), want %v", got, err, tt.status)
			}
			if err != nil {
				if tt.msg != "" && err.(*Error).Msg != tt.msg {
					t.Errorf("message %q, want %q", err.(*Error).Msg, tt.msg)
				}
				if after := snapshot(t, s); after != before {
					t.Errorf("rejection changed the state:\n%s\n%s", before, after)
				}
				return
			}
			if diff := cmp.Diff(tt.nodes, ch.Reservation.Nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewVersusExtend checks spec "New versus extend": "A request carrying
// the PMIX_ALLOC_NEW directive always mints a fresh reservation, even for
// a namespace that already owns one" and "PMIX_ALLOC_EXTEND adds nodes to
// the existing reservation named by the request's PMIX_ALLOC_ID ... or
// PMIX_ALLOC_REQ_ID ...; it must carry at least one, and succeeds only when
// the requester's namespace owns the named reservation"; and
// docs/reservations.md: alloc ids "r1, r2, ... never reused".
func TestNewVersusExtend(t *testing.T) {
	s := newTestState(t, Support{})
	r1 := mustAlloc(t, s, Request{Op: OpNew, Count: 1, ReqID: "mine"}, app(jobA), 1).Reservation
	r2 := mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 2).Reservation
	if r1.ID != "r1" || r2.ID != "r2" {
		t.Fatalf("ids %s, %s; want r1, r2", r1.ID, r2.ID)
	}
	mustAlloc(t, s, Request{Op: OpRelease, ID: "r2"}, app(jobA), 3)
	r3 := mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 4).Reservation
	if r3.ID != "r3" || s.Last() != 3 {
		t.Errorf("after releasing r2 the next id is %s (last %d), want r3 (3): ids are never reused", r3.ID, s.Last())
	}
	tests := []struct {
		name   string
		who    Requester
		req    Request
		status Status
		id     string
		nodes  []string
	}{
		{name: "by id", who: app(jobA), req: Request{ID: "r1", Count: 1}, id: "r1", nodes: []string{"h1", "s4"}},
		{name: "by req id", who: app(jobA), req: Request{ReqID: "mine", Count: 1}, id: "r1", nodes: []string{"h1", "h2", "s4"}},
		{name: "by id, time only", who: app(jobA), req: Request{ID: "r3"}, id: "r3", nodes: []string{"s5"}},
		{name: "not an owner", who: app(jobB), req: Request{ID: "r1", Count: 1}, status: NoPermissions},
		{name: "not an owner by req id", who: app(jobB), req: Request{ReqID: "mine", Count: 1}, status: NoPermissions},
		{name: "tool not an owner", who: bob, req: Request{ID: "r1", Count: 1}, status: NoPermissions},
		{name: "scheduler owns everything", who: scheduler, req: Request{ID: "r3", Count: 1}, id: "r3", nodes: []string{"h3", "s5"}},
		{name: "ended", who: app(jobA), req: Request{ID: "r2", Count: 1}, status: NotFound},
		{name: "unknown", who: app(jobA), req: Request{ID: "r9", Count: 1}, status: NotFound},
		{name: "unknown req id", who: app(jobA), req: Request{ReqID: "other", Count: 1}, status: NotFound},
		{name: "names nothing", who: app(jobA), req: Request{Count: 1}, status: BadParam},
	}
	for _, tt := range tests {
		before := snapshot(t, s)
		tt.req.Op = OpExtend
		ch, err := s.Allocate(tt.req, tt.who, 5)
		if got := statusOf(err); got != tt.status {
			t.Fatalf("%s: status %v (%v), want %v", tt.name, got, err, tt.status)
		}
		if err != nil {
			if after := snapshot(t, s); after != before {
				t.Errorf("%s: rejection changed the state", tt.name)
			}
			continue
		}
		if ch.Reservation.ID != tt.id {
			t.Errorf("%s: extended %s, want %s", tt.name, ch.Reservation.ID, tt.id)
		}
		if diff := cmp.Diff(tt.nodes, ch.Reservation.Nodes); diff != "" {
			t.Errorf("%s: nodes (-want +got):\n%s", tt.name, diff)
		}
		if ch.Reservation.Requester != tt.who.NS {
			t.Errorf("%s: requester %s, want %s (the most recent)", tt.name, ch.Reservation.Requester, tt.who.NS)
		}
	}
	if s.Last() != 3 || len(s.All(true)) != 3 {
		t.Errorf("extends minted reservations: last %d, %d in all", s.Last(), len(s.All(true)))
	}
	// Spec "Reporting the result": the request id is echoed back.
	if r1.ReqID != "mine" {
		t.Errorf("r1 req id %q, want mine", r1.ReqID)
	}
	if err := checkConsistent(s); err != nil {
		t.Error(err)
	}
}

// TestErrorTable checks every row of spec "Error semantics", decision 7's
// order, and "In every rejection case no partial effect is observable".
func TestErrorTable(t *testing.T) {
	// setup: r1 owned by job A (live), r2 ended, r3 owned by tool bob.
	setup := func(t *testing.T, sup Support) *State {
		s := newTestState(t, Support{})
		mustAlloc(t, s, Request{Op: OpNew, Count: 1, ReqID: "a1"}, app(jobA), 1)
		mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 1)
		mustAlloc(t, s, Request{Op: OpRelease, ID: "r2"}, app(jobA), 2)
		mustAlloc(t, s, Request{Op: OpNew, Names: []string{"h3"}}, bob, 3)
		s.Dirty()
		s.Support = sup
		return s
	}
	noInherit := Support{Unsupported: map[Attr]bool{AttrAllocInheritance: true}}
	tests := []struct {
		name   string
		spec   string
		sup    Support
		who    Requester
		req    *Request
		spawn  *Spawn
		status Status
	}{
		{
			name: "application with target", spec: `Application request carries PMIX_ALLOC_TARGET - PMIX_ERR_NO_PERMISSIONS`,
			who: app(jobB), req: &Request{Op: OpNew, Count: 1, Target: ptr(JobNS(jobB))}, status: NoPermissions,
		},
		{
			name: "extend not owned", spec: `PMIX_ALLOC_EXTEND names an allocation the requester does not own - PMIX_ERR_NO_PERMISSIONS`,
			who: app(jobB), req: &Request{Op: OpExtend, ID: "r1", Count: 1}, status: NoPermissions,
		},
		{
			name: "extend not owned by req id", spec: `PMIX_ALLOC_EXTEND names an allocation the requester does not own - PMIX_ERR_NO_PERMISSIONS`,
			who: alice, req: &Request{Op: OpExtend, ReqID: "a1", Count: 1}, status: NoPermissions,
		},
		{
			name: "extend unknown", spec: `PMIX_ALLOC_EXTEND names an allocation that does not exist - PMIX_ERR_NOT_FOUND`,
			who: app(jobA), req: &Request{Op: OpExtend, ID: "r7", Count: 1}, status: NotFound,
		},
		{
			name: "extend ended", spec: `PMIX_ALLOC_EXTEND names an allocation that does not exist - PMIX_ERR_NOT_FOUND`,
			who: app(jobA), req: &Request{Op: OpExtend, ID: "r2", Count: 1}, status: NotFound,
		},
		{
			name: "extend names nothing", spec: `PMIX_ALLOC_EXTEND carries neither PMIX_ALLOC_ID nor PMIX_ALLOC_REQ_ID to name its target - PMIX_ERR_BAD_PARAM`,
			who: app(jobA), req: &Request{Op: OpExtend, Count: 1}, status: BadParam,
		},
		{
			name: "spawn target unknown", spec: `PMIX_SPAWN_TARGET names an allocation that resolves to no session - PMIX_ERR_NOT_FOUND`,
			who: app(jobA), spawn: &Spawn{Targets: []string{"r9"}}, status: NotFound,
		},
		{
			name: "spawn target ended", spec: `PMIX_SPAWN_TARGET names an allocation that resolves to no session - PMIX_ERR_NOT_FOUND`,
			who: app(jobA), spawn: &Spawn{Targets: []string{"r2"}}, status: NotFound,
		},
		{
			name: "spawn target not owned", spec: `PMIX_SPAWN_TARGET names a session the requester does not own - PMIX_ERR_NO_PERMISSIONS`,
			who: app(jobB), spawn: &Spawn{Targets: []string{"r1"}}, status: NoPermissions,
		},
		{
			name: "inheritance not supported", spec: `PMIX_ALLOC_INHERITANCE carries a non-default value the host does not support - PMIX_ERR_NOT_SUPPORTED`,
			sup: noInherit, who: app(jobA), req: &Request{Op: OpNew, Count: 1, Inherit: ptr(InheritNone)}, status: NotSupported,
		},
		{
			name: "inheritance not supported on extend", spec: `PMIX_ALLOC_INHERITANCE carries a non-default value the host does not support - PMIX_ERR_NOT_SUPPORTED`,
			sup: noInherit, who: app(jobA), req: &Request{Op: OpExtend, ID: "r1", Inherit: ptr(InheritChild)}, status: NotSupported,
		},
		{
			name: "out of resource", spec: `decision 2: Too few: PMIX_ERR_OUT_OF_RESOURCE (29), nothing changes`,
			who: app(jobA), req: &Request{Op: OpNew, Count: 5}, status: OutOfResource,
		},
		{
			name: "release not owned", spec: `Any namespace in the owner set may release it`,
			who: app(jobB), req: &Request{Op: OpRelease, ID: "r1"}, status: NoPermissions,
		},
		{
			name: "release names nothing", spec: `decision 7: extend without id (27)`,
			who: app(jobA), req: &Request{Op: OpRelease}, status: BadParam,
		},
		{
			name: "reclaim by an owner", spec: `The scheduler terminates the allocation ... which arrives as a scheduler-driven release`,
			who: app(jobA), req: &Request{Op: OpReclaim, ID: "r1"}, status: NoPermissions,
		},
		// Decision 7: "unsupported inheritance (47) → application with
		// --target on create (23) → extend without id (27) → unknown
		// allocation (46) → not an owner (23) → not enough nodes (29)".
		{
			name: "order: 47 before 23", spec: `decision 7`, sup: noInherit,
			who: app(jobA), req: &Request{Op: OpNew, Count: 9, Target: ptr(JobNS(jobB)), Inherit: ptr(InheritNone)}, status: NotSupported,
		},
		{
			name: "order: 23 target before 29", spec: `decision 7`,
			who: app(jobA), req: &Request{Op: OpNew, Count: 9, Target: ptr(JobNS(jobB))}, status: NoPermissions,
		},
		{
			name: "order: 47 before 27", spec: `decision 7`, sup: noInherit,
			who: app(jobB), req: &Request{Op: OpExtend, Count: 9, Inherit: ptr(InheritChildDefault)}, status: NotSupported,
		},
		{
			name: "order: 27 before 46", spec: `decision 7`,
			who: app(jobB), req: &Request{Op: OpExtend, Count: 9}, status: BadParam,
		},
		{
			name: "order: 46 before 23", spec: `decision 7`,
			who: app(jobB), req: &Request{Op: OpExtend, ID: "r9", Count: 9}, status: NotFound,
		},
		{
			name: "order: 23 owner before 29", spec: `decision 7`,
			who: app(jobB), req: &Request{Op: OpExtend, ID: "r1", Count: 9}, status: NoPermissions,
		},
		{
			name: "order: targets left to right, 46 first", spec: `decision 7: Targets of a submission are checked left to right`,
			who: app(jobB), spawn: &Spawn{Targets: []string{"default", "r9", "r1"}}, status: NotFound,
		},
		{
			name: "order: targets left to right, 23 first", spec: `decision 7: Targets of a submission are checked left to right`,
			who: app(jobB), spawn: &Spawn{Targets: []string{"r1", "r9"}}, status: NoPermissions,
		},
		{
			name: "whole spawn rejected, never narrowed", spec: `If any entry fails this check the entire spawn is rejected`,
			who: app(jobA), spawn: &Spawn{Targets: []string{"r1", "default", "r3"}}, status: NoPermissions,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := setup(t, tt.sup)
			before := snapshot(t, s)
			var err error
			if tt.req != nil {
				var ch Change
				ch, err = s.Allocate(*tt.req, tt.who, 50)
				if diff := cmp.Diff(Change{}, ch); err != nil && diff != "" {
					t.Errorf("a rejection returned a change (-want +got):\n%s", diff)
				}
			} else {
				var sessions, into []string
				sessions, into, err = s.Target(*tt.spawn, tt.who)
				if err != nil && (sessions != nil || into != nil) {
					t.Errorf("a rejected spawn resolved to %v, into %v", sessions, into)
				}
			}
			if got := statusOf(err); got != tt.status {
				t.Errorf("spec %q: status %v (%v), want %v", tt.spec, got, err, tt.status)
			}
			if after := snapshot(t, s); after != before {
				t.Errorf("spec: no partial effect is observable; the state changed:\n%s\n%s", before, after)
			}
			if res, spares := s.Dirty(); len(res) != 0 || len(spares) != 0 {
				t.Errorf("a rejection left %d reservations and %d nodes dirty", len(res), len(spares))
			}
		})
	}
}

// TestRejectionMessages checks the one line a rejection carries.
func TestRejectionMessages(t *testing.T) {
	s := newTestState(t, Support{})
	// h0 never leaves: h1-h3 and s4, s5 are five; h3 is busy.
	_, err := s.Allocate(Request{Op: OpNew, Count: 5, Idle: func(r uint) bool { return r != 3 }}, alice, 1)
	if got, want := fmt.Sprint(err), "PMIX_ERR_OUT_OF_RESOURCE: need 5 nodes, 4 available"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	for _, st := range []Status{NoPermissions, BadParam, OutOfResource, NotFound, NotSupported, 99} {
		want := map[Status]string{23: "PMIX_ERR_NO_PERMISSIONS", 27: "PMIX_ERR_BAD_PARAM", 29: "PMIX_ERR_OUT_OF_RESOURCE", 46: "PMIX_ERR_NOT_FOUND", 47: "PMIX_ERR_NOT_SUPPORTED", 99: "PMIX_ERR(99)"}[st]
		if st.String() != want {
			t.Errorf("Status(%d) = %q, want %q", int(st), st.String(), want)
		}
	}
}

// TestTargetAlive checks a tool naming a job that does not exist or has
// ended: it cannot own anything.
func TestTargetAlive(t *testing.T) {
	lookup := func(ns Namespace) (bool, bool) { return ns.Job != jobC, ns.Job == jobA }
	tests := []struct {
		name   string
		target Namespace
		status Status
	}{
		{"alive", JobNS(jobA), 0},
		{"inactive", JobNS(jobB), BadParam},
		{"missing", JobNS(jobC), NotFound},
		{"another tool", ToolNS("carol"), 0},
	}
	for _, tt := range tests {
		s := newTestState(t, Support{})
		before := snapshot(t, s)
		_, err := s.Allocate(Request{Op: OpNew, Count: 1, Target: ptr(tt.target), TargetAlive: lookup}, alice, 1)
		if got := statusOf(err); got != tt.status {
			t.Errorf("%s: status %v, want %v", tt.name, got, tt.status)
		}
		if err != nil && snapshot(t, s) != before {
			t.Errorf("%s: rejection changed the state", tt.name)
		}
	}
}

// TestDisposition checks the 2x2 table of spec "Namespace-termination
// disposition" at the owning namespace's end and at the last derived
// child's end, and "Default disposition".
func TestDisposition(t *testing.T) {
	type outcome struct {
		Live     bool
		Reason   string
		Departed []string
		Sessions map[string]string
	}
	ended := func(reason string, returned bool) outcome {
		o := outcome{Reason: reason, Sessions: map[string]string{"h0": "default", "h1": "default", "h2": "default", "h3": "default", "s4": "default", "s5": ""}}
		if returned {
			o.Departed = []string{"s4"}
			o.Sessions["s4"] = ""
		}
		return o
	}
	held := outcome{Live: true, Sessions: map[string]string{"h0": "default", "h1": "default", "h2": "r1", "h3": "default", "s4": "r1", "s5": ""}}
	tests := []struct {
		name    string
		spec    string
		inherit *Inheritance
		share   bool
		// afterOwner is the outcome once the owner (job A) ended while its
		// child B is alive; afterChild once B ended too.
		afterOwner, afterChild outcome
	}{
		{
			name: "none", spec: `PMIX_ALLOC_INHERIT_NONE: When the owning namespace terminates, the reservation is released and its nodes are returned to the scheduler, even if derived children are still running on them`,
			inherit: ptr(InheritNone), afterOwner: ended(EndOwnerExit, true), afterChild: ended(EndOwnerExit, true),
		},
		{
			name: "child", spec: `PMIX_ALLOC_INHERIT_CHILD: released - nodes returned to the scheduler - only when all derived children have terminated`,
			inherit: ptr(InheritChild), afterOwner: held, afterChild: ended(EndDrained, true),
		},
		{
			name: "default", spec: `PMIX_ALLOC_INHERIT_DEFAULT: When the owning namespace terminates, the nodes are not returned to the scheduler; they become unreserved and remain in the session`,
			inherit: ptr(InheritDefault), afterOwner: ended(EndOwnerExit, false), afterChild: ended(EndOwnerExit, false),
		},
		{
			name: "child default", spec: `PMIX_ALLOC_INHERIT_CHILD_DEFAULT: The nodes become unreserved within the session when the last derived child terminates`,
			inherit: ptr(InheritChildDefault), afterOwner: held, afterChild: ended(EndDrained, false),
		},
		{
			name: "absent", spec: `When PMIX_ALLOC_INHERITANCE is absent, the host behaves as if PMIX_ALLOC_INHERIT_DEFAULT had been specified`,
			afterOwner: ended(EndOwnerExit, false), afterChild: ended(EndOwnerExit, false),
		},
		{
			name: "none shared", spec: `it is meaningful even for a shared (unreserved) allocation - there it still decides whether the nodes return to the scheduler (NONE/CHILD) or remain in the session`,
			inherit: ptr(InheritNone), share: true, afterOwner: ended(EndOwnerExit, true), afterChild: ended(EndOwnerExit, true),
		},
		{
			name: "child default shared", spec: `it is meaningful even for a shared (unreserved) allocation`,
			inherit: ptr(InheritChildDefault), share: true,
			afterOwner: outcome{Live: true, Sessions: map[string]string{"h0": "default", "h1": "default", "h2": "default", "h3": "default", "s4": "default", "s5": ""}},
			afterChild: ended(EndDrained, false),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestState(t, Support{})
			// Job A reserves s4 and h2 and spawns B into it.
			r := mustAlloc(t, s, Request{Op: OpNew, Names: []string{"s4", "h2"}, Inherit: tt.inherit, Share: ptr(tt.share)}, app(jobA), 1).Reservation
			if _, into, err := s.Target(Spawn{Targets: []string{r.ID}}, app(jobA)); err != nil {
				t.Fatal(err)
			} else {
				s.Accepted(jobB, jobA, into)
			}
			jobs := alive{jobB: true}
			observe := func(ch Change) outcome {
				return outcome{Live: r.Live(), Reason: r.EndReason, Departed: ch.Departed, Sessions: sessionsOf(s)}
			}
			got := observe(s.JobEnded(jobA, jobs, 5))
			if diff := cmp.Diff(tt.afterOwner, got); diff != "" {
				t.Errorf("spec %q\nat the owner's end (-want +got):\n%s", tt.spec, diff)
			}
			delete(jobs, jobB)
			ch := s.JobEnded(jobB, jobs, 6)
			got = observe(ch)
			if !tt.afterOwner.Live {
				tt.afterChild.Departed = nil // nothing more happens
			}
			if diff := cmp.Diff(tt.afterChild, got); diff != "" {
				t.Errorf("spec %q\nat the last child's end (-want +got):\n%s", tt.spec, diff)
			}
			if err := checkConsistent(s); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestDispositionOwnerWithoutChildren checks that the CHILD dispositions
// fire at the owner's end when no derived child is alive.
func TestDispositionOwnerWithoutChildren(t *testing.T) {
	for _, inh := range []Inheritance{InheritChild, InheritChildDefault} {
		s := newTestState(t, Support{})
		r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Inherit: ptr(inh)}, app(jobA), 1).Reservation
		ch := s.JobEnded(jobA, alive{}, 2)
		if r.Live() || r.EndReason != EndDrained {
			t.Errorf("%v: owner ended without children: live %v reason %q, want drained", inh, r.Live(), r.EndReason)
		}
		if got, want := len(ch.Departed) == 1, inh.Returns(); got != want {
			t.Errorf("%v: departed %v", inh, ch.Departed)
		}
	}
}

// TestDerivedChildrenDepth checks spec "a derived child is ... any
// namespace reachable by following the spawn relationship from the owning
// namespace to arbitrary depth" (docs/reservations.md decision 5), including
// descendants that existed before the reservation was created.
func TestDerivedChildrenDepth(t *testing.T) {
	s := newTestState(t, Support{})
	// E was spawned by A before the reservation existed.
	r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Inherit: ptr(InheritChild), Descendants: []fluid.ID{jobE}}, app(jobA), 1).Reservation
	s.Accepted(jobB, jobA, nil) // A's child, untargeted, outside r
	s.Accepted(jobC, jobB, nil) // grandchild
	s.Accepted(jobD, 0, nil)    // a tool's job: no relation
	if diff := cmp.Diff([]fluid.ID{jobE, jobB, jobC}, r.Children); diff != "" {
		t.Errorf("derived children (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Namespace{JobNS(jobA)}, r.Owners); diff != "" {
		t.Errorf("derived children are not owners (-want +got):\n%s", diff)
	}
	jobs := alive{jobB: true, jobC: true, jobD: true, jobE: true}
	for _, id := range []fluid.ID{jobA, jobB, jobE, jobD} {
		delete(jobs, id)
		s.JobEnded(id, jobs, 2)
		if !r.Live() {
			t.Fatalf("ended when %v ended, while %v lived", id, jobs)
		}
	}
	delete(jobs, jobC)
	ch := s.JobEnded(jobC, jobs, 3)
	if r.Live() || r.EndReason != EndDrained || len(ch.Departed) != 1 {
		t.Errorf("after the last derived child: live %v, reason %q, departed %v", r.Live(), r.EndReason, ch.Departed)
	}
}

// TestToolOwnedChild checks docs/reservations.md decision 5: "A tool owner never
// terminates, so for a tool-owned reservation CHILD fires when the last
// derived child ends (if there ever was one)".
func TestToolOwnedChild(t *testing.T) {
	s := newTestState(t, Support{})
	r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Inherit: ptr(InheritChild)}, alice, 1).Reservation
	s.Accepted(jobD, 0, nil) // an untargeted job: not a child
	s.JobEnded(jobD, alive{}, 2)
	if !r.Live() {
		t.Fatal("a tool-owned CHILD reservation ended before it ever had a child")
	}
	_, into, err := s.Target(Spawn{Targets: []string{r.ID}}, alice)
	if err != nil {
		t.Fatal(err)
	}
	s.Accepted(jobA, 0, into)
	s.Accepted(jobB, jobA, nil) // A's child is a derived child too
	s.JobEnded(jobA, alive{jobB: true}, 3)
	if !r.Live() {
		t.Fatal("ended while derived child B lives")
	}
	ch := s.JobEnded(jobB, alive{}, 4)
	if r.Live() || r.EndReason != EndDrained {
		t.Errorf("live %v reason %q, want drained", r.Live(), r.EndReason)
	}
	if diff := cmp.Diff([]string{"s4"}, ch.Departed); diff != "" {
		t.Errorf("departed (-want +got):\n%s", diff)
	}
}

// TestTriggers checks spec "Unconditional triggers" and "Ending a
// reservation while jobs are still mapped": which nodes depart (spares
// only, and only when returned) and which stay.
func TestTriggers(t *testing.T) {
	// r1: A's, on s4 and h2, inheritance DEFAULT (so it would not return
	// at the owner's end), expiring at 100.
	type want struct {
		Status   Status
		Reason   string
		Departed []string
		In       []string
		Sessions map[string]string
	}
	returned := map[string]string{"h0": "default", "h1": "default", "h2": "default", "h3": "default", "s4": "", "s5": ""}
	stays := map[string]string{"h0": "default", "h1": "default", "h2": "r1", "h3": "default", "s4": "r1", "s5": ""}
	tests := []struct {
		name string
		spec string
		do   func(s *State) (Change, error)
		want want
	}{
		{
			name: "release by the owner", spec: `An owner releases it by issuing PMIX_ALLOC_RELEASE`,
			do:   func(s *State) (Change, error) { return s.Allocate(Request{Op: OpRelease, ID: "r1"}, app(jobA), 10) },
			want: want{Reason: EndReleased, Departed: []string{"s4"}, In: testStartup, Sessions: returned},
		},
		{
			name: "release by a child owner", spec: `Any namespace in the owner set may release it`,
			do:   func(s *State) (Change, error) { return s.Allocate(Request{Op: OpRelease, ID: "r1"}, app(jobB), 10) },
			want: want{Reason: EndReleased, Departed: []string{"s4"}, In: testStartup, Sessions: returned},
		},
		{
			name: "release by req id", spec: `An owner releases it by issuing PMIX_ALLOC_RELEASE for the reservation's allocation id`,
			do:   func(s *State) (Change, error) { return s.Allocate(Request{Op: OpRelease, ReqID: "q"}, app(jobA), 10) },
			want: want{Reason: EndReleased, Departed: []string{"s4"}, In: testStartup, Sessions: returned},
		},
		{
			name: "release by the scheduler", spec: `the scheduler may release any reservation`,
			do:   func(s *State) (Change, error) { return s.Allocate(Request{Op: OpRelease, ID: "r1"}, scheduler, 10) },
			want: want{Reason: EndReleased, Departed: []string{"s4"}, In: testStartup, Sessions: returned},
		},
		{
			name: "release by a non-owner", spec: `Any namespace in the owner set may release it`,
			do:   func(s *State) (Change, error) { return s.Allocate(Request{Op: OpRelease, ID: "r1"}, app(jobC), 10) },
			want: want{Status: NoPermissions, In: []string{"h0", "h1", "h2", "h3", "s4"}, Sessions: stays},
		},
		{
			name: "reclaim by the scheduler", spec: `The scheduler terminates the allocation - for example on a timeout or an administrative reclaim`,
			do:   func(s *State) (Change, error) { return s.Allocate(Request{Op: OpReclaim, ID: "r1"}, scheduler, 10) },
			want: want{Reason: EndReclaimed, Departed: []string{"s4"}, In: testStartup, Sessions: returned},
		},
		{
			name: "reclaim by an owner", spec: `decision 11: a scheduler reclaim`,
			do:   func(s *State) (Change, error) { return s.Allocate(Request{Op: OpReclaim, ID: "r1"}, app(jobA), 10) },
			want: want{Status: NoPermissions, In: []string{"h0", "h1", "h2", "h3", "s4"}, Sessions: stays},
		},
		{
			name: "expiry", spec: `decision 11: Expiry (--time) is a scheduler reclaim: nodes are returned`,
			do: func(s *State) (Change, error) {
				_, ch := s.Tick(100)
				return ch, nil
			},
			want: want{Reason: EndExpired, Departed: []string{"s4"}, In: testStartup, Sessions: returned},
		},
		{
			name: "not yet expired", spec: `decision 11`,
			do: func(s *State) (Change, error) {
				_, ch := s.Tick(99.5)
				return ch, nil
			},
			want: want{In: []string{"h0", "h1", "h2", "h3", "s4"}, Sessions: stays},
		},
		{
			name: "teardown", spec: `The DVM tears down. All sessions, default and reserved alike, end with the DVM`,
			do:   func(s *State) (Change, error) { return s.Teardown(10), nil },
			want: want{Reason: EndTeardown, Departed: []string{"s4"}, In: testStartup, Sessions: returned},
		},
		{
			name: "owner exit under DEFAULT keeps every node", spec: `Unreserved in session never returns nodes to the scheduler on this trigger`,
			do:   func(s *State) (Change, error) { return s.JobEnded(jobA, alive{jobB: true}, 10), nil },
			want: want{Reason: EndOwnerExit, In: []string{"h0", "h1", "h2", "h3", "s4"}, Sessions: map[string]string{"h0": "default", "h1": "default", "h2": "default", "h3": "default", "s4": "default", "s5": ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestState(t, Support{})
			r := mustAlloc(t, s, Request{Op: OpNew, ReqID: "q", Names: []string{"s4", "h2"}, Time: 100}, app(jobA), 0).Reservation
			if _, into, err := s.Target(Spawn{Targets: []string{"r1"}}, app(jobA)); err != nil {
				t.Fatal(err)
			} else {
				s.Accepted(jobB, jobA, into)
			}
			ch, err := tt.do(s)
			got := want{Status: statusOf(err), Reason: r.EndReason, Departed: ch.Departed, In: inOf(s), Sessions: sessionsOf(s)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("spec %q (-want +got):\n%s", tt.spec, diff)
			}
			if err == nil && tt.want.Reason != "" {
				if diff := cmp.Diff([]*Reservation{r}, ch.Ended); diff != "" {
					t.Errorf("Ended (-want +got):\n%s", diff)
				}
				if !ch.Sessions {
					t.Error("the sessions changed but Change.Sessions is false")
				}
			}
			if err := checkConsistent(s); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestTeardownSendsEverySpareBack checks that after a teardown no spare is
// in the instance, even one left unreserved by a DEFAULT disposition.
func TestTeardownSendsEverySpareBack(t *testing.T) {
	s := newTestState(t, Support{})
	mustAlloc(t, s, Request{Op: OpNew, Names: []string{"s5"}}, app(jobA), 0)
	s.JobEnded(jobA, alive{}, 1) // DEFAULT: s5 stays, unreserved
	if n, _ := s.Node("s5"); !n.In || n.Holder != "" {
		t.Fatalf("s5 after DEFAULT: %+v", n)
	}
	mustAlloc(t, s, Request{Op: OpNew, Names: []string{"s4", "h1"}}, alice, 2)
	ch := s.Teardown(3)
	if diff := cmp.Diff([]string{"s4", "s5"}, ch.Departed); diff != "" {
		t.Errorf("departed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(testStartup, inOf(s)); diff != "" {
		t.Errorf("in the instance (-want +got):\n%s", diff)
	}
	if len(s.All(false)) != 0 {
		t.Errorf("live after teardown: %v", s.All(false))
	}
}

// TestTargeting checks spec "Spawn targeting behavior" and "Ownership
// model", with docs/reservations.md decisions 4 and 6.
func TestTargeting(t *testing.T) {
	// r1: A's. r2: A's. r3: bob's, shared. r4: A's, ended.
	setup := func(t *testing.T) *State {
		s := newTestState(t, Support{})
		mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 1)
		mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 1)
		mustAlloc(t, s, Request{Op: OpNew, Count: 1, Share: ptr(true)}, bob, 1)
		mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 1)
		mustAlloc(t, s, Request{Op: OpRelease, ID: "r4"}, app(jobA), 2)
		return s
	}
	tests := []struct {
		name     string
		spec     string
		who      Requester
		spawn    Spawn
		sessions []string
		into     []string
		status   Status
	}{
		{name: "absent", spec: `Absent, or naming only the invalid namespace - the job maps onto the default session`, who: app(jobA), spawn: Spawn{}},
		{name: "only default", spec: `Absent, or naming only the invalid namespace - the job maps onto the default session`, who: app(jobA), spawn: Spawn{Targets: []string{"default"}}},
		{name: "one id", spec: `One or more valid allocation ids - the job may map onto the union of those reservations' nodes`, who: app(jobA), spawn: Spawn{Targets: []string{"r1"}}, sessions: []string{"r1"}, into: []string{"r1"}},
		{name: "two ids", spec: `the union of those reservations' nodes`, who: app(jobA), spawn: Spawn{Targets: []string{"r2", "r1"}}, sessions: []string{"r2", "r1"}, into: []string{"r2", "r1"}},
		{name: "union with default", spec: `Valid ids plus the invalid namespace - the union additionally includes the default pool`, who: app(jobA), spawn: Spawn{Targets: []string{"r1", "default"}}, sessions: []string{"r1", "default"}, into: []string{"r1"}},
		{name: "non-owner", spec: `If any entry fails this check the entire spawn is rejected`, who: app(jobB), spawn: Spawn{Targets: []string{"default", "r1"}}, status: NoPermissions},
		{name: "non-owner tool", spec: `the requester's namespace is in the session's owner set`, who: alice, spawn: Spawn{Targets: []string{"r1"}}, status: NoPermissions},
		{name: "unknown", spec: `PMIX_SPAWN_TARGET names an allocation that resolves to no session - PMIX_ERR_NOT_FOUND`, who: app(jobA), spawn: Spawn{Targets: []string{"r9"}}, status: NotFound},
		{name: "ended", spec: `PMIX_SPAWN_TARGET names an allocation that resolves to no session - PMIX_ERR_NOT_FOUND`, who: app(jobA), spawn: Spawn{Targets: []string{"r4"}}, status: NotFound},
		{name: "scheduler anything", spec: `The scheduler is an implicit owner of every session and may target ... any of them`, who: scheduler, spawn: Spawn{Targets: []string{"r1", "r3"}}, sessions: []string{"r1", "default"}, into: []string{"r1", "r3"}},
		{name: "shared resolves to default", spec: `PMIX_ALLOC_SHARE true: they join the default session`, who: bob, spawn: Spawn{Targets: []string{"r3"}}, into: []string{"r3"}},
		{name: "untargeted application: parent's first target", spec: `decision 6: An application's job goes to its parent's first target session (and joins its owner set)`, who: app(jobA), spawn: Spawn{ParentTargets: []string{"r2", "r1"}}, sessions: []string{"r2"}, into: []string{"r2"}},
		{name: "untargeted application: parent's target ended", spec: `decision 6: or to the default session when the parent has none or it ended`, who: app(jobA), spawn: Spawn{ParentTargets: []string{"r4", "r1"}}},
		{name: "untargeted application: parent's target shared", spec: `decision 6`, who: app(jobA), spawn: Spawn{ParentTargets: []string{"r3"}}, sessions: []string{"default"}, into: []string{"r3"}},
		{name: "untargeted tool", spec: `decision 6: A tool's job goes to the default session`, who: alice, spawn: Spawn{ParentTargets: []string{"r1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := setup(t)
			before := snapshot(t, s)
			sessions, into, err := s.Target(tt.spawn, tt.who)
			if got := statusOf(err); got != tt.status {
				t.Fatalf("spec %q: status %v (%v), want %v", tt.spec, got, err, tt.status)
			}
			if diff := cmp.Diff(tt.sessions, sessions); diff != "" {
				t.Errorf("spec %q: sessions (-want +got):\n%s", tt.spec, diff)
			}
			if diff := cmp.Diff(tt.into, into); diff != "" {
				t.Errorf("spec %q: into (-want +got):\n%s", tt.spec, diff)
			}
			if snapshot(t, s) != before {
				t.Error("Target changed the state")
			}
		})
	}
}

// TestOwnershipGrowth checks spec "Each time a job is successfully spawned
// into a reservation, that job's namespace is added to the owner set as a
// child namespace, and may then spawn further jobs onto the same nodes" and
// "Ownership is not inherited transitively. A child owns only the
// reservation it was spawned into - never the other reservations its parent
// happens to own".
func TestOwnershipGrowth(t *testing.T) {
	s := newTestState(t, Support{})
	r1 := mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 1).Reservation
	r2 := mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 1).Reservation
	s.Dirty()
	// B is spawned by A into r1.
	_, into, err := s.Target(Spawn{Targets: []string{"r1"}}, app(jobA))
	if err != nil {
		t.Fatal(err)
	}
	s.Accepted(jobB, jobA, into)
	if diff := cmp.Diff([]Namespace{JobNS(jobA), JobNS(jobB)}, r1.Owners); diff != "" {
		t.Errorf("r1 owners (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Namespace{JobNS(jobA)}, r2.Owners); diff != "" {
		t.Errorf("r2 owners: B owns only what it was spawned into (-want +got):\n%s", diff)
	}
	if res, _ := s.Dirty(); len(res) != 2 {
		t.Errorf("Accepted left %d reservations dirty, want 2 (owners of r1, children of r2)", len(res))
	}
	tests := []struct {
		name    string
		targets []string
		status  Status
	}{
		{"B may target r1", []string{"r1"}, 0},
		{"B may not target its parent's r2", []string{"r2"}, NoPermissions},
		{"B's grandchild C may target r1", []string{"r1"}, 0},
	}
	for i, tt := range tests {
		who := app(jobB)
		if i == 2 {
			_, into, _ := s.Target(Spawn{Targets: []string{"r1"}}, app(jobB))
			s.Accepted(jobC, jobB, into)
			who = app(jobC)
		}
		if _, _, err := s.Target(Spawn{Targets: tt.targets}, who); statusOf(err) != tt.status {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.status)
		}
	}
	// An extend and a release by a child owner are allowed (spec: "Any
	// namespace in the owner set may release it").
	mustAlloc(t, s, Request{Op: OpExtend, ID: "r1", Count: 1}, app(jobB), 2)
	if _, err := s.Allocate(Request{Op: OpExtend, ID: "r2", Count: 1}, app(jobB), 2); statusOf(err) != NoPermissions {
		t.Errorf("B extended its parent's r2: %v", err)
	}
}

// TestTargetsLost checks docs/reservations.md decision 8: "A pending job whose
// targets have all ended fails ... One that also targets default stays".
func TestTargetsLost(t *testing.T) {
	s := newTestState(t, Support{})
	mustAlloc(t, s, Request{Op: OpNew, Count: 1}, alice, 1)
	mustAlloc(t, s, Request{Op: OpNew, Count: 1}, alice, 1)
	mustAlloc(t, s, Request{Op: OpRelease, ID: "r2"}, alice, 2)
	tests := []struct {
		targets []string
		want    bool
	}{
		{nil, false},
		{[]string{"r2"}, true},
		{[]string{"r2", "r9"}, true},
		{[]string{"r2", "r1"}, false},
		{[]string{"r2", "default"}, false},
		{[]string{"default"}, false},
	}
	for _, tt := range tests {
		if got := s.TargetsLost(tt.targets); got != tt.want {
			t.Errorf("TargetsLost(%v) = %v, want %v", tt.targets, got, tt.want)
		}
	}
}

// TestWarnings checks spec "Allocation timeout warning" and docs/reservations.md
// decision 10.
func TestWarnings(t *testing.T) {
	s := newTestState(t, Support{})
	// Alice creates r1 for job A, expiring at 100 with a warning 30 s ahead.
	r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, ReqID: "q1", Target: ptr(JobNS(jobA)), Time: 100, Warn: ptr(uint32(30))}, alice, 0).Reservation
	mustAlloc(t, s, Request{Op: OpNew, Count: 1, Time: 500}, bob, 0) // r2: no warning asked
	if got := s.NextDeadline(); got != 70 {
		t.Errorf("NextDeadline = %v, want 70 (the warning)", got)
	}
	if w, ch := s.Tick(69); len(w) != 0 || len(ch.Ended) != 0 {
		t.Errorf("Tick(69) = %v, %v; want nothing", w, ch)
	}
	s.Dirty()
	before, _ := json.Marshal(r)
	w, ch := s.Tick(70.5)
	// spec: "PRRTE delivers it only to the process that requested the
	// allocation ... carrying PMIX_ALLOC_ID, PMIX_ALLOC_REQ_ID ...,
	// PMIX_TIME_REMAINING".
	if diff := cmp.Diff([]Warning{{AllocID: "r1", ReqID: "q1", TimeRemaining: 30, To: ToolNS("alice"), Time: 70.5}}, w); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// spec: "The warning is strictly advance notice; it changes nothing
	// about the reservation by itself."
	var was, is Reservation
	after, _ := json.Marshal(r)
	json.Unmarshal(before, &was)
	json.Unmarshal(after, &is)
	if !is.Warned {
		t.Error("Warned not set: the warning would repeat")
	}
	is.Warned = false
	if diff := cmp.Diff(was, is); diff != "" || len(ch.Ended) != 0 || ch.Sessions {
		t.Errorf("the warning changed the reservation (-before +after):\n%s\nchange %+v", diff, ch)
	}
	if res, spares := s.Dirty(); len(res) != 1 || len(spares) != 0 {
		t.Errorf("dirty after a warning: %d reservations, %d nodes; want 1, 0", len(res), len(spares))
	}
	// Once per Expires.
	if w, _ := s.Tick(80); len(w) != 0 {
		t.Errorf("a second warning: %v", w)
	}
	if got := s.NextDeadline(); got != 100 {
		t.Errorf("NextDeadline = %v, want 100 (the expiry)", got)
	}
	// Job A extends with a new warning: it is now the requester, and the
	// warning is re-armed for the new expiry (spec: "typically by issuing
	// a PMIX_ALLOC_EXTEND (optionally renewing PMIX_ALLOC_WARN_TIMEOUT)").
	mustAlloc(t, s, Request{Op: OpExtend, ID: "r1", Time: 50, Warn: ptr(uint32(10))}, app(jobA), 81)
	if r.Expires != 150 || s.NextDeadline() != 140 {
		t.Errorf("after the extend: expires %v, next deadline %v; want 150, 140", r.Expires, s.NextDeadline())
	}
	w, _ = s.Tick(141)
	if diff := cmp.Diff([]Warning{{AllocID: "r1", ReqID: "q1", TimeRemaining: 9, To: JobNS(jobA), Time: 141}}, w); diff != "" {
		t.Errorf("warnings after the extend (-want +got):\n%s", diff)
	}
	s.Delivered(w[0], true)
	s.Delivered(Warning{AllocID: "r1", To: ToolNS("alice"), Time: 142}, false)
	var names []string
	for _, e := range r.History {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"created", "extended", "warned", "warning-undeliverable"}, names); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	_, ch = s.Tick(150)
	if r.Live() || r.EndReason != EndExpired || len(ch.Ended) != 1 {
		t.Errorf("at 150: live %v reason %q ended %d", r.Live(), r.EndReason, len(ch.Ended))
	}
	if got := s.NextDeadline(); got != 500 {
		t.Errorf("NextDeadline = %v, want 500 (r2's expiry)", got)
	}
}

// TestWarningDue checks warning thresholds at the edges: a warning asked
// for more seconds than the allocation has is due at once, whatever the
// clock reads.
func TestWarningDue(t *testing.T) {
	tests := []struct {
		name        string
		now         float64
		time        float64
		warn        uint32
		deadline    float64
		remainingAt float64
		remaining   uint32
	}{
		{name: "ordinary", now: 1000, time: 100, warn: 30, deadline: 1070, remainingAt: 1070, remaining: 30},
		{name: "warn longer than lifetime", now: 1000, time: 20, warn: 30, deadline: 990, remainingAt: 1000, remaining: 20},
		{name: "at time zero", now: 0, time: 20, warn: 30, deadline: -10, remainingAt: 0, remaining: 20},
		{name: "due exactly at zero", now: 0, time: 30, warn: 30, deadline: 0, remainingAt: 0, remaining: 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestState(t, Support{})
			mustAlloc(t, s, Request{Op: OpNew, Count: 1, Time: tt.time, Warn: ptr(tt.warn)}, alice, tt.now)
			if got := s.NextDeadline(); got != tt.deadline {
				t.Errorf("NextDeadline = %v, want %v", got, tt.deadline)
			}
			w, _ := s.Tick(tt.remainingAt)
			if len(w) != 1 || w[0].TimeRemaining != tt.remaining {
				t.Errorf("Tick(%v) = %+v, want one warning with %d s remaining", tt.remainingAt, w, tt.remaining)
			}
		})
	}
}

// TestExtendTime checks how an extend moves the expiry.
func TestExtendTime(t *testing.T) {
	tests := []struct {
		name    string
		created float64 // lifetime at creation
		extend  float64
		want    float64
	}{
		{"adds", 100, 50, 150},
		{"no expiry stays none", 0, 50, 0},
		{"infinite clears it", 100, math.Inf(1), 0},
		{"nothing added", 100, 0, 100},
	}
	for _, tt := range tests {
		s := newTestState(t, Support{})
		r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Time: tt.created}, alice, 0).Reservation
		mustAlloc(t, s, Request{Op: OpExtend, ID: r.ID, Time: tt.extend}, alice, 1)
		if r.Expires != tt.want {
			t.Errorf("%s: expires %v, want %v", tt.name, r.Expires, tt.want)
		}
	}
	s := newTestState(t, Support{})
	// Beyond fsd's bound (100 years) a time is refused, however it came.
	for _, bad := range []float64{-1, math.NaN(), fsd.MaxDuration + 1, 1e308} {
		if _, err := s.Allocate(Request{Op: OpNew, Count: 1, Time: bad}, alice, 0); statusOf(err) != BadParam {
			t.Errorf("time %v: %v, want BadParam", bad, err)
		}
	}
	r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Time: fsd.MaxDuration}, alice, 0).Reservation
	if _, err := s.Allocate(Request{Op: OpExtend, ID: r.ID, Time: 1e10}, alice, 1); statusOf(err) != BadParam {
		t.Errorf("extend by 1e10s: %v, want BadParam", err)
	}
	// Extensions each within the bound may not add up past the latest
	// time; what was refused changed nothing.
	now := float64(fsd.LatestTime) - 2*fsd.MaxDuration
	r = mustAlloc(t, s, Request{Op: OpNew, Count: 1, Time: fsd.MaxDuration}, alice, now).Reservation
	mustAlloc(t, s, Request{Op: OpExtend, ID: r.ID, Time: fsd.MaxDuration}, alice, now)
	_, err := s.Allocate(Request{Op: OpExtend, ID: r.ID, Time: 1}, alice, now)
	if statusOf(err) != BadParam || !strings.Contains(err.Error(), "would end after 9000-01-01T00:00:00Z") {
		t.Errorf("extend past the latest time: %v, want BadParam", err)
	}
	if r.Expires != fsd.LatestTime {
		t.Errorf("expires %v after a refused extension, want %v", r.Expires, float64(fsd.LatestTime))
	}
}

// TestBackwardCompatibility checks spec "Backward compatibility", switch by
// switch (docs/reservations.md decision 13).
func TestBackwardCompatibility(t *testing.T) {
	off := func(a Attr) Support { return Support{Unsupported: map[Attr]bool{a: true}} }
	t.Run("alloc-target", func(t *testing.T) {
		// "When PMIX_ALLOC_TARGET is unavailable, a dynamic allocation is
		// always reserved to the requester's own namespace."
		for _, who := range []Requester{alice, app(jobA)} {
			s := newTestState(t, off(AttrAllocTarget))
			r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Target: ptr(JobNS(jobB))}, who, 0).Reservation
			if r.Owner != who.NS {
				t.Errorf("%v: owner %v, want %v", who.NS, r.Owner, who.NS)
			}
		}
	})
	t.Run("alloc-share", func(t *testing.T) {
		// "When PMIX_ALLOC_SHARE is unavailable, the "reserve" default
		// applies and nodes are never routed to the default pool by a
		// dynamic request."
		s := newTestState(t, off(AttrAllocShare))
		r := mustAlloc(t, s, Request{Op: OpNew, Names: []string{"h1"}, Share: ptr(true)}, alice, 0).Reservation
		if r.Share || s.Session("h1") != r.ID {
			t.Errorf("share %v, session of h1 %q; want reserved to %s", r.Share, s.Session("h1"), r.ID)
		}
	})
	t.Run("alloc-inheritance", func(t *testing.T) {
		// "every reservation takes the default disposition ... a request
		// carrying a non-default value is rejected".
		s := newTestState(t, off(AttrAllocInheritance))
		r := mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 0).Reservation
		mustAlloc(t, s, Request{Op: OpNew, Count: 1, Inherit: ptr(InheritDefault)}, app(jobA), 0)
		for _, inh := range []Inheritance{InheritNone, InheritChild, InheritChildDefault} {
			if _, err := s.Allocate(Request{Op: OpNew, Count: 1, Inherit: ptr(inh)}, app(jobA), 0); statusOf(err) != NotSupported {
				t.Errorf("%v: %v, want NotSupported", inh, err)
			}
		}
		// Ignored on release: "ignored on PMIX_ALLOC_RELEASE".
		mustAlloc(t, s, Request{Op: OpRelease, ID: "r2", Inherit: ptr(InheritNone)}, app(jobA), 1)
		ch := s.JobEnded(jobA, alive{}, 2)
		if r.Inheritance != InheritDefault || r.EndReason != EndOwnerExit || len(ch.Departed) != 0 {
			t.Errorf("r1: %v, %q, departed %v; want default, owner-exit, none", r.Inheritance, r.EndReason, ch.Departed)
		}
	})
	t.Run("alloc-warn-timeout", func(t *testing.T) {
		// "no advance timeout warning is requested; an allocation still
		// expires and is reclaimed by the scheduler as before".
		s := newTestState(t, off(AttrAllocWarnTimeout))
		r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Time: 100, Warn: ptr(uint32(50))}, alice, 0).Reservation
		if s.NextDeadline() != 100 {
			t.Errorf("NextDeadline = %v, want 100", s.NextDeadline())
		}
		if w, _ := s.Tick(90); len(w) != 0 {
			t.Errorf("warnings: %v", w)
		}
		if _, ch := s.Tick(100); r.Live() || len(ch.Departed) != 1 {
			t.Errorf("not reclaimed at expiry: live %v, departed %v", r.Live(), ch.Departed)
		}
	})
	t.Run("spawn-target", func(t *testing.T) {
		// "When PMIX_SPAWN_TARGET is unavailable, spawns use the default or
		// parent session exactly as they do today."
		s := newTestState(t, off(AttrSpawnTarget))
		mustAlloc(t, s, Request{Op: OpNew, Count: 1}, app(jobA), 0)
		for _, targets := range [][]string{{"r1"}, {"r9"}, {"r1", "default"}} {
			sessions, into, err := s.Target(Spawn{Targets: targets}, alice)
			if err != nil || sessions != nil || into != nil {
				t.Errorf("targets %v: %v %v %v, want the default session", targets, sessions, into, err)
			}
		}
		sessions, _, err := s.Target(Spawn{Targets: []string{"r9"}, ParentTargets: []string{"r1"}}, app(jobA))
		if err != nil || !cmp.Equal(sessions, []string{"r1"}) {
			t.Errorf("application: %v %v, want its parent's session r1", sessions, err)
		}
	})
	t.Run("none supported", func(t *testing.T) {
		// "A DVM whose PMIx lacks all five attributes still partitions
		// resources sensibly".
		sup, err := ParseUnsupported([]string{"alloc-target", "alloc-share", "alloc-inheritance", "alloc-warn-timeout", "spawn-target"})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range Attrs {
			if sup.Has(a) {
				t.Errorf("%s still supported", a)
			}
		}
		s := newTestState(t, sup)
		r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Share: ptr(true), Target: ptr(JobNS(jobB))}, app(jobA), 0).Reservation
		if r.Owner != JobNS(jobA) || r.Share || r.Inheritance != InheritDefault {
			t.Errorf("got %+v", r)
		}
	})
}

// TestParseUnsupported checks the [reservation] unsupported list.
func TestParseUnsupported(t *testing.T) {
	tests := []struct {
		names []string
		want  Support
		err   bool
	}{
		{names: nil, want: Support{}},
		{names: []string{"alloc-share", "spawn-target"}, want: Support{Unsupported: map[Attr]bool{AttrAllocShare: true, AttrSpawnTarget: true}}},
		{names: []string{"alloc-share", "alloc-share"}, want: Support{Unsupported: map[Attr]bool{AttrAllocShare: true}}},
		{names: []string{"alloc-reserved"}, err: true},
		{names: []string{"spawn-target", ""}, err: true},
	}
	for _, tt := range tests {
		got, err := ParseUnsupported(tt.names)
		if (err != nil) != tt.err {
			t.Errorf("ParseUnsupported(%q) error %v, want error %v", tt.names, err, tt.err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseUnsupported(%q) (-want +got):\n%s", tt.names, diff)
		}
	}
}

// TestSpares checks AddSpares and RemoveNodes (docs/reservations.md decision 1).
func TestSpares(t *testing.T) {
	s := newTestState(t, Support{})
	got, err := s.AddSpares([]string{"s6", "s7"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Node{{Name: "s6", Rank: 6, Origin: Spare}, {Name: "s7", Rank: 7, Origin: Spare}}, got); diff != "" {
		t.Errorf("AddSpares (-want +got):\n%s", diff)
	}
	if _, spares := s.Dirty(); len(spares) != 2 {
		t.Errorf("dirty spares %v", spares)
	}
	mustAlloc(t, s, Request{Op: OpNew, Names: []string{"s4"}}, alice, 0)
	mustAlloc(t, s, Request{Op: OpNew, Names: []string{"s5"}}, app(jobA), 0)
	s.JobEnded(jobA, alive{}, 1) // s5 stays, unreserved
	tests := []struct {
		name     string
		remove   []string
		err      bool
		departed []string
	}{
		{name: "held", remove: []string{"s6", "s4"}, err: true},
		{name: "startup", remove: []string{"h2"}, err: true},
		{name: "unknown", remove: []string{"x"}, err: true},
		{name: "twice", remove: []string{"s6", "s6"}, err: true},
		{name: "unreserved spare in the instance departs", remove: []string{"s5", "s6"}, departed: []string{"s5"}},
		{name: "already removed", remove: []string{"s6"}, err: true},
	}
	for _, tt := range tests {
		before := snapshot(t, s)
		ch, err := s.RemoveNodes(tt.remove)
		if (err != nil) != tt.err {
			t.Fatalf("%s: error %v, want error %v", tt.name, err, tt.err)
		}
		if err != nil {
			if snapshot(t, s) != before {
				t.Errorf("%s: a refused removal changed the state", tt.name)
			}
			continue
		}
		if diff := cmp.Diff(tt.departed, ch.Departed); diff != "" {
			t.Errorf("%s: departed (-want +got):\n%s", tt.name, diff)
		}
	}
	// A removed node is never picked.
	if _, err := s.Allocate(Request{Op: OpNew, Names: []string{"s6"}}, alice, 2); statusOf(err) != OutOfResource {
		t.Errorf("picked a removed node: %v", err)
	}
	// Added again, a host gets its old rank back; a new one the next rank.
	if _, err := s.AddSpares([]string{"s4"}); err == nil {
		t.Error("added s4, a spare already known")
	}
	if _, err := s.AddSpares([]string{"h1"}); err == nil {
		t.Error("added h1, a startup node")
	}
	if _, err := s.AddSpares([]string{"s8", "s8"}); err == nil {
		t.Error("added s8 twice")
	}
	got, err = s.AddSpares([]string{"s8", "s6", "s5"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Node{{Name: "s8", Rank: 8, Origin: Spare}, {Name: "s6", Rank: 6, Origin: Spare}, {Name: "s5", Rank: 5, Origin: Spare}}, got); diff != "" {
		t.Errorf("AddSpares again (-want +got):\n%s", diff)
	}
	ch := mustAlloc(t, s, Request{Op: OpNew, Count: 3}, alice, 3)
	if diff := cmp.Diff([]string{"s5", "s6", "s7"}, ch.Joined); diff != "" {
		t.Errorf("joined (-want +got):\n%s", diff)
	}
	if err := checkConsistent(s); err != nil {
		t.Error(err)
	}
}

// TestNew checks that New rejects inputs that do not agree, and rebuilds
// holders from the live reservations (decision 12: a restart keeps every
// reservation).
func TestNew(t *testing.T) {
	live := func(id string, nodes ...string) *Reservation {
		return &Reservation{ID: id, Owner: ToolNS("a"), Owners: []Namespace{ToolNS("a")}, Nodes: nodes}
	}
	ended := live("r2", "h1")
	ended.Ended = 5
	tests := []struct {
		name    string
		startup []string
		spares  []Node
		res     []*Reservation
		last    uint64
		err     bool
	}{
		{name: "ok", startup: []string{"h0", "h1"}, spares: []Node{{Name: "s2", Rank: 2, In: true}}, res: []*Reservation{live("r1", "h1", "s2"), ended}, last: 2},
		{name: "ended holds nothing", startup: []string{"h0", "h1"}, res: []*Reservation{live("r3", "h1"), ended}, last: 3},
		{name: "startup twice", startup: []string{"h0", "h0"}, err: true},
		{name: "spare named as startup", startup: []string{"h0"}, spares: []Node{{Name: "h0", Rank: 1}}, err: true},
		{name: "spare with a startup rank", startup: []string{"h0", "h1"}, spares: []Node{{Name: "s", Rank: 1}}, err: true},
		{name: "spares share a rank", startup: []string{"h0"}, spares: []Node{{Name: "s", Rank: 3}, {Name: "t", Rank: 3}}, err: true},
		{name: "allocation twice", startup: []string{"h0", "h1"}, res: []*Reservation{live("r1"), live("r1")}, last: 1, err: true},
		{name: "id never issued", startup: []string{"h0", "h1"}, res: []*Reservation{live("r2")}, last: 1, err: true},
		{name: "id not rN", startup: []string{"h0", "h1"}, res: []*Reservation{live("default")}, last: 1, err: true},
		{name: "id r0", startup: []string{"h0", "h1"}, res: []*Reservation{live("r0")}, last: 1, err: true},
		{name: "unknown node", startup: []string{"h0", "h1"}, res: []*Reservation{live("r1", "h9")}, last: 1, err: true},
		{name: "node held twice", startup: []string{"h0", "h1"}, res: []*Reservation{live("r1", "h1"), live("r2", "h1")}, last: 2, err: true},
		{name: "held spare outside", startup: []string{"h0"}, spares: []Node{{Name: "s1", Rank: 1}}, res: []*Reservation{live("r1", "s1")}, last: 1, err: true},
		{name: "held spare removed", startup: []string{"h0"}, spares: []Node{{Name: "s1", Rank: 1, In: true, Removed: true}}, res: []*Reservation{live("r1", "s1")}, last: 1, err: true},
		{name: "removed spare inside", startup: []string{"h0"}, spares: []Node{{Name: "s1", Rank: 1, In: true, Removed: true}}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Support{}, tt.startup, tt.spares, tt.res, tt.last)
			if (err != nil) != tt.err {
				t.Fatalf("New error %v, want error %v", err, tt.err)
			}
			if err == nil {
				if cerr := checkConsistent(s); cerr != nil {
					t.Error(cerr)
				}
				if s.Last() != tt.last {
					t.Errorf("Last %d, want %d", s.Last(), tt.last)
				}
			}
		})
	}
	// Restored, the reservations are in id order, and the next id follows
	// the last issued, not the last kept.
	s, err := New(Support{}, []string{"h0", "h1", "h2"}, nil, []*Reservation{live("r10", "h2"), live("r9", "h1")}, 12)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range s.All(false) {
		ids = append(ids, r.ID)
	}
	if diff := cmp.Diff([]string{"r9", "r10"}, ids); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if n, _ := s.Node("h2"); n.Holder != "r10" {
		t.Errorf("h2 holder %q, want r10", n.Holder)
	}
	s.AddSpares([]string{"s3"})
	if r := mustAlloc(t, s, Request{Op: OpNew, Count: 1}, alice, 0).Reservation; r.ID != "r13" {
		t.Errorf("next id %s, want r13", r.ID)
	}
}

// TestTextRoundTrip checks Namespace, Inheritance and Class as text, as
// the store writes them.
func TestTextRoundTrip(t *testing.T) {
	for _, ns := range []Namespace{JobNS(jobA), JobNS(1 << 40), ToolNS("alice"), {}} {
		b, err := ns.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Namespace
		if err := got.UnmarshalText(b); err != nil || got != ns {
			t.Errorf("Namespace %#v -> %q -> %#v, %v", ns, b, got, err)
		}
	}
	for _, bad := range []string{"tool:", "nosuch", "-1", "0"} {
		var ns Namespace
		if err := ns.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("Namespace %q parsed as %#v", bad, ns)
		}
	}
	var ns Namespace
	if err := ns.UnmarshalText([]byte("101")); err != nil || ns != JobNS(101) {
		t.Errorf("decimal job id: %#v %v", ns, err)
	}
	for _, i := range []Inheritance{InheritDefault, InheritNone, InheritChild, InheritChildDefault} {
		b, _ := i.MarshalText()
		var got Inheritance
		if err := got.UnmarshalText(b); err != nil || got != i {
			t.Errorf("Inheritance %v -> %q -> %v, %v", i, b, got, err)
		}
	}
	if _, err := ParseInheritance("CHILD"); err == nil {
		t.Error("ParseInheritance(CHILD) succeeded")
	}
	for _, c := range []Class{Tool, Application, Scheduler} {
		b, _ := c.MarshalText()
		var got Class
		if err := got.UnmarshalText(b); err != nil || got != c {
			t.Errorf("Class %v -> %q -> %v, %v", c, b, got, err)
		}
	}
	var c Class
	if err := c.UnmarshalText([]byte("admin")); err == nil {
		t.Error("Class admin parsed")
	}
	if Class(7).String() != "class(7)" || Inheritance(9).String() != "inheritance(9)" || Op(5).String() != "op(5)" {
		t.Error("out-of-range names")
	}
	// A whole reservation survives JSON, as the store keeps it.
	s := newTestState(t, Support{})
	r := mustAlloc(t, s, Request{Op: OpNew, Count: 1, ReqID: "x", Inherit: ptr(InheritChild), Target: ptr(JobNS(jobA))}, scheduler, 1).Reservation
	s.Accepted(jobB, jobA, nil)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Reservation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if diff := cmp.Diff(r.Owners, back.Owners); diff != "" || back.Owner != r.Owner || back.Inheritance != r.Inheritance || back.RequesterClass != Scheduler || !cmp.Equal(back.Children, r.Children) {
		t.Errorf("round trip: %s\n%+v", diff, back)
	}
}
