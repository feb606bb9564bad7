package reservation

import (
	"math"
	"strings"
	"testing"
)

// bobQuota is the quota of user bob, whose namespaces are his tool and
// job B: nodes, seconds.
func bobQuota(nodes int, time float64) *Quota {
	return &Quota{Limits: Limits{Nodes: nodes, Time: time}, User: "bob", Owns: func(ns Namespace) bool {
		return ns == ToolNS("bob") || ns == JobNS(jobB)
	}}
}

// A guest reserves only for its own namespaces, within its node and time
// limits; a refusal is PMIX_ERR_NO_PERMISSIONS and changes nothing.
func TestQuota(t *testing.T) {
	tests := []struct {
		name  string
		quota *Quota
		req   Request
		want  string // "" for success
	}{
		{"own tool", bobQuota(2, 0), Request{Op: OpNew, Count: 2}, ""},
		{"own job", bobQuota(2, 0), Request{Op: OpNew, Count: 1, Target: ptr(JobNS(jobB))}, ""},
		{"another user's job", bobQuota(2, 0), Request{Op: OpNew, Count: 1, Target: ptr(JobNS(jobA))},
			"job " + jobA.String() + " belongs to another user: a guest may reserve only for its own jobs"},
		{"no nodes configured", bobQuota(0, 0), Request{Op: OpNew, Count: 1},
			"user bob may not hold reserved nodes: [access] guest-reserved-nodes is 0"},
		{"too many nodes", bobQuota(2, 0), Request{Op: OpNew, Count: 3},
			"user bob may hold 2 reserved nodes at most ([access] guest-reserved-nodes): it holds 0 and asks for 3"},
		{"too many named", bobQuota(1, 0), Request{Op: OpNew, Names: []string{"h1", "h2"}}, "it holds 0 and asks for 2"},
		{"no time under a bound", bobQuota(2, 3600), Request{Op: OpNew, Count: 1},
			"a guest's reservation may last 1h at most ([access] guest-reservation-time): give --time 1h or less"},
		{"inf under a bound", bobQuota(2, 3600), Request{Op: OpNew, Count: 1, Time: math.Inf(1)}, "give --time 1h or less"},
		{"too long", bobQuota(2, 3600), Request{Op: OpNew, Count: 1, Time: 3601}, "give --time 1h or less"},
		{"long enough", bobQuota(2, 3600), Request{Op: OpNew, Count: 1, Time: 3600}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestState(t, Support{})
			before := snapshot(t, s)
			tc.req.Quota = tc.quota
			_, err := s.Allocate(tc.req, bob, 10)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Allocate: %v", err)
				}
				return
			}
			if statusOf(err) != NoPermissions || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Allocate: %v, want PMIX_ERR_NO_PERMISSIONS: ...%s", err, tc.want)
			}
			if after := snapshot(t, s); after != before {
				t.Errorf("a refused request changed the state:\n%s\n%s", before, after)
			}
		})
	}
}

// What a user already owns counts, whoever made it (here the owner, for
// the user's job); extending is limited the same way.
func TestQuotaHeld(t *testing.T) {
	s := newTestState(t, Support{})
	mustAlloc(t, s, Request{Op: OpNew, Count: 1, Target: ptr(JobNS(jobB)), Time: 600}, alice, 0)
	r2 := mustAlloc(t, s, Request{Op: OpNew, Count: 1, Time: 600, Quota: bobQuota(2, 3600)}, bob, 0).Reservation
	for _, req := range []Request{
		{Op: OpNew, Count: 1, Time: 60},
		{Op: OpExtend, ID: r2.ID, Count: 1},
	} {
		req.Quota = bobQuota(2, 3600)
		if _, err := s.Allocate(req, bob, 1); err == nil || !strings.Contains(err.Error(), "it holds 2 and asks for 1") {
			t.Errorf("%s: %v, want the node limit", req.Op, err)
		}
	}
	// r2 expires at 600: at 100, 3100s more is 1h exactly; 3101s is past it.
	if _, err := s.Allocate(Request{Op: OpExtend, ID: r2.ID, Time: 3101, Quota: bobQuota(2, 3600)}, bob, 100); err == nil ||
		!strings.Contains(err.Error(), r2.ID+" would last more than 1h from now ([access] guest-reservation-time)") {
		t.Errorf("extend past the time limit: %v", err)
	}
	if _, err := s.Allocate(Request{Op: OpExtend, ID: r2.ID, Time: 3100, Quota: bobQuota(2, 3600)}, bob, 100); err != nil {
		t.Errorf("extend to the time limit: %v", err)
	}
	// Released, its node no longer counts.
	mustAlloc(t, s, Request{Op: OpRelease, ID: r2.ID}, bob, 200)
	if _, err := s.Allocate(Request{Op: OpNew, Count: 1, Time: 60, Quota: bobQuota(2, 3600)}, bob, 300); err != nil {
		t.Errorf("after a release: %v", err)
	}
}
