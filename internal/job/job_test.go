package job

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/eventlog"
)

// ev builds an event; ctx alternates keys and values.
func ev(ts float64, name string, ctx ...any) eventlog.Event {
	e := eventlog.Event{Timestamp: ts, Name: name}
	if len(ctx) > 0 {
		e.Context = map[string]any{}
		for i := 0; i+1 < len(ctx); i += 2 {
			e.Context[ctx[i].(string)] = ctx[i+1]
		}
	}
	return e
}

func submitted() []eventlog.Event {
	return []eventlog.Event{
		ev(1, "submit", "urgency", 16, "userid", 1000, "flags", 0, "version", 1),
		ev(2, "validate"),
		ev(3, "depend"),
		ev(4, "priority", "priority", 16),
	}
}

func allocated() []eventlog.Event {
	return append(submitted(), ev(5, "alloc", "annotations", map[string]any{"sched": map[string]any{"resource_summary": "rank0/core0"}}))
}

func cat(parts ...[]eventlog.Event) []eventlog.Event {
	var out []eventlog.Event
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// noRC stands for no returncode in TestReplay's table: every small
// negative number is some signal's.
const noRC = -1000

func TestReplay(t *testing.T) {
	completed := cat(allocated(), []eventlog.Event{
		ev(6, "start"), ev(7, "finish", "status", 0), ev(8, "release", "ranks", "all", "final", true), ev(9, "free"), ev(10, "clean"),
	})
	tests := []struct {
		name       string
		events     []eventlog.Event
		wantState  State
		wantResult Result
		wantRC     int // noRC: none
	}{
		{"submitted only", submitted()[:1], New, 0, noRC},
		{"validated", submitted()[:2], Depend, 0, noRC},
		{"depend", submitted()[:3], Priority, 0, noRC},
		{"priority", submitted(), Sched, 0, noRC},
		{"alloc", allocated(), Run, 0, noRC},
		// The acceptance eventlog of a completed job.
		{"completed", completed, Inactive, Completed, 0},
		{"failed with 1", cat(allocated(), []eventlog.Event{
			ev(6, "start"), ev(7, "finish", "status", WaitStatusExited(1)), ev(8, "release", "ranks", "all", "final", true), ev(9, "free"), ev(10, "clean"),
		}), Inactive, Failed, 1},
		{"canceled while pending", cat(submitted(), []eventlog.Event{
			ev(5, "exception", "type", "cancel", "severity", 0, "note", "", "userid", 1000), ev(6, "clean"),
		}), Inactive, Canceled, -128},
		{"timeout while running", cat(allocated(), []eventlog.Event{
			ev(6, "start"), ev(7, "exception", "type", "timeout", "severity", 0, "note", "resource allocation expired"),
			ev(8, "finish", "status", WaitStatusSignaled(14)), ev(9, "release", "ranks", "all", "final", true), ev(10, "free"), ev(11, "clean"),
		}), Inactive, Timeout, 142},
		{"denied", cat(submitted(), []eventlog.Event{
			ev(5, "exception", "type", "alloc", "severity", 0, "note", "unsatisfiable request"), ev(6, "clean"),
		}), Inactive, Failed, 1},
		{"nonfatal exception changes nothing", cat(allocated(), []eventlog.Event{
			ev(6, "exception", "type", "test", "severity", 1, "note", "just so"),
		}), Run, 0, noRC},
		{"unknown events are allowed", cat(submitted(), []eventlog.Event{ev(5, "flux-restart"), ev(6, "debug.x")}), Sched, 0, noRC},
		{"held then released", cat(submitted()[:3], []eventlog.Event{
			ev(4, "priority", "priority", 0), ev(5, "urgency", "urgency", 16, "userid", 1000), ev(6, "priority", "priority", 16),
		}), Sched, 0, noRC},
		{"dependencies", cat(submitted()[:2], []eventlog.Event{
			ev(3, "dependency-add", "description", "afterok:1"), ev(4, "dependency-remove", "description", "afterok:1"), ev(5, "depend"),
		}), Priority, 0, noRC},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Replay(42, tc.events)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != tc.wantState || j.Result != tc.wantResult {
				t.Errorf("state, result = %s, %q; want %s, %q", j.State, j.Result, tc.wantState, tc.wantResult)
			}
			rc, ok := j.ReturnCode()
			if !ok {
				rc = noRC
			}
			if rc != tc.wantRC {
				t.Errorf("ReturnCode = %d, want %d", rc, tc.wantRC)
			}
		})
	}
}

func TestReplayTimes(t *testing.T) {
	j, err := Replay(1, cat(allocated(), []eventlog.Event{ev(6, "start"), ev(7, "finish", "status", 0), ev(8, "free"), ev(9, "clean")}))
	if err != nil {
		t.Fatal(err)
	}
	got := []float64{j.TSubmit, j.TDepend, j.TPriority, j.TSched, j.TRun, j.TCleanup, j.TInactive}
	if diff := cmp.Diff([]float64{1, 2, 3, 4, 5, 7, 9}, got); diff != "" {
		t.Errorf("state times (-want +got):\n%s", diff)
	}
	if j.UserID != 1000 || j.Urgency != 16 || j.Priority != 16 {
		t.Errorf("userid, urgency, priority = %d, %d, %d", j.UserID, j.Urgency, j.Priority)
	}
}

