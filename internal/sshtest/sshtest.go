// Package sshtest makes hosts for tests of the launchers that reach other
// machines (issue 29): N real OpenSSH servers on this machine, each on a
// loopback address of its own (127.0.0.2, 127.0.0.3, …) and in a UTS
// namespace of its own (`unshare --uts`), so that `hostname` in a session
// tells which host it reached. Keys, host keys, authorized_keys and a
// client config (`ssh -F`) are made for the test; each host has a state
// directory of its own for its exec agent, since they all share this
// machine's files.
//
// Everything a host's sessions start (the bridge, the detached agent, a
// job's tasks) stays in the host's UTS namespace, which is how Stop finds
// it: by PID, the processes whose /proc/PID/ns/uts is the host's, never by
// name. It needs root (for sshd and unshare) and sshd: Missing says why a
// test should skip.
package sshtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sshd is where the server is looked for (it refuses to start by a
// relative path).
var sshdPaths = []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"}

// Missing says, in one line, why hosts cannot be made here; "" when they
// can.
func Missing() string {
	if os.Geteuid() != 0 {
		return "sshtest: needs root (sshd and unshare --uts)"
	}
	if sshd() == "" {
		return "sshtest: no sshd (apt-get install openssh-server)"
	}
	for _, p := range []string{"ssh", "ssh-keygen", "unshare"} {
		if _, err := exec.LookPath(p); err != nil {
			return "sshtest: no " + p
		}
	}
	return ""
}

func sshd() string {
	for _, p := range sshdPaths {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Host is one host made by Start.
type Host struct {
	// Name is its ssh config alias and the host name its sessions see.
	Name string
	// Address is its loopback address; Port its sshd's port.
	Address string
	Port    int
	// StateDir is the state directory of its exec agent (not made).
	StateDir string

	dir string
	pid int    // sshd's
	ns  string // its UTS namespace, as /proc/PID/ns/uts reads
	// nsf holds the namespace open until Stop: while it does, the
	// kernel keeps it, and its number, which a freed namespace gives to
	// the next one made (another test's host), names it alone.
	nsf *os.File
}

// Hosts are the hosts of one Start.
type Hosts struct {
	// Config is the client config: `ssh -F Config NAME` reaches a host.
	Config string
	// Key is the client's private key (IdentityFile).
	Key string
	// KnownHosts holds every host's key (UserKnownHostsFile).
	KnownHosts string
	Hosts      []*Host
	// Log takes what Stop has to say (a process killed); nothing if nil.
	Log func(format string, args ...any)
	dir string
	// old are the namespaces of hosts killed and started again, which
	// Stop still sweeps, held open as Host.nsf until then.
	old  []string
	oldf []*os.File
}

// Start makes n hosts under dir (which it fills: keys, configs, each
// host's folder host1, host2, …). On error nothing it started is left.
func Start(dir string, n int) (*Hosts, error) {
	if why := Missing(); why != "" {
		return nil, errors.New(why)
	}
	if n < 1 || n > 250 {
		return nil, fmt.Errorf("sshtest: %d hosts: want 1 to 250", n)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// sshd's privilege separation directory, which a machine without
	// the service running may lack.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	h := &Hosts{dir: dir, Config: filepath.Join(dir, "ssh_config"), Key: filepath.Join(dir, "id_ed25519"),
		KnownHosts: filepath.Join(dir, "known_hosts")}
	if err := keygen(h.Key); err != nil {
		return nil, err
	}
	pub, err := os.ReadFile(h.Key + ".pub")
	if err != nil {
		return nil, err
	}
	auth := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(auth, pub, 0o600); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			h.Stop()
		}
	}()
	var known, client strings.Builder
	for i := 1; i <= n; i++ {
		host, err := h.start(i, auth)
		if err != nil {
			return nil, err
		}
		hostPub, err := os.ReadFile(filepath.Join(host.dir, "ssh_host_ed25519_key.pub"))
		if err != nil {
			return nil, err
		}
		// The key's type and body, without its comment.
		f := strings.Fields(string(hostPub))
		fmt.Fprintf(&known, "[%s]:%d %s %s\n", host.Address, host.Port, f[0], f[1])
		// By its name or its address: a launcher's address mapping
		// reaches it too. ssh's LogLevel is left at its default (INFO),
		// as a user's is: at ERROR a connection the server closes ends
		// ssh with 255 and not a word (its "Connection closed by …" is
		// logged at INFO), which hid why a first connection failed.
		fmt.Fprintf(&client, "Host %s %s\n  HostName %s\n  Port %d\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n"+
			"  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  BatchMode yes\n\n",
			host.Name, host.Address, host.Address, host.Port, h.Key, h.KnownHosts)
	}
	if err := os.WriteFile(h.KnownHosts, []byte(known.String()), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(h.Config, []byte(client.String()), 0o600); err != nil {
		return nil, err
	}
	ok = true
	return h, nil
}

func keygen(path string) error {
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshtest", "-f", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sshtest: ssh-keygen: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// start starts host i: 127.0.0.(i+1), named host<i>.
func (h *Hosts) start(i int, auth string) (*Host, error) {
	host := &Host{Name: "host" + strconv.Itoa(i), Address: "127.0.0." + strconv.Itoa(i+1)}
	host.dir = filepath.Join(h.dir, host.Name)
	host.StateDir = filepath.Join(host.dir, "state")
	if err := os.MkdirAll(host.dir, 0o700); err != nil {
		return nil, err
	}
	hostKey := filepath.Join(host.dir, "ssh_host_ed25519_key")
	if err := keygen(hostKey); err != nil {
		return nil, err
	}
	port, err := freePort(host.Address)
	if err != nil {
		return nil, err
	}
	host.Port = port
	cfg := filepath.Join(host.dir, "sshd_config")
	// Only what a test needs: keys, for root, on this address alone.
	// StrictModes is off since the test's folders are under /tmp. Its
	// log (INFO: each connection, and why one was closed) is sshd.log in
	// the host's folder (Hosts.SSHDLog).
	conf := fmt.Sprintf(`ListenAddress %s:%d
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
MaxStartups 100:30:200
MaxSessions 100
LogLevel INFO
`, host.Address, port, hostKey, filepath.Join(host.dir, "sshd.pid"), auth)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	h.Hosts = append(h.Hosts, host)
	if err := h.run(host); err != nil {
		return nil, err
	}
	return host, nil
}

// run starts host's sshd, in a UTS namespace of its own named for the
// host, and waits until it answers.
func (h *Hosts) run(host *Host) error {
	logf, err := os.OpenFile(filepath.Join(host.dir, "sshd.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	// unshare and sh exec: the PID started is sshd's.
	cmd := exec.Command("unshare", "--uts", "sh", "-c", `hostname "$1" && exec "$2" -D -e -f "$3"`,
		"sh", host.Name, sshd(), filepath.Join(host.dir, "sshd_config"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sshtest: starting sshd: %w", err)
	}
	host.pid = cmd.Process.Pid
	host.ns = ""
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if serves(host) {
			break
		}
		select {
		case err := <-exited:
			host.pid = 0
			b, _ := os.ReadFile(filepath.Join(host.dir, "sshd.log"))
			return fmt.Errorf("sshtest: sshd of %s exited (%v): %s", host.Name, err, strings.TrimSpace(string(b)))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sshtest: sshd of %s does not answer on %s:%d", host.Name, host.Address, host.Port)
		}
	}
	// Listening: it has long left unshare, so this is its own namespace.
	// Opened first and named through the descriptor, so that the name
	// is of the namespace held.
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/uts", host.pid))
	if err != nil {
		return fmt.Errorf("sshtest: sshd of %s: its namespace: %w", host.Name, err)
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	own, err2 := os.Readlink("/proc/self/ns/uts")
	if err != nil || err2 != nil || ns == own {
		f.Close()
		return fmt.Errorf("sshtest: sshd of %s is not in a UTS namespace of its own", host.Name)
	}
	host.ns, host.nsf = ns, f
	return nil
}

// serves reports whether host's sshd answers a connection with its
// version line ("SSH-2.0-…"): not only that it listens, but that the
// process it forks for each connection runs, as a client needs.
func serves(host *Host) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host.Address, strconv.Itoa(host.Port)), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 4)
	_, err = io.ReadFull(c, b)
	return err == nil && string(b) == "SSH-"
}

// freePort finds a port free on addr: several tests, of several people,
// may make hosts at once.
func freePort(addr string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("sshtest: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// SSHDLog is the end of what host's sshd logged (at most the last 4 KiB):
// why a connection to it was closed, for a test that failed to reach it.
func (h *Hosts) SSHDLog(name string) string {
	for _, host := range h.Hosts {
		if host.Name != name {
			continue
		}
		b, err := os.ReadFile(filepath.Join(host.dir, "sshd.log"))
		if err != nil {
			return err.Error()
		}
		if len(b) > 4<<10 {
			b = b[len(b)-4<<10:]
		}
		return string(b)
	}
	return ""
}

// SSH returns the command `ssh -F CONFIG ARGS...`.
func (h *Hosts) SSH(args ...string) *exec.Cmd {
	return exec.Command("ssh", append([]string{"-F", h.Config}, args...)...)
}

// Names are the hosts' names, in order.
func (h *Hosts) Names() []string {
	var out []string
	for _, host := range h.Hosts {
		out = append(out, host.Name)
	}
	return out
}

// stopGrace is how long Stop waits after SIGTERM before SIGKILL: an
// agent stopped so ends its jobs (their own grace is shorter in tests).
const stopGrace = 5 * time.Second

// Stop stops every process of the hosts: each sshd, then whatever its
// sessions left in its namespace (bridges, agents, tasks), SIGTERM first,
// SIGKILL after a grace. Safe to call more than once.
func (h *Hosts) Stop() {
	for _, host := range h.Hosts {
		if host.pid > 0 {
			syscall.Kill(host.pid, syscall.SIGTERM)
		}
	}
	var pids []int
	for round := 0; round < 5; round++ {
		pids = h.left()
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGTERM)
		}
		deadline := time.Now().Add(stopGrace)
		for time.Now().Before(deadline) && len(h.left()) > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		for _, pid := range h.left() {
			syscall.Kill(pid, syscall.SIGKILL)
			if h.Log != nil {
				h.Log("sshtest: process %d did not stop on SIGTERM: killed", pid)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, host := range h.Hosts {
		host.pid = 0
	}
	// Swept: the namespaces may go, and their numbers be given again
	// (to another test's hosts), so they are forgotten too: a second
	// Stop sweeps nothing.
	for _, host := range h.Hosts {
		if host.nsf != nil {
			host.nsf.Close()
			host.nsf = nil
		}
		host.ns = ""
	}
	for _, f := range h.oldf {
		f.Close()
	}
	h.old, h.oldf = nil, nil
}

// left lists the live processes in the hosts' namespaces, sshd's
// included (zombies of this process's children are not: they are reaped
// by their Wait).
func (h *Hosts) left() []int {
	nss := map[string]bool{}
	for _, ns := range h.old {
		nss[ns] = true
	}
	for _, host := range h.Hosts {
		if host.ns != "" {
			nss[host.ns] = true
		}
	}
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		ns, err := os.Readlink("/proc/" + e.Name() + "/ns/uts")
		if err != nil || !nss[ns] || zombie(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	// An sshd whose namespace was never read (it failed to start).
	for _, host := range h.Hosts {
		if host.ns == "" && host.pid > 0 && !zombie(host.pid) && syscall.Kill(host.pid, 0) == nil {
			pids = append(pids, host.pid)
		}
	}
	return pids
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// Kill kills host's sshd and every process in its namespace with SIGKILL
// at once, as a machine that dies does: for tests of a host lost.
func (h *Hosts) Kill(name string) error {
	host, err := h.host(name)
	if err != nil {
		return err
	}
	for _, pid := range inNamespace(host.ns) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return nil
}

func (h *Hosts) host(name string) (*Host, error) {
	for _, host := range h.Hosts {
		if host.Name == name && host.ns != "" {
			return host, nil
		}
	}
	return nil, fmt.Errorf("sshtest: no host %q", name)
}

// inNamespace lists the live processes in UTS namespace ns.
func inNamespace(ns string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if got, err := os.Readlink("/proc/" + e.Name() + "/ns/uts"); err == nil && got == ns && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Restart starts a host that Kill killed again, as a machine that comes
// back: its sshd on the same address and port, with the same host key,
// name and state directory (what its agent journaled there is as it was
// left), in a new UTS namespace. It refuses a host whose processes are
// not all gone.
func (h *Hosts) Restart(name string) error {
	host, err := h.host(name)
	if err != nil {
		return err
	}
	// SIGKILL is delivered, not waited for: give the dying a moment.
	deadline := time.Now().Add(5 * time.Second)
	for len(inNamespace(host.ns)) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("sshtest: host %s still runs (processes %v): kill it first", name, inNamespace(host.ns))
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.old = append(h.old, host.ns)
	h.oldf = append(h.oldf, host.nsf)
	host.nsf = nil
	if err := h.run(host); err != nil {
		return err
	}
	return nil
}

// Bridges lists, by PID, the launchers' bridges (`fluxsched agent
// --attach`) that host's sshd serves: one per connection a launcher holds
// to the host.
func (h *Hosts) Bridges(name string) ([]int, error) {
	host, err := h.host(name)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, pid := range inNamespace(host.ns) {
		if isBridge(pid) && len(h.serving(host, pid)) > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// serving are the sshd processes between host's sshd and pid, pid's
// connection's own; none if pid is not under the host's sshd.
func (h *Hosts) serving(host *Host, pid int) []int {
	var chain []int
	for p := ppid(pid); p > 1; p = ppid(p) {
		if p == host.pid {
			return chain
		}
		chain = append(chain, p)
	}
	return nil
}

// Drop drops host's ssh connections that carry a launcher's bridge, as a
// network that fails does, and leaves the host up: it kills, by PID with
// SIGKILL, the sshd processes that serve each such connection (those
// between the host's sshd and the bridge, not the bridge itself), so the
// client's ssh sees its connection closed and the bridge the end of its
// input; the detached agent and its jobs' tasks are not touched. It
// returns the bridges whose connections it dropped, and fails if there
// was none.
func (h *Hosts) Drop(name string) ([]int, error) {
	host, err := h.host(name)
	if err != nil {
		return nil, err
	}
	var dropped []int
	for _, pid := range inNamespace(host.ns) {
		if !isBridge(pid) {
			continue
		}
		chain := h.serving(host, pid)
		for _, p := range chain {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if len(chain) > 0 {
			dropped = append(dropped, pid)
		}
	}
	if len(dropped) == 0 {
		return nil, fmt.Errorf("sshtest: host %s: no connection carries a bridge (fluxsched agent --attach)", name)
	}
	// SIGKILL is delivered, not waited for: until the killed sshd
	// processes have exited, a bridge is still their child and the
	// connection not yet closed. Return once none is served, so what the
	// caller checks next sees the drop done.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		served := 0
		for _, pid := range dropped {
			if len(h.serving(host, pid)) > 0 {
				served++
			}
		}
		if served == 0 {
			return dropped, nil
		}
		if time.Now().After(deadline) {
			return dropped, fmt.Errorf("sshtest: host %s: %d dropped connections still served after 5s", name, served)
		}
	}
}

// isBridge reports whether pid runs `… agent --attach …`: words of its
// own in its argv, not one shell line holding them.
func isBridge(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(string(b), "\x00")
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "agent" && args[i+1] == "--attach" {
			return true
		}
	}
	return false
}

// ppid is pid's parent; 0 if it is gone.
func ppid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
