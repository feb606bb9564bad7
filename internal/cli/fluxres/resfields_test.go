package fluxres

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/exitcode"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/fluid"
)

// Issue 27: `fluxres reservation list -o` offers what the table shows,
// owners and children as job IDs print everywhere (F58), and -o help
// says what each field means.
func TestReservationListFields(t *testing.T) {
	job := fluid.ID(1 << 30)
	// runRes sets FLUXQ_F58_FORCE_ASCII: the IDs print with an f.
	fmtID := func(id fluid.ID) string { return output.JobID(id, func(string) string { return "1" }) }
	tests := []struct {
		name   string
		format string
		change func(*api.ReservationList) // of sampleList's, before the run
		want   string                     // the lines, -n
		code   int
	}{
		{name: "table columns", format: "{alloc_id} {state} {owner} {nnodes} {nodelist} {inheritance} {expires_in}",
			want: "r1 active tool:alice 3 node[1-2],spare0 child -\n" +
				"r2 ended " + fmtID(job) + " 1 node3 default owner-exit\n"},
		{name: "children in F58", format: "{alloc_id}:{children}:{live_children}",
			want: "r1:" + fmtID(job+1) + "," + fmtID(job+2) + ":" + fmtID(job+1) + "\nr2::\n"},
		{name: "owners and requester", format: "{owners}|{requester}|{requester_class}",
			want: "tool:alice," + fmtID(job+1) + "|tool:alice|tool\n" + fmtID(job) + "|" + fmtID(job) + "|application\n"},
		{name: "empty drops with ?:", format: "{alloc_id}?:{live_children}", change: func(l *api.ReservationList) { l.Reservations[0].LiveChildren = nil }, want: "r1\nr2\n"},
		{name: "no time left without --time", format: "{alloc_id}[{t_remaining}]", want: "r1[]\nr2[]\n"},
		{name: "a --json field still reads", format: "{req_id:h} {origins.spare0:h}", want: "job-a spare\n- -\n"},
		// The Go struct behind an owner is no field: it printed nothing.
		{name: "owner.Tool refused", format: "{owner.Tool}", code: exitcode.Usage},
		{name: "unknown field", format: "{nodelst}", code: exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := sampleList()
			list.Reservations[0].Children = []fluid.ID{job + 1, job + 2}
			if tt.change != nil {
				tt.change(list)
			}
			code, out, stderr := runRes(t, &fakeClient{list: list}, "reservation", "list", "-a", "-n", "-o", tt.format)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			if tt.code != 0 {
				if !strings.Contains(stderr, "-o help lists the fields") {
					t.Errorf("stderr %q does not point at -o help", stderr)
				}
				return
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("-o %s (-want +got):\n%s", tt.format, diff)
			}
		})
	}
}

// Every column of the table is a field under the same heading, and every
// field of -o help has a description.
func TestReservationFieldsCoverTable(t *testing.T) {
	fields := resFields(time.Now)
	headings := map[string]bool{}
	for _, f := range fields {
		if f.Help == "" {
			t.Errorf("field %s has no help", f.Name)
		}
		headings[f.Heading] = true
	}
	for _, h := range strings.Fields("ALLOC_ID STATE OWNER NNODES NODELIST SHARE INHERIT EXPIRES") {
		if !headings[h] {
			t.Errorf("column %s has no field", h)
		}
	}
	code, out, stderr := runRes(t, &fakeClient{list: sampleList()}, "reservation", "list", "-o", "help")
	if code != 0 {
		t.Fatalf("-o help: exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "owner.") || strings.Contains(line, "requester.") {
			t.Errorf("-o help lists a Go struct field: %q", line)
		}
	}
	for _, want := range []string{"nodelist *", "nnodes *", "children *", "ALLOC_ID      allocation ID"} {
		if !strings.Contains(out, want) {
			t.Errorf("-o help lacks %q:\n%s", want, out)
		}
	}
}
