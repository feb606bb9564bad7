package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// agent.output reads a job folder's file within the request's bounds, and
// refuses what is out of them by name.
func TestOutput(t *testing.T) {
	useScripted(t)
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	me := uint32(os.Geteuid())
	content := bytes.Repeat([]byte("0123456789"), 200_000) // 2 MB: past one read
	writeOutput(t, state, 7, "stdout", content)
	writeOutput(t, state, 7, "stderr", []byte("oops\n"))
	for _, tc := range []struct {
		name     string
		req      agentproto.OutputRequest
		data     []byte
		errnum   int
		errMatch string
	}{
		{"from the start, default max", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "stdout"}, content[:agentproto.MaxOutputRead], 0, ""},
		{"a small read", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "stdout", Offset: 5, Max: 7}, content[5:12], 0, ""},
		{"the tail", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "stdout", Offset: int64(len(content) - 3)}, content[len(content)-3:], 0, ""},
		{"past the end", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "stdout", Offset: int64(len(content) + 10)}, []byte{}, 0, ""},
		{"stderr", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "stderr"}, []byte("oops\n"), 0, ""},
		{"no file yet", agentproto.OutputRequest{ID: 8, UserID: me, Stream: "stdout"}, []byte{}, 0, ""},
		{"another file of the folder", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "../7/stdout"}, nil, wire.EPROTO, "neither stdout nor stderr"},
		{"a negative offset", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "stdout", Offset: -1}, nil, wire.EPROTO, "negative"},
		{"too much at once", agentproto.OutputRequest{ID: 7, UserID: me, Stream: "stdout", Max: agentproto.MaxOutputRead + 1}, nil, wire.EPROTO, "not within"},
		{"a file the job's user does not own", agentproto.OutputRequest{ID: 7, UserID: me + 4242, Stream: "stdout"}, nil, errPerm, "not to the job's user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := p.call(agentproto.TopicOutput, tc.req)
			checkOutput(t, m, tc.data, tc.errnum, tc.errMatch)
		})
	}
	// Without its required keys, a request is refused by name.
	m := p.call(agentproto.TopicOutput, map[string]any{"id": 7, "stream": "stdout", "offset": 0})
	checkOutput(t, m, nil, wire.EPROTO, `no "userid"`)
}

// A guest may read its own jobs' output, a part at a time, and no other
// user's.
func TestOutputGuest(t *testing.T) {
	useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	me := uint32(os.Geteuid())
	p.start(1, false, makeJobspec(t, "sleep", "9"), makeR(t)) // a job of this test's uid
	// The start is sent, not waited for: the agent holds the job once it
	// has answered start (a.jobs[1] below).
	p.wait("job 1's start", 10*time.Second, func() bool { return slices.Contains(p.streamLocked(1), "start") })
	content := bytes.Repeat([]byte("x"), 100<<10)
	writeOutput(t, state, 1, "stdout", content)
	writeOutput(t, state, 2, "stdout", []byte("someone else's\n"))
	a.mu.Lock()
	a.uid = me + 4242 // the test is now a guest of the agent
	a.mu.Unlock()
	g := dial(t, state, "b1")
	m := g.call(agentproto.TopicOutput, agentproto.OutputRequest{ID: 1, UserID: me, Stream: "stdout"})
	checkOutput(t, m, content[:agentproto.MaxGuestOutputRead], 0, "")
	// Another user's job: the guest names that user, or its own uid for
	// a job the agent holds as the other's.
	m = g.call(agentproto.TopicOutput, agentproto.OutputRequest{ID: 2, UserID: me + 1, Stream: "stdout"})
	checkOutput(t, m, nil, errPerm, "is not yours")
	a.mu.Lock()
	j := a.jobs[1]
	if j != nil {
		j.userid = me + 1
	}
	a.mu.Unlock()
	if j == nil {
		t.Fatal("the agent holds no job 1 after its start")
	}
	m = g.call(agentproto.TopicOutput, agentproto.OutputRequest{ID: 1, UserID: me, Stream: "stdout"})
	checkOutput(t, m, nil, errPerm, "is not yours")
}

func writeOutput(t *testing.T, state string, id fluid.ID, name string, b []byte) {
	t.Helper()
	dir := jobDir(filepath.Join(state, "jobs"), id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func checkOutput(t *testing.T, m wire.Message, data []byte, errnum int, errMatch string) {
	t.Helper()
	if errnum != 0 {
		if m.Errnum != errnum || !strings.Contains(m.Errstr, errMatch) {
			t.Errorf("answer = %d %q, want %d and %q", m.Errnum, m.Errstr, errnum, errMatch)
		}
		return
	}
	var out agentproto.Output
	if err := wire.Decode(m, &out, "data", "size"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Data, data) {
		t.Errorf("data = %d bytes %.20q, want %d bytes %.20q", len(out.Data), out.Data, len(data), data)
	}
}
