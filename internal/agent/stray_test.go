package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/journal"
	"github.com/fluxq/fluxq/internal/runner"
)

// A job whose launch entry was lost or damaged when its agent died: the
// cgroup is the truth for what runs. Where the runner finds the job's
// cgroup still holding processes (a stray), the next agent holds it as
// running, so that fluxsched keeps its resources and takes it back, and
// it ends with an exception saying its record was lost once they are
// gone; never launched again. Without one, it ends at once (an
// unreadable record) or is unknown (a lost one).
func TestStrayHeld(t *testing.T) {
	js, r := makeJobspec(t, "sleep", "9"), makeR(t)
	// Each damage is given the journal and job 1's launch line in it.
	unreadable := func(b, line []byte) []byte {
		bad, _ := journal.Encode(journal.Entry{Op: journal.OpLaunch, ID: 1, Data: []byte(`[]`)})
		return bytes.Replace(b, line, bad, 1)
	}
	lost := func(b, line []byte) []byte { return bytes.Replace(b, line, nil, 1) }
	flipped := func(b, line []byte) []byte {
		line[len(line)/2] ^= 0x20
		return b
	}
	for _, tc := range []struct {
		name        string
		damage      func(b, line []byte) []byte
		stray       bool
		wantHeld    []fluid.ID // listed at hello, running or ended
		wantRunning []fluid.ID // of which running, at least
		wantNote    string     // of job 1's exception once taken back
	}{
		{"unreadable, stray", unreadable, true, []fluid.ID{1, 2}, []fluid.ID{1, 2}, noteStray},
		{"lost, stray", lost, true, []fluid.ID{1, 2}, []fluid.ID{1, 2}, noteStray},
		{"flipped, stray", flipped, true, []fluid.ID{1, 2}, []fluid.ID{1, 2}, noteStray},
		// (Its end may still be on its way to the journal at hello.)
		{"unreadable, empty cgroup", unreadable, false, []fluid.ID{1, 2}, []fluid.ID{2}, noteBadRecord},
		{"lost, empty cgroup", lost, false, []fluid.ID{2}, []fluid.ID{2}, NoteNoRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := useScripted(t)
			state := stateDir(t)
			a := startAgent(t, state, "b1")
			p := dial(t, state, "b1")
			p.hello()
			p.start(1, false, js, r)
			p.start(2, false, js, r)
			p.wait("starts", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 && len(p.streamLocked(2)) == 1 })
			a.Close()

			path := JournalPath(filepath.Join(state, agentproto.Dir), "b1")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			at := bytes.Index(b, []byte(`{"op":"launch","id":1,`))
			if at < 0 {
				t.Fatalf("job 1's launch not in the journal %q", b)
			}
			line := b[at : at+bytes.IndexByte(b[at:], '\n')+1]
			if err := os.WriteFile(path, tc.damage(b, line), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.stray {
				s.strays = []runner.Record{{ID: 1, Cgroup: []string{"/cg/slot.0"}, KillGrace: DefaultKillGrace, Recovered: true},
					{ID: 2, Cgroup: []string{"/cg/slot.1"}, Recovered: true}} // 2 is held: not a stray
			}
			s.adopted = nil

			startAgent(t, state, "b1")
			wantAdopted := []fluid.ID{2}
			if tc.stray {
				wantAdopted = []fluid.ID{1, 2}
			}
			got := slices.Clone(s.adopted)
			slices.Sort(got)
			if !slices.Equal(got, wantAdopted) {
				t.Errorf("adopted %v, want %v", got, wantAdopted)
			}
			q := dial(t, state, "b1")
			h := q.hello()
			held := slices.Sorted(slices.Values(append(slices.Clone(h.Running), h.Ended...)))
			if !slices.Equal(held, tc.wantHeld) {
				t.Errorf("hello: running %v ended %v, want %v held", h.Running, h.Ended, tc.wantHeld)
			}
			for _, id := range tc.wantRunning {
				if !slices.Contains(h.Running, id) {
					t.Errorf("hello: running %v, want %v among them", h.Running, id)
				}
			}
			q.start(1, true, js, r)
			if tc.stray {
				// Its limit is the one its reattach names.
				var sp runner.Spec
				for deadline := time.Now().Add(5 * time.Second); sp.ID != 1 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					s.mu.Lock()
					sp = s.limits[1]
					s.mu.Unlock()
				}
				if !bytes.Equal(sp.R, r) || !bytes.Equal(sp.Jobspec, js) {
					t.Errorf("job 1's limit from %+v, want its reattach's jobspec and R", sp)
				}
				// Held until its processes are gone.
				time.Sleep(50 * time.Millisecond)
				if n := len(q.streamLocked(1)); n != 0 {
					t.Errorf("job 1 answered %d responses while its processes run", n)
				}
				s.end(1, runner.End{Known: false})
			}
			rs := q.released(1, 5*time.Second)
			if diff := cmp.Diff([]string{"exception", "release"}, types(rs)); diff != "" {
				t.Errorf("job 1 (-want +got):\n%s", diff)
			}
			if e := exceptions(t, rs); len(e) != 1 || e[0].Type != "exec" || e[0].Note != tc.wantNote {
				t.Errorf("job 1's exceptions = %+v, want %q", e, tc.wantNote)
			}
			if s.launched(1) != 1 {
				t.Errorf("job 1 launched %d times", s.launched(1))
			}
		})
	}
}
