package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/launcher"
)

// ExecHost is one [[exec.hosts]] entry: the address a launcher for other
// machines reaches hosts at, as Flux's [bootstrap] hosts map a host to
// where it is, so that the config's host names need not resolve.
type ExecHost struct {
	// Host is an RFC 29 hostlist of [[resource.config]] hosts.
	Host string `toml:"host"`
	// Address is a hostlist of as many addresses (or names ssh knows),
	// taken in order: host "node[1-4]", address "10.0.0.[11-14]".
	Address string `toml:"address"`
}

// DefaultHostTimeout is [exec] host-timeout when unset: how long a host
// that cannot be reached may stay so before its jobs end with a
// node-failure exception.
const DefaultHostTimeout = "5m"

// launcherKinds are [exec] launcher's values.
var launcherKinds = []string{launcher.Local, launcher.SSH, launcher.Command}

func execError(format string, args ...any) error {
	return fmt.Errorf("error parsing [exec] config table: "+format, args...)
}

// checkLaunchers checks [exec] launcher, the launchers of the
// [[resource.config]] entries and the keys of the launchers for other
// machines, in the config's words.
func (c *Config) checkLaunchers() error {
	e := &c.Exec
	if !slices.Contains(launcherKinds, e.Launcher) {
		return execError("unknown launcher %q (want local, ssh or command)", e.Launcher)
	}
	for i, r := range c.Resource.Config {
		if r.Launcher != "" && r.Launcher != launcher.SSH && r.Launcher != launcher.Command {
			return fmt.Errorf("error parsing [resource.config] config table: entry %d: unknown launcher %q (want ssh or command)", i, r.Launcher)
		}
	}
	if e.HostTimeout == "" {
		e.HostTimeout = DefaultHostTimeout
	}
	if _, err := fsd.ParseBounded(e.HostTimeout); err != nil {
		return execError("host-timeout: %v", err)
	}
	if d := e.RemoteStateDir; d != "" && !filepath.IsAbs(strings.ReplaceAll(d, "{host}", "h")) {
		return execError("remote-state-dir: %q is not an absolute path", d)
	}
	if strings.ContainsAny(strings.ReplaceAll(e.RemoteStateDir, "{host}", ""), "{}") {
		return execError("remote-state-dir: %q: the only placeholder is {host}", e.RemoteStateDir)
	}
	for _, o := range e.SSHOptions {
		if strings.TrimSpace(o) == "" {
			return execError("ssh-options: an option is empty")
		}
	}
	if e.Command != "" {
		if _, err := launcher.ParseTemplate(e.Command); err != nil {
			return execError("command: %v", err)
		}
	}
	hosts, err := c.remoteHosts()
	if err != nil {
		return err
	}
	if len(hosts) == 0 && len(e.Hosts) > 0 {
		return execError("hosts: no host is reached by the ssh or command launcher")
	}
	return nil
}

// remoteHosts lists the hosts of [[resource.config]] in rank order with
// their launcher and address, when any is reached by a launcher for
// other machines; nil when every host is this machine's.
func (c *Config) remoteHosts() ([]launcher.RemoteHost, error) {
	var hosts []launcher.RemoteHost
	index := map[string]int{}
	remote := false
	for _, r := range c.Resource.Config {
		hl, err := hostlist.Parse(r.Hosts)
		if err != nil {
			continue // the entry's own check says what is wrong with it
		}
		kind := r.Launcher
		if kind == "" {
			kind = c.Exec.Launcher
		}
		if kind != launcher.Local {
			remote = true
		}
		for _, h := range hl.Expand() {
			if j, ok := index[h]; ok {
				if hosts[j].Launcher != kind {
					return nil, fmt.Errorf("error parsing [resource.config] config table: host %s is reached by two launchers, %s and %s", h, hosts[j].Launcher, kind)
				}
				continue
			}
			index[h] = len(hosts)
			hosts = append(hosts, launcher.RemoteHost{Name: h, Launcher: kind})
		}
	}
	if !remote {
		if len(c.Resource.Config) == 0 && c.Exec.Launcher != launcher.Local {
			return nil, execError("launcher %s needs the hosts it reaches in [[resource.config]]", c.Exec.Launcher)
		}
		return nil, nil
	}
	for _, h := range hosts {
		if h.Launcher == launcher.Local {
			return nil, execError("host %s is this machine's (launcher local) but others are reached by ssh or command: give it one of those too (ssh to localhost works)", h.Name)
		}
		if h.Launcher == launcher.Command && c.Exec.Command == "" {
			return nil, execError("launcher command needs command, a template such as \"srun --nodes=1 --ntasks=1 --overlap -w {host} {command}\"")
		}
	}
	for i, eh := range c.Exec.Hosts {
		names, err := hostlist.Parse(eh.Host)
		if err != nil || names.IsEmpty() {
			return nil, execError("hosts: entry %d: host %q is not a hostlist", i, eh.Host)
		}
		addrs, err := hostlist.Parse(eh.Address)
		if err != nil || addrs.IsEmpty() {
			return nil, execError("hosts: entry %d: address %q is not a hostlist", i, eh.Address)
		}
		if names.Count() != addrs.Count() {
			return nil, execError("hosts: entry %d: %d hosts but %d addresses", i, names.Count(), addrs.Count())
		}
		as := addrs.Expand()
		for k, n := range names.Expand() {
			j, ok := index[n]
			if !ok {
				return nil, execError("hosts: entry %d: host %s is not in [[resource.config]]", i, n)
			}
			if hosts[j].Address != "" {
				return nil, execError("hosts: host %s has two addresses", n)
			}
			hosts[j].Address = as[k]
		}
	}
	return hosts, nil
}

