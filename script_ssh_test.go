package fluxq_test

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fluxq/fluxq/internal/sshtest"
)

// cmdSSHHosts makes N hosts reached over real OpenSSH (internal/sshtest)
// under $WORK/ssh, stopped with everything their sessions left when the
// script ends, and sets:
//
//	SSH_CONFIG   the client config: ssh -F $SSH_CONFIG host2 hostname
//	SSH_HOSTS    the hosts' names, host1 to hostN, space-separated
//	SSH_NODES    the same as a hostlist: host[1-N]
//	HOSTi_ADDR   host i's address (127.0.0.(i+1)), HOSTi_STATE its agent's state directory
//
// A script that uses it first skips where hosts cannot be made (not
// root, no sshd; CI installs sshd, so nothing skips there):
//
//	[!sshd] skip 'needs root and sshd (internal/sshtest)'
//	sshhosts 4
func cmdSSHHosts(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sshhosts N")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("sshhosts: bad count %q", args[0])
	}
	if why := sshtest.Missing(); why != "" {
		ts.Fatalf("%s (begin the script with [!sshd] skip)", why)
	}
	h, err := sshtest.Start(filepath.Join(ts.Getenv("WORK"), "ssh"), n)
	if err != nil {
		ts.Fatalf("sshhosts: %v", err)
	}
	h.Log = ts.Logf
	ts.Defer(h.Stop)
	ts.Setenv("SSH_CONFIG", h.Config)
	ts.Setenv("SSH_HOSTS", strings.Join(h.Names(), " "))
	ts.Setenv("SSH_NODES", "host[1-"+strconv.Itoa(n)+"]")
	if n == 1 {
		ts.Setenv("SSH_NODES", "host1")
	}
	for i, host := range h.Hosts {
		p := "HOST" + strconv.Itoa(i+1)
		ts.Setenv(p+"_ADDR", host.Address)
		ts.Setenv(p+"_STATE", host.StateDir)
	}
}
