package sshtest

import (
	"strings"
	"testing"
)

// Each host answers ssh with its own name, through the client config
// Start wrote, and Stop leaves nothing in its namespaces.
func TestHostsAnswerWithTheirNames(t *testing.T) {
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	h, err := Start(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	h.Log = t.Logf
	defer h.Stop()
	for _, tc := range []struct{ host, want string }{{"host1", "host1"}, {"host2", "host2"}, {"host3", "host3"}} {
		out, err := h.SSH(tc.host, "hostname").CombinedOutput()
		if err != nil {
			t.Fatalf("ssh %s hostname: %v: %s", tc.host, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("ssh %s hostname printed %q, want %q", tc.host, got, tc.want)
		}
	}
	// A session that leaves a process behind: Stop ends it too.
	if out, err := h.SSH("host2", "setsid sleep 300 </dev/null >/dev/null 2>&1 &").CombinedOutput(); err != nil {
		t.Fatalf("ssh host2 sleep: %v: %s", err, out)
	}
	if len(h.left()) < 4 {
		t.Fatalf("processes in the hosts' namespaces: %v, want 3 sshd and a sleep at least", h.left())
	}
	h.Stop()
	if left := h.left(); len(left) > 0 {
		t.Errorf("after Stop, processes left: %v", left)
	}
}

func TestStartRefusesBadCounts(t *testing.T) {
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	for _, n := range []int{0, -1, 251} {
		if _, err := Start(t.TempDir(), n); err == nil {
			t.Errorf("Start(%d) made hosts", n)
		}
	}
}
