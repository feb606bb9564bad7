package runner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	fjob "github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// SetExpiration moves a running job's time limit (fluxq update
// duration=): a job given an hour and lowered to 300ms is timed out then;
// one given 300ms and raised outlives it; and the record returned, which
// the agent journals, holds the new time. A job that has ended is left
// alone.
func TestSetExpiration(t *testing.T) {
	h := newHarness(t, "auto")
	h.t = t
	now := time.Now()
	lowered := withTimes(t, spec(t, 500, jobspec.Options{Command: []string{"sleep", "30"}}, 1, "0"), now, now.Add(time.Hour))
	raised := withTimes(t, spec(t, 501, jobspec.Options{Command: []string{"sleep", "1"}}, 1, "1"), now, now.Add(300*time.Millisecond))
	h.launch(lowered)
	h.launch(raised)
	at := now.Add(300 * time.Millisecond)
	rec, ok := h.r.SetExpiration(500, at)
	if !ok || !rec.Expiration.Equal(at) {
		t.Fatalf("SetExpiration(500) = %v, %v", rec.Expiration, ok)
	}
	if _, ok := h.r.SetExpiration(501, now.Add(time.Hour)); !ok {
		t.Fatal("SetExpiration(501) refused")
	}
	timeout := summary{Exc: "timeout: resource allocation expired"}
	if diff := cmp.Diff([]summary{timeout, {Status: fjob.WaitStatusSignaled(14), Known: true}}, summarize(h.wait(500))); diff != "" {
		t.Errorf("lowered job: events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]summary{{Status: 0, Known: true}}, summarize(h.wait(501))); diff != "" {
		t.Errorf("raised job: events (-want +got):\n%s", diff)
	}
	if _, ok := h.r.SetExpiration(501, now.Add(2*time.Hour)); ok {
		t.Error("SetExpiration of an ended job was taken")
	}
	if _, ok := h.r.SetExpiration(999, now); ok {
		t.Error("SetExpiration of an unknown job was taken")
	}
}
