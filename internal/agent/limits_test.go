package agent

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
)

// Issue 24: any local user could hold the agent's descriptors. A
// connection is let in from the owner and root, and from another uid only
// while it owns a job the agent holds, within its caps.
func TestAdmit(t *testing.T) {
	useScripted(t)
	a := startAgent(t, stateDir(t), "b1")
	a.mu.Lock()
	a.uid = 500 // the instance owner, not root
	a.jobs[7] = &job{id: 7, userid: 1000}
	a.jobs[8] = &job{id: 8, userid: 1001, end: &endRecord{}} // ended, not acknowledged
	a.mu.Unlock()
	caps := a.lim.Caps()
	caps.Conns, caps.GuestConns, caps.PerGuest = 6, 3, 2
	a.lim.SetCaps(caps)
	steps := []struct {
		uid   uint32
		guest bool
		why   string // "" let in
	}{
		{500, false, ""},
		{0, false, ""},
		{1000, true, ""},
		{1000, true, ""},
		{1000, true, "too many connections from uid 1000 (2 open)"},
		{1001, true, ""},
		{1002, true, "permission denied: uid 1002 has no job on this exec agent"},
		{1001, true, "too many connections from guests (3 open)"},
		{500, false, ""},
		{0, false, "too many connections (6 open)"},
	}
	for i, s := range steps {
		guest, why := a.admit(s.uid)
		if guest != s.guest || !strings.Contains(why, s.why) || (why == "") != (s.why == "") {
			t.Errorf("step %d, uid %d: guest %v, %q; want %v, %q", i, s.uid, guest, why, s.guest, s.why)
		}
	}
}

// Issue 24: eight connections sending 60 MB with no newline took the
// agent to 1 GB for good. A line past the caller's bound ends its
// connection and gives back what it took; a long line within it is
// served, and its memory given back too.
func TestLongLines(t *testing.T) {
	useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")

	// A hello padded to 5 MiB (JSON allows the spaces) is answered.
	pad := strings.Repeat(" ", 5<<20)
	c, err := net.Dial("unix", SocketPath(filepath.Join(state, agentproto.Dir), "b1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, `{"topic":"agent.hello","type":"request",`+pad+`"payload":{"build":"b1"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line := make([]byte, 4096)
	n, err := c.Read(line)
	if err != nil || !bytes.Contains(line[:n], []byte(`"topic":"agent.hello","type":"response"`)) {
		t.Fatalf("answer to a 5 MiB hello: %q, %v", line[:n], err)
	}
	p := dial(t, state, "b1")
	p.hello() // takes the agent over from the padded connection

	// Past the bound (64 MiB), with no newline: the connection is closed.
	c2, err := net.Dial("unix", SocketPath(filepath.Join(state, agentproto.Dir), "b1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	sent := 0
	for ; sent < 80<<20; sent += len(chunk) {
		c2.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := c2.Write(chunk); err != nil {
			break
		}
	}
	if sent >= 80<<20 {
		t.Errorf("the agent read %d bytes with no newline", sent)
	}
	// The padded and the long connections are counted out, their
	// budget given back; p's is still served.
	deadline := time.Now().Add(5 * time.Second)
	for {
		all, guests := a.lim.Buffered()
		open, _ := a.lim.Open(0)
		if all == 0 && guests == 0 && open == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("budget not given back (%d, %d by guests) or connections not counted out (%d open)", all, guests, open)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h := p.hello(); h.Build != "b1" {
		t.Errorf("hello after the long line: %+v", h)
	}
}

// A caller the agent does not let in hears why, as an error of
// agent.cancel, whatever it was going to ask: Call returns it as the
// answer, not as a connection closed.
func TestCallRefused(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "a.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The refusal is written and the connection closed at accept, before
	// or after the caller sends: both orders are tried.
	for _, closedFirst := range []bool{true, false} {
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !closedFirst {
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				c.Read(make([]byte, 1))
			}
			c.Write(errorLine(agentproto.TopicCancel, errPerm, "permission denied: uid 1000 has no job on this exec agent"))
			c.Close()
		}()
		m, err := Call(sock, agentproto.TopicStop, agentproto.Stop{}, 5*time.Second)
		if err != nil {
			t.Fatalf("closed first %v: %v", closedFirst, err)
		}
		if err := m.Err(); err == nil || !strings.Contains(err.Error(), "permission denied: uid 1000 has no job on this exec agent") {
			t.Errorf("closed first %v: answer = %+v, %v", closedFirst, m, err)
		}
		<-closed
	}
}

// guestConn serves one end of a fresh connection as a guest's (uid 1000,
// who owns job 7), as accept would, and returns the other end.
func guestConn(t *testing.T, a *running) *net.UnixConn {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "g.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	if guest, why := a.admit(1000); !guest || why != "" {
		t.Fatalf("uid 1000 not let in as a guest: %v, %q", guest, why)
	}
	a.serve(s, caller{uid: 1000}, true)
	return c
}

// Issue 24: what a guest let in may do to its connection. It may cancel
// its job and nothing else; a line past 4 KiB, an idle connection, or
// answers it does not read end the connection, which is counted out.
func TestGuestConnection(t *testing.T) {
	useScripted(t)
	guestRequestTimeout = 300 * time.Millisecond
	t.Cleanup(func() { guestRequestTimeout = 30 * time.Second })
	a := startAgent(t, stateDir(t), "b1")
	a.mu.Lock()
	a.jobs[7] = &job{id: 7, userid: 1000, end: &endRecord{}}
	a.jobs[8] = &job{id: 8, userid: 1001, end: &endRecord{}}
	a.mu.Unlock()
	cancel := func(id int) string {
		return `{"topic":"agent.cancel","type":"request","payload":{"id":` + strconv.Itoa(id) + `}}` + "\n"
	}
	cases := []struct {
		name string
		send string
		read bool     // read the answers
		want []string // in the answers, in order
	}{
		{"its own job", cancel(7), true, []string{`"topic":"agent.cancel","type":"response"}`}},
		{"another's job", cancel(8), true, []string{"permission denied: job ƒ9 is not yours"}},
		{"hello", `{"topic":"agent.hello","type":"request","payload":{"build":"b1"}}` + "\n", true, []string{"permission denied: only uid"}},
		{"a long line", strings.Repeat("x", 5<<10) + "\n", true, []string{"request longer than 4 KiB (the limit for guests)"}},
		{"idle", "", true, []string{"no request within 300ms"}},
		{"answers not read", strings.Repeat(cancel(7), 40000), false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := guestConn(t, a)
			if !c.read {
				// The agent hangs up before it has read it all.
				conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
				if n, err := io.WriteString(conn, c.send); err == nil {
					t.Fatalf("the agent read all %d bytes of a guest that reads no answer", n)
				}
			} else {
				go io.WriteString(conn, c.send) // may fail once the agent hangs up
			}
			if c.read {
				conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				got, _ := io.ReadAll(io.LimitReader(conn, 1<<20))
				rest := string(got)
				for _, w := range c.want {
					i := strings.Index(rest, w)
					if i < 0 {
						t.Fatalf("answers %q lack %q", got, w)
					}
					rest = rest[i+len(w):]
				}
			}
			if c.name != "its own job" && c.name != "another's job" && c.name != "hello" {
				deadline := time.Now().Add(10 * time.Second)
				for {
					if _, n := a.lim.Open(1000); n == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the guest's connection is still open")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			conn.Close()
		})
	}
}
