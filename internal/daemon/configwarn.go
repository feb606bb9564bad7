package daemon

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/rset"
)

// ConfigWarnings lists what a valid config says that cannot work on this
// machine: a queue whose requires no node has (its jobs could never
// run), and a host given cores this machine does not have (every host
// runs here, with the local launcher, so its tasks would go unbound and
// the scheduler would start more of them at once than there are CPUs).
// cpus is the set of CPUs fluxsched may use.
func ConfigWarnings(cfg *config.Config, r *rset.R, cpus idset.Set) []string {
	var warns []string
	nodes := r.Nodes()
	for _, name := range cfg.QueueSet.Names() {
		q, ok := cfg.QueueSet.Queue(name)
		if !ok || len(q.Requires) == 0 {
			continue
		}
		b, _ := json.Marshal(map[string][]string{"properties": q.Requires})
		c, err := constraint.ParseJSON(b)
		if err != nil {
			continue // config.Load checked it
		}
		matched := false
		for _, n := range nodes {
			if c.Match(constraint.Node{Rank: n.Rank, Hostname: n.Hostname, Properties: n.Properties}) {
				matched = true
				break
			}
		}
		if !matched {
			warns = append(warns, fmt.Sprintf("queue %s: requires %s, which no node has: its jobs can never run",
				name, strings.Join(q.Requires, ",")))
		}
	}
	if len(cfg.Resource.Config) == 0 || cpus.IsEmpty() {
		return warns // discovered resources are this machine's own
	}
	if kind, _, _ := cfg.Launcher(); kind != launcher.Local {
		return warns // the hosts are other machines, whose CPUs are theirs
	}
	for _, n := range nodes {
		if extra := n.Cores.Difference(cpus); !extra.IsEmpty() {
			host := n.Hostname
			if host == "" {
				host = fmt.Sprintf("rank %d", n.Rank)
			}
			warns = append(warns, fmt.Sprintf("host %s: cores %s, but this machine has %d CPUs (%s): tasks on cores %s run unbound, more at once than the machine has CPUs",
				host, n.Cores, cpus.Count(), cpus, extra))
		}
	}
	return warns
}

// UsableCPUs is the set of CPUs this process may run on.
func UsableCPUs() idset.Set {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return idset.Set{}
	}
	var ids []uint
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			ids = append(ids, uint(i))
		}
	}
	return idset.Of(ids...)
}
