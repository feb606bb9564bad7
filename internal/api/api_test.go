package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/reservation"
)

// Every entry has a unique name, and Lookup finds each.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Table {
		if s.Name == "" || seen[s.Name] {
			t.Errorf("entry %q: empty or repeated name", s.Name)
		}
		seen[s.Name] = true
		if got, ok := Lookup(s.Name); !ok || got.Name != s.Name {
			t.Errorf("Lookup(%q) = %v, %v", s.Name, got, ok)
		}
	}
	if _, ok := Lookup("nosuch"); ok {
		t.Error("Lookup found an unknown method")
	}
	// The streams are exactly those whose answer waits for a job or a
	// queue; a stream is never a change.
	for _, s := range Table {
		want := s.Name == "events" || s.Name == "wait" || s.Name == "wait-all" || s.Name == "queue-wait" || s.Name == "tool-events"
		if s.Stream != want {
			t.Errorf("%s: Stream = %v", s.Name, s.Stream)
		}
		if s.Stream && !s.ReadOnly {
			t.Errorf("%s: a stream that changes things", s.Name)
		}
	}
}

func TestAccess(t *testing.T) {
	if err := Anyone.Check(false); err != nil {
		t.Errorf("Anyone refused a guest: %v", err)
	}
	if err := Drain.Access.Check(true); err != nil {
		t.Errorf("the owner was refused a drain: %v", err)
	}
	err := Drain.Access.Check(false)
	if err == nil || err.Error() != "permission denied: only the instance owner may drain or undrain" || !errors.Is(err, ErrPermission) {
		t.Errorf("a guest's drain: %v", err)
	}
	for _, s := range Table {
		owner := s.Name == "drain" || s.Name == "undrain" || s.Name == "queue-change" || s.Name == "spare-add" || s.Name == "node-remove"
		if s.Access.OwnerOnly() != owner {
			t.Errorf("%s: owner only = %v, want %v", s.Name, s.Access.OwnerOnly(), owner)
		}
	}
}

var errForeign = errors.New("a foreign sentinel")

func init() { Classify(errForeign, CodeInactive) }

// An error keeps its message and its kind across the wire: errors.Is
// answers the same for what was sent and what was received.
func TestErrorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		kinds []error
		errno syscall.Errno
	}{
		{"sentinel", ErrUnknownJob, []error{ErrUnknownJob}, 0},
		{"wrapped sentinel", fmt.Errorf("job f123: %w", ErrUnknownJob), []error{ErrUnknownJob}, 0},
		{"own message", Errorf(CodePermission, "permission denied: not yours"), []error{ErrPermission}, 0},
		{"classified", fmt.Errorf("cancel: %w", errForeign), []error{ErrInactive}, 0},
		{"no kind", errors.New("jobspec: no tasks"), nil, 0},
		{"errno", fmt.Errorf("cannot write the store: %w", syscall.ENOSPC), nil, syscall.ENOSPC},
	} {
		// Through the line the server writes and the client reads.
		b, err := json.Marshal(Failure(tc.err))
		if err != nil {
			t.Fatal(err)
		}
		var r Reply
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		got := r.Err()
		for _, g := range []error{got, Wire(tc.err)} {
			if g.Error() != tc.err.Error() {
				t.Errorf("%s: message %q, want %q", tc.name, g, tc.err)
			}
			for _, k := range []error{ErrUnknownJob, ErrPermission, ErrInactive, ErrNeedsInstance, ErrUnavailable} {
				want := false
				for _, w := range tc.kinds {
					want = want || w == k
				}
				if errors.Is(g, k) != want {
					t.Errorf("%s: errors.Is(%v) = %v, want %v", tc.name, k, !want, want)
				}
			}
			if tc.errno != 0 && !errors.Is(g, tc.errno) {
				t.Errorf("%s: lost errno %v", tc.name, tc.errno)
			}
			var errno syscall.Errno
			if tc.errno == 0 && errors.As(g, &errno) {
				t.Errorf("%s: gained errno %v", tc.name, errno)
			}
		}
	}
	if Wire(nil) != nil {
		t.Error("Wire(nil) is not nil")
	}
}

// A refused reservation request comes back as the scheduler made it.
func TestReservationErrorRoundTrip(t *testing.T) {
	sent := &reservation.Error{Status: reservation.BadParam, Msg: "node count -1 is negative"}
	r := Failure(sent)
	var re *reservation.Error
	if got := r.Err(); !errors.As(got, &re) || re.Status != reservation.BadParam || re.Msg != "node count -1 is negative" {
		t.Errorf("got %#v", got)
	}
	if !strings.HasPrefix(r.Error, "PMIX_ERR_BAD_PARAM: ") || r.Code != CodeReservation {
		t.Errorf("message %q", r.Error)
	}
}

// Stream lines: events travel as events, anything else as progress.
func TestStreamLines(t *testing.T) {
	line, err := StreamLine(eventlog.Event{Name: "submit", Timestamp: 1})
	if err != nil || line.Event == nil || line.Event.Name != "submit" {
		t.Fatalf("event line = %+v, %v", line, err)
	}
	e, err := StreamValue[eventlog.Event](&line)
	if err != nil || e.Name != "submit" {
		t.Errorf("event back = %+v, %v", e, err)
	}
	line, err = StreamLine(QueueCounts{Active: 3})
	if err != nil || len(line.Progress) == 0 {
		t.Fatalf("progress line = %+v, %v", line, err)
	}
	c, err := StreamValue[QueueCounts](&line)
	if err != nil || c.Active != 3 {
		t.Errorf("counts back = %+v, %v", c, err)
	}
	if _, err := StreamValue[QueueCounts](&Reply{Event: &eventlog.Event{}}); err == nil {
		t.Error("an event was taken for counts")
	}
}

