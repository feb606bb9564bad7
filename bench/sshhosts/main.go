// Command sshhosts makes N hosts reached over real OpenSSH on this machine
// (internal/sshtest: an sshd on 127.0.0.(i+1) each, in a UTS namespace of
// its own) for a bench script, and holds them until it is told to stop:
//
//	sshhosts DIR N
//
// Once every host answers it prints, on standard output, one shell
// assignment a line and then the line "ready":
//
//	SSH_CONFIG=DIR/ssh_config   the client config (ssh -F)
//	SSH_HOSTS='host1 host2 …'   the hosts' names
//	HOSTi_ADDR=127.0.0.(i+1)    host i's address
//	HOSTi_STATE=DIR/hosti/state the state directory for host i's agent
//
// It stops every process of the hosts by PID (each sshd, then what its
// sessions left in its namespace: bridges, agents, tasks; sshtest.Stop)
// on SIGTERM, SIGINT or SIGHUP, or when its standard input ends (the
// script that holds it died), and then exits. bench/hosts.sh runs it.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/fluxq/fluxq/internal/sshtest"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sshhosts DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "sshhosts: the count of hosts must be a whole number of at least 1, not %q\n", os.Args[2])
		os.Exit(2)
	}
	if why := sshtest.Missing(); why != "" {
		fmt.Fprintln(os.Stderr, why)
		os.Exit(1)
	}
	// Caught before the hosts start, so that a signal that comes while
	// they do still stops them (Start stops what it started on error).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	h, err := sshtest.Start(os.Args[1], n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sshhosts:", err)
		os.Exit(1)
	}
	h.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	// Printing fails only if the reader is gone: stop at once then.
	if err := print(h); err != nil {
		h.Stop()
		fmt.Fprintln(os.Stderr, "sshhosts:", err)
		os.Exit(1)
	}
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-sig:
	case <-eof:
	}
	h.Stop()
}

func print(h *sshtest.Hosts) error {
	var b strings.Builder
	fmt.Fprintf(&b, "SSH_CONFIG=%s\n", quote(h.Config))
	fmt.Fprintf(&b, "SSH_HOSTS=%s\n", quote(strings.Join(h.Names(), " ")))
	for i, host := range h.Hosts {
		fmt.Fprintf(&b, "HOST%d_ADDR=%s\n", i+1, quote(host.Address))
		fmt.Fprintf(&b, "HOST%d_STATE=%s\n", i+1, quote(host.StateDir))
	}
	b.WriteString("ready\n")
	_, err := io.WriteString(os.Stdout, b.String())
	return err
}

// quote makes s one word for a POSIX shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
