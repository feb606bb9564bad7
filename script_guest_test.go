package fluxq_test

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fluxq/fluxq/internal/peercred"
)

// guestProbe is the testscripts' misbehaving client (guest_*.txtar): it
// does to fluxsched's socket, or an exec agent's, what no fluxq command
// would, as another user when asked (-as USER: it starts as root and
// drops to USER, so it can run in the background, which asuser cannot).
// A SOCKET that is a folder names the one socket in it (the agent's, in
// $FLUXQ_STATE_DIR/agent, whose name is the build's).
//
//	guestprobe flood [-as USER] [-keep] SOCKET N READYFILE
//	                                                 hold N connections that send nothing, until SIGINT
//	                                                 (N under the descriptor limit: run several for more);
//	                                                 -keep: when the server takes no more, hold those made
//	guestprobe oversize [-as USER] SOCKET CONNS BYTES  send BYTES with no newline on CONNS connections at once
//	guestprobe halfsend [-as USER] SOCKET READYFILE  send half a request and hold it until fluxsched hangs up
//	guestprobe pid SOCKET                            print the pid of the socket's server
//	guestprobe rss SOCKET|PID MAXMB WAIT             wait until the server's (or PID's) VmRSS is under MAXMB
//	guestprobe stop PIDFILE READYFILE MAX            SIGSTOP the pid; SIGCONT it on SIGINT, or after MAX
func guestProbe() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: guestprobe flood|oversize|halfsend|pid|rss ...")
		return 2
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ContinueOnError)
	as := fs.String("as", "", "run as this user")
	keep := fs.Bool("keep", false, "flood: hold the connections made when no more can be")
	if err := fs.Parse(os.Args[2:]); err != nil {
		return 2
	}
	args := fs.Args()
	var err error
	if len(args) > 0 && os.Args[1] != "stop" {
		if args[0], err = socketIn(args[0]); err != nil {
			fmt.Fprintln(os.Stderr, "guestprobe:", err)
			return 1
		}
	}
	switch os.Args[1] {
	case "flood":
		err = probeFlood(*as, *keep, args)
	case "oversize":
		err = probeOversize(*as, args)
	case "halfsend":
		err = probeHalfSend(*as, args)
	case "pid":
		var pid int
		if pid, err = serverPID(args[0]); err == nil {
			fmt.Println(pid)
		}
	case "rss":
		err = probeRSS(args)
	case "stop":
		err = probeStop(args)
	default:
		err = fmt.Errorf("unknown probe %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "guestprobe:", err)
		return 1
	}
	return 0
}

// socketIn is path, or the one socket in the folder path.
func socketIn(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return path, nil
	}
	socks, err := filepath.Glob(filepath.Join(path, "*.sock"))
	if err != nil {
		return "", err
	}
	if len(socks) != 1 {
		return "", fmt.Errorf("%d sockets in %s, want one", len(socks), path)
	}
	return socks[0], nil
}

// becomeUser drops root for name: groups, then gid, then uid.
func becomeUser(name string) error {
	if name == "" {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := syscall.Setgroups(nil); err != nil {
		return err
	}
	if err := syscall.Setgid(gid); err != nil {
		return err
	}
	return syscall.Setuid(uid)
}

// dialRetry connects, again while the listen backlog is full (EAGAIN).
func dialRetry(path string) (*net.UnixConn, error) {
	for i := 0; ; i++ {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, syscall.EAGAIN) || i > 10000 {
			return nil, err
		}
		time.Sleep(time.Millisecond)
	}
}