func TestApplyRejects(t *testing.T) {
	tests := []struct {
		name   string
		events []eventlog.Event
		want   string
	}{
		{"no submit first", []eventlog.Event{ev(1, "validate")}, "the first event must be submit"},
		{"submit twice", cat(submitted()[:1], submitted()[:1]), "already submitted"},
		{"submit without userid", []eventlog.Event{ev(1, "submit", "urgency", 16, "flags", 0)}, `"userid" is required`},
		{"urgency out of range", []eventlog.Event{ev(1, "submit", "urgency", 32, "userid", 1, "flags", 0)}, `"urgency" is out of range`},
		{"alloc before sched", cat(submitted()[:2], []eventlog.Event{ev(3, "alloc")}), "expected state SCHED, job is DEPEND"},
		{"start twice", cat(allocated(), []eventlog.Event{ev(6, "start"), ev(7, "start")}), "start in state RUN"},
		{"finish without start", cat(allocated(), []eventlog.Event{ev(6, "finish", "status", 0)}), "finish without a start"},
		{"free twice", cat(allocated(), []eventlog.Event{ev(6, "exception", "type", "cancel", "severity", 0, "note", ""), ev(7, "free"), ev(8, "free")}), "free of a job that holds no resources"},
		{"clean while allocated", cat(allocated(), []eventlog.Event{ev(6, "exception", "type", "cancel", "severity", 0, "note", ""), ev(7, "clean")}), "clean while resources are still allocated"},
		{"event after inactive", cat(submitted(), []eventlog.Event{ev(5, "exception", "type", "cancel", "severity", 0, "note", ""), ev(6, "clean"), ev(7, "memo", "a", 1)}), "job is inactive"},
		{"depend with outstanding", cat(submitted()[:2], []eventlog.Event{ev(3, "dependency-add", "description", "x"), ev(4, "depend")}), "1 dependencies outstanding"},
		{"remove unknown dependency", cat(submitted()[:2], []eventlog.Event{ev(3, "dependency-remove", "description", "x")}), `dependency "x" was never added`},
		{"bad severity", cat(submitted(), []eventlog.Event{ev(5, "exception", "type", "x", "severity", 8, "note", "")}), `"severity" is out of range`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Replay(7, tc.events)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Replay error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Replay(7, cat(submitted()[:1], []eventlog.Event{ev(2, "invalidate")})); !errors.Is(err, ErrInvalidated) {
		t.Errorf("invalidate: err = %v, want ErrInvalidated", err)
	}
}

func TestApplyLeavesJobUnchangedOnError(t *testing.T) {
	j, err := Replay(1, submitted())
	if err != nil {
		t.Fatal(err)
	}
	before := *j
	if err := j.Apply(ev(9, "start")); err == nil {
		t.Fatal("start in SCHED accepted")
	}
	if diff := cmp.Diff(before, *j); diff != "" {
		t.Errorf("job changed (-before +after):\n%s", diff)
	}
}

func TestMemo(t *testing.T) {
	j, err := Replay(1, cat(submitted(), []eventlog.Event{ev(5, "memo", "a", 1, "b", 2), ev(6, "memo", "a", nil, "c", 3)}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"b": 2, "c": 3}, j.Memo); diff != "" {
		t.Errorf("memo (-want +got):\n%s", diff)
	}
}

func TestStates(t *testing.T) {
	tests := []struct {
		in   string
		want State
		err  string
	}{
		{"sched", Sched, ""},
		{"pending,running", Pending | Running, ""},
		{"PENDING", Depend | Priority | Sched, ""},
		{"active", Active, ""},
		{"all", All, ""},
		{"inactive, run", Inactive | Run, ""},
		{"bogus", 0, `invalid state "bogus"`},
	}
	for _, tc := range tests {
		got, err := ParseStates(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseStates(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseStates(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if got := (Sched | Run).String(); got != "SCHED,RUN" {
		t.Errorf("mask String = %q", got)
	}
	abbr := ""
	for _, s := range []State{New, Depend, Priority, Sched, Run, Cleanup, Inactive} {
		abbr += s.Abbrev()
	}
	if abbr != "NDPSRCI" {
		t.Errorf("abbreviations = %q", abbr)
	}
}

func TestUrgencyAndPriority(t *testing.T) {
	tests := []struct {
		in       string
		urgency  int
		priority int64
		err      string
	}{
		{"hold", 0, 0, ""},
		{"default", 16, 16, ""},
		{"expedite", 31, 4294967295, ""},
		{"0", 0, 0, ""},
		{"17", 17, 17, ""},
		{"31", 31, 4294967295, ""},
		{"32", 0, 0, "urgency value is out of range"},
		{"-1", 0, 0, "urgency value is out of range"},
		{"x", 0, 0, `invalid urgency "x": want 0-31, hold, default or expedite`},
	}
	for _, tc := range tests {
		u, err := ParseUrgency(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseUrgency(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || u != tc.urgency || PriorityOf(u) != tc.priority {
			t.Errorf("ParseUrgency(%q) = %d (priority %d), %v", tc.in, u, PriorityOf(u), err)
		}
	}
}

func TestResults(t *testing.T) {
	for _, r := range []Result{Completed, Failed, Canceled, Timeout} {
		for _, s := range []string{r.String(), r.Abbrev(), strings.ToLower(r.Abbrev())} {
			got, err := ParseResult(s)
			if err != nil || got != r {
				t.Errorf("ParseResult(%q) = %v, %v; want %v", s, got, err, r)
			}
		}
	}
	if ExitCode(WaitStatusExited(3)) != 3 || ExitCode(WaitStatusSignaled(15)) != 143 || ExitCode(0) != 0 {
		t.Error("ExitCode")
	}
}