// Launcher is what launcher.New takes for this config: the kind and
// the launchers for other machines' options (their Remote.BinaryID and
// the instance's state directory are the caller's to add). Its error is
// Load's, for a config Load did not check.
func (c *Config) Launcher() (string, launcher.Remote, error) {
	if k := c.Exec.Launcher; k != "" && !slices.Contains(launcherKinds, k) {
		return "", launcher.Remote{}, execError("unknown launcher %q (want local, ssh or command)", k)
	}
	hosts, err := c.remoteHosts()
	if err != nil {
		return "", launcher.Remote{}, err
	}
	if len(hosts) == 0 {
		return launcher.Local, launcher.Remote{}, nil
	}
	kind := c.Exec.Launcher
	if kind == launcher.Local {
		kind = hosts[0].Launcher
	}
	r := launcher.Remote{Hosts: hosts, Path: c.Exec.RemotePath, StateDir: c.Exec.RemoteStateDir, SSHOptions: c.Exec.SSHOptions}
	if c.Exec.Command != "" {
		r.Template, _ = launcher.ParseTemplate(c.Exec.Command) // checked by Load
	}
	return kind, r, nil
}

// HostTimeout is the checked [exec] host-timeout: how long a host may be
// unreachable before its jobs end with node-failure; 0 for never.
func (c *Config) HostTimeout() time.Duration {
	v := c.Exec.HostTimeout
	if v == "" {
		v = DefaultHostTimeout
	}
	s, err := fsd.Parse(v)
	if err != nil || s >= fsd.MaxDuration {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// maxCPU bounds the CPUs SharedCPUs looks at: a CPU mask's size
// (unix.CPUSet), past which no task is bound anyway.
const maxCPU = 1024

// SharedCPUs are the CPU ids that more than one host of [[resource.config]]
// names when every host is this machine's (the local launcher): a test
// cluster of local hosts on the same cores, such as "node[0-3]" with
// cores "0-1" for 8 slots on 2 cores. Their tasks run unbound
// (agentproto.HelloRequest.SharedCPUs): a core of such a host is not its
// own, and binding every host's tasks to the same CPUs kept the kernel
// from spreading them over the machine. Hosts given cores apart (a large
// machine cut into hosts) share none, and their tasks stay bound. With a
// launcher for other machines each host is a machine of its own: none.
func (c *Config) SharedCPUs() idset.Set {
	if kind, _, err := c.Launcher(); err != nil || kind != launcher.Local {
		return idset.Set{}
	}
	var first [maxCPU]string // the first host naming each CPU
	var shared []idset.Range
	for _, e := range c.Resource.Config {
		hl, err1 := hostlist.Parse(e.Hosts)
		cores, err2 := idset.Parse(e.Cores)
		if err1 != nil || err2 != nil {
			continue // the entry's own check says what is wrong with it
		}
		hosts := hl.Expand()
		for _, rg := range cores.Ranges() {
			for cpu := rg.First; cpu <= rg.Last && cpu < maxCPU; cpu++ {
				for _, h := range hosts {
					if first[cpu] == "" {
						first[cpu] = h
					} else if first[cpu] != h {
						shared = append(shared, idset.Range{First: cpu, Last: cpu})
						break
					}
				}
			}
		}
	}
	return idset.FromRanges(shared)
}