func TestQueueWait(t *testing.T) {
	if (QueueWait{}).Done(QueueCounts{Active: 1}) || !(QueueWait{}).Done(QueueCounts{}) {
		t.Error("drain: done only when nothing is active")
	}
	if !(QueueWait{Idle: true}).Done(QueueCounts{Active: 2, Queued: 2}) || (QueueWait{Idle: true}).Done(QueueCounts{Running: 1}) {
		t.Error("idle: done when nothing runs and no alloc is pending")
	}
	qi := &QueueInfo{Counts: map[string]QueueCounts{"a": {Active: 1, Running: 1}, "b": {Active: 2, Queued: 2}}}
	if got := qi.Total(nil); got.Active != 3 || got.Running != 1 || got.Queued != 2 {
		t.Errorf("Total(all) = %+v", got)
	}
	if got := qi.Total([]string{"b"}); got.Active != 2 || got.Running != 0 {
		t.Errorf("Total(b) = %+v", got)
	}
}

func TestReserveParams(t *testing.T) {
	req, err := ReserveParams{Op: "create", Count: 2, TimeInf: true, Target: "123"}.Alloc()
	if err != nil || req.Op != reservation.OpNew || req.Count != 2 || req.Target == nil {
		t.Errorf("create: %+v, %v", req, err)
	}
	for _, p := range []ReserveParams{{Op: "bogus"}, {Op: "create", Count: -1}, {Op: "create", Nodelist: "a[", Count: 0}, {Op: "create", Nodelist: "a1", Count: 1}, {Op: "create", Target: "x"}} {
		var re *reservation.Error
		if _, err := p.Alloc(); !errors.As(err, &re) || re.Status != reservation.BadParam {
			t.Errorf("%+v: %v, want PMIX_ERR_BAD_PARAM", p, err)
		}
	}
}

// A progress line built from encoded bytes is the line encoding/json
// writes for the same Reply: byte for byte where the value needs no HTML
// escape (encoding/json escapes <, > and & even inside a RawMessage), and
// decoding to the same Reply always.
func TestAppendProgressLine(t *testing.T) {
	code := 3
	for _, v := range []any{
		JobSummary{ID: 12345, Name: "sleep", State: 64, TSubmit: 1764196464.25},
		JobSummary{ID: 1, Name: "a \"quoted\" name\twith\nnewlines and é", Command: []string{"sh", "-c", "echo hi"}, ReturnCode: &code,
			Annotations: map[string]any{"sched": map[string]any{"resource_summary": "rank0/core[0-1]"}}},
		JobSummary{ID: 2, Name: "x<y && y>z"},
		map[string]any{},
		[]int{1, 2, 3},
		"a string",
	} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendProgressLine([]byte("before\n"), raw)
		if !strings.HasPrefix(string(got), "before\n") {
			t.Fatalf("AppendProgressLine did not append: %q", got)
		}
		got = got[len("before\n"):]
		var buf strings.Builder
		if err := json.NewEncoder(&buf).Encode(Reply{Progress: raw}); err != nil {
			t.Fatal(err)
		}
		want := buf.String()
		if !strings.ContainsAny(string(raw), "<>&") && string(got) != want {
			t.Errorf("line %q, encoding/json writes %q", got, want)
		}
		if strings.Count(string(got), "\n") != 1 || got[len(got)-1] != '\n' {
			t.Errorf("line %q is not one line", got)
		}
		var a, b Reply
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("line %q: %v", got, err)
		}
		if err := json.Unmarshal([]byte(want), &b); err != nil {
			t.Fatal(err)
		}
		var av, bv any
		json.Unmarshal(a.Progress, &av)
		json.Unmarshal(b.Progress, &bv)
		if fmt.Sprint(av) != fmt.Sprint(bv) || a.Final != b.Final || a.Event != nil {
			t.Errorf("line %q decodes to %+v, encoding/json's to %+v", got, a, b)
		}
	}
}

// A purge request that leaves a limit out has no such limit: it never
// reads as an age limit of zero, which would purge every inactive job.
func TestPurgeParamsDefaults(t *testing.T) {
	for _, tc := range []struct {
		in       string
		age      float64
		num      int
		force    bool
		wantsErr bool
	}{
		{`{"force":true}`, -1, -1, true, false},
		{`{"age_limit":0,"force":true}`, 0, -1, true, false},
		{`{"num_limit":5}`, -1, 5, false, false},
		{`{"num_limit":"x"}`, 0, 0, false, true},
	} {
		var p PurgeParams
		err := json.Unmarshal([]byte(tc.in), &p)
		if (err != nil) != tc.wantsErr {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if err == nil && (p.AgeLimit != tc.age || p.NumLimit != tc.num || p.Force != tc.force) {
			t.Errorf("%s: %+v", tc.in, p)
		}
	}
}
