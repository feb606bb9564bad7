package sshtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
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
	held := holdNamespaces(t, h)
	h.Stop()
	if left := held.left(); len(left) > 0 {
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

// Drop drops the connection carrying a bridge (a session whose argv holds
// "agent --attach"): the client's ssh ends, the host stays up, and the
// process the session ran is no longer served. Kill, then Restart, brings
// a host back on its address with its name and host key.
func TestDropAndRestart(t *testing.T) {
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	h, err := Start(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	h.Log = t.Logf
	defer h.Stop()
	if _, err := h.Drop("host1"); err == nil {
		t.Error("Drop of a host without a bridge: no error")
	}
	bridge := h.SSH("host1", "sh -c 'sleep 300' sh agent --attach")
	if err := bridge.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bridge.Wait() }()
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) == 0; time.Sleep(20 * time.Millisecond) {
		if pids, err = h.Bridges("host1"); err != nil || time.Now().After(deadline) {
			t.Fatalf("no bridge on host1: %v %v", pids, err)
		}
	}
	dropped, err := h.Drop("host1")
	if err != nil || len(dropped) != 1 || dropped[0] != pids[0] {
		t.Fatalf("Drop = %v, %v; want [%d]", dropped, err, pids[0])
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's ssh did not end when its connection was dropped")
	}
	if left, _ := h.Bridges("host1"); len(left) != 0 {
		t.Errorf("bridges served after Drop: %v", left)
	}
	if out, err := h.SSH("host1", "hostname").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "host1" {
		t.Errorf("host1 after Drop: %q, %v", out, err)
	}

	if err := h.Restart("host2"); err == nil {
		t.Error("Restart of a host that runs: no error")
	}
	if err := h.Kill("host2"); err != nil {
		t.Fatal(err)
	}
	old := h.Hosts[1].ns
	if err := h.Restart("host2"); err != nil {
		t.Fatal(err)
	}
	// The killed host's namespace is held until Stop, so that its number
	// names no other test's host while Stop may still sweep it.
	if len(h.oldf) != 1 || h.old[0] != old || h.Hosts[1].ns == old {
		t.Fatalf("after Restart: old %v, host2's namespace %s (was %s)", h.old, h.Hosts[1].ns, old)
	}
	if got, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", h.oldf[0].Fd())); err != nil || got != old {
		t.Errorf("the killed host's namespace held: %q, %v; want %s", got, err, old)
	}
	if out, err := h.SSH("host2", "hostname").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "host2" {
		t.Errorf("host2 after Restart: %q, %v", out, err)
	}
	held := holdNamespaces(t, h)
	h.Stop()
	if left := held.left(); len(left) > 0 {
		t.Errorf("after Stop, processes left: %v", left)
	}
	// Stopped, it names no namespace any more: one given again to
	// another test's host is not swept by a second Stop.
	if h.old != nil || h.Hosts[0].ns != "" || h.Hosts[1].ns != "" || h.Hosts[0].nsf != nil {
		t.Errorf("after Stop: old %v, namespaces %q %q", h.old, h.Hosts[0].ns, h.Hosts[1].ns)
	}
}

// heldNamespaces are a test's own hold on hosts' namespaces, so that what
// is left in them after Stop (which forgets them) can still be listed.
type heldNamespaces struct{ ns []string }

// holdNamespaces holds the namespaces of h's hosts, the killed ones'
// too, until the test ends.
func holdNamespaces(t *testing.T, h *Hosts) *heldNamespaces {
	held := &heldNamespaces{}
	files := append([]*os.File{}, h.oldf...)
	for _, host := range h.Hosts {
		files = append(files, host.nsf)
	}
	for _, f := range files {
		if f == nil {
			continue
		}
		g, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		ns, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", g.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		held.ns = append(held.ns, ns)
	}
	return held
}

// left lists the live processes in the held namespaces.
func (held *heldNamespaces) left() []int {
	var pids []int
	for _, ns := range held.ns {
		pids = append(pids, inNamespace(ns)...)
	}
	return pids
}