func probeFlood(as string, keep bool, args []string) error {
	if len(args) != 3 {
		return errors.New("usage: flood [-as USER] SOCKET N READYFILE")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	// Created now, as root, written once connected: the script waits
	// for it to be non-empty.
	ready, err := os.Create(args[2])
	if err != nil {
		return err
	}
	if err := becomeUser(as); err != nil {
		fmt.Fprintln(ready, err)
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	conns := make([]*net.UnixConn, 0, n)
	for len(conns) < n {
		c, err := dialRetry(args[0])
		if err != nil && keep {
			// The server is out of room: what it took is held, as
			// a flooder that gets what it can would.
			fmt.Fprintf(os.Stderr, "connection %d: %v; holding the others\n", len(conns)+1, err)
			break
		}
		if err != nil {
			// Said in the ready file too: the script stops waiting.
			err = fmt.Errorf("connection %d: %w", len(conns)+1, err)
			fmt.Fprintln(ready, err)
			return err
		}
		conns = append(conns, c)
	}
	fmt.Fprintf(ready, "%d\n", len(conns))
	ready.Close()
	<-stop
	for _, c := range conns {
		c.Close()
	}
	fmt.Printf("held %d connections\n", len(conns))
	return nil
}

func probeOversize(as string, args []string) error {
	if len(args) != 3 {
		return errors.New("usage: oversize [-as USER] SOCKET CONNS BYTES")
	}
	conns, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	size, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	if err := becomeUser(as); err != nil {
		return err
	}
	chunk := []byte(`{"method":"stats","params":"`)
	chunk = append(chunk, []byte(strings.Repeat("x", 1<<20-len(chunk)))...)
	filler := []byte(strings.Repeat("x", 1<<20))
	answers := make([]string, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialRetry(args[0])
			if err != nil {
				answers[i] = "dial: " + err.Error()
				return
			}
			defer c.Close()
			sent := 0
			for sent < size {
				b := filler
				if sent == 0 {
					b = chunk
				}
				n, err := c.Write(b[:min(len(b), size-sent)])
				sent += n
				if err != nil {
					break
				}
			}
			// Whatever fluxsched said before it hung up, or nothing.
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			switch {
			case line != "":
				answers[i] = "answer: " + strings.TrimSpace(line)
			case err != nil:
				answers[i] = fmt.Sprintf("no answer after %d bytes: %v", sent, err)
			}
		}()
	}
	wg.Wait()
	for _, a := range answers {
		fmt.Println(a)
	}
	return nil
}

func probeHalfSend(as string, args []string) error {
	if len(args) != 2 {
		return errors.New("usage: halfsend [-as USER] SOCKET READYFILE")
	}
	ready, err := os.Create(args[1])
	if err != nil {
		return err
	}
	if err := becomeUser(as); err != nil {
		return err
	}
	c, err := dialRetry(args[0])
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write([]byte(`{"method":"st`)); err != nil {
		return err
	}
	fmt.Fprintln(ready, "sent")
	ready.Close()
	// Hold until fluxsched hangs up (whatever it says first).
	start := time.Now()
	b := make([]byte, 4096)
	for {
		if _, err := c.Read(b); err != nil {
			fmt.Printf("fluxsched hung up after %.0fs\n", time.Since(start).Seconds())
			return nil
		}
	}
}

// serverPID is the pid of the process that listens on the socket (its
// peer credentials, seen from the client's end).
func serverPID(path string) (int, error) {
	c, err := dialRetry(path)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	cred, err := peercred.Of(c)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}

func probeRSS(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: rss SOCKET|PID MAXMB WAIT")
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil {
		if pid, err = serverPID(args[0]); err != nil {
			return err
		}
	}
	maxMB, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	wait, err := time.ParseDuration(args[2])
	if err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		kb, err := vmRSS(pid)
		if err != nil {
			return err
		}
		if kb < maxMB<<10 {
			fmt.Printf("VmRSS %d MB, under %d MB\n", kb>>10, maxMB)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("VmRSS %d MB after %s, not under %d MB", kb>>10, wait, maxMB)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func vmRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// probeStop stops a process and continues it when told (SIGINT), or
// after MAX at the latest: a script that fails while fluxsched is
// stopped must not hang waiting for it.
func probeStop(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: stop PIDFILE READYFILE MAX")
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	most, err := time.ParseDuration(args[2])
	if err != nil {
		return err
	}
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, os.Interrupt)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	if err := os.WriteFile(args[1], []byte("stopped\n"), 0o644); err != nil {
		return err
	}
	select {
	case <-cont:
		fmt.Println("continued")
	case <-time.After(most):
		fmt.Println("continued after", most)
	}
	return nil
}
