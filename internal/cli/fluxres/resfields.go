package fluxres

import (
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/reservation"
)

// resFields are the fields of `fluxres reservation list -o`, as
// jobFields are fluxq jobs': every column the table shows under its
// heading, computed where --json has it in another form, and the heading
// and meaning of each --json field for -o help. Owners and children print
// as every command prints a job ID (F58, f with FLUXQ_F58_FORCE_ASCII),
// where --json has Go's decimal for children.
func resFields(now func() time.Time) []output.Field[api.ReservationView] {
	type f = output.Field[api.ReservationView]
	return []f{
		// Computed: the table's columns, and the lists of jobs in F58.
		{Name: "owner", Heading: "OWNER", Help: "owning job in F58, or tool:USER for a user outside any job", Value: func(v api.ReservationView) any { return nsText(v.Owner) }},
		{Name: "owners", Heading: "OWNERS", Help: "the owner set, comma-separated: the owner and every job spawned into it", Value: func(v api.ReservationView) any { return nsListText(v.Owners) }},
		{Name: "requester", Heading: "REQUESTER", Help: "who made the last create or extend (gets the timeout warnings)", Value: func(v api.ReservationView) any { return nsText(v.Requester) }},
		{Name: "nnodes", Heading: "NNODES", Help: "how many nodes it holds", Value: func(v api.ReservationView) any { return len(v.Nodes) }},
		{Name: "nodelist", Heading: "NODELIST", Help: "its nodes as a hostlist, node[1-2]", Value: func(v api.ReservationView) any { return hostlistText(v.Nodes) }},
		{Name: "children", Heading: "CHILDREN", Help: "derived children in F58, comma-separated, in the order they appeared", Value: func(v api.ReservationView) any { return idsText(v.Children) }},
		{Name: "live_children", Heading: "LIVE_CHILDREN", Help: "the derived children still active, in F58", Value: func(v api.ReservationView) any { return idsText(v.LiveChildren) }},
		{Name: "expires_in", Heading: "EXPIRES", Help: "the EXPIRES column: time left, - without --time, or why it ended", Value: func(v api.ReservationView) any { return expires(v, now()) }},
		{Name: "t_remaining", Heading: "T_REMAINING", Help: "seconds left before it is reclaimed, while live with --time ({t_remaining!F})", Value: func(v api.ReservationView) any {
			if !v.Live() || v.Expires == 0 {
				return nil
			}
			return max(0, v.Expires-float64(now().UnixNano())/1e9)
		}},

		// The --json fields.
		{Name: "alloc_id", Heading: "ALLOC_ID", Help: "allocation ID: r1, r2, ..."},
		{Name: "req_id", Heading: "REQ_ID", Help: "request ID given at create, if any"},
		{Name: "state", Heading: "STATE", Help: "active or ended"},
		{Name: "requester_class", Heading: "CLASS", Help: "the requester's kind: tool, application or scheduler"},
		{Name: "share", Heading: "SHARE", Help: "True if its nodes stay in the default session, shared"},
		{Name: "inheritance", Heading: "INHERIT", Help: "what becomes of the nodes at the owner's end: none, default, child, child-default"},
		{Name: "nodes", Heading: "NODES", Help: "its nodes, in rank order"},
		{Name: "origins", Heading: "ORIGINS", Help: "each node's origin, startup or spare; a key: {origins.node1}"},
		{Name: "created", Heading: "CREATED", Help: "when created (seconds since the epoch: {created!d:%H:%M})"},
		{Name: "expires", Heading: "EXPIRATION", Help: "when the scheduler reclaims it (seconds since the epoch), with --time"},
		{Name: "warn", Heading: "WARN", Help: "seconds before expiry the requester is warned, with --warn"},
		{Name: "warned", Heading: "WARNED", Help: "True once the warning for this expiry is out"},
		{Name: "owner_ended", Heading: "OWNER_ENDED", Help: "True once the owning job has ended"},
		{Name: "ended", Heading: "ENDED", Help: "when it ended (seconds since the epoch)"},
		{Name: "end_reason", Heading: "END_REASON", Help: "why it ended: released, reclaimed, expired, owner-exit..."},
		{Name: "history", Heading: "HISTORY", Help: "its events: created, extended, warned, ended (fluxres reservation show)"},
	}
}

// nsText is a namespace as the table prints it, "" for none (so that a
// Flux format's ?: can drop it).
func nsText(ns reservation.Namespace) string {
	if ns.IsZero() {
		return ""
	}
	return fmtNS(ns)
}

func nsListText(list []reservation.Namespace) string {
	out := make([]string, 0, len(list))
	for _, ns := range list {
		if !ns.IsZero() {
			out = append(out, fmtNS(ns))
		}
	}
	return strings.Join(out, ",")
}

func idsText(ids []fluid.ID) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmtID(id)
	}
	return strings.Join(out, ",")
}

func hostlistText(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return nodelist(names)
}
