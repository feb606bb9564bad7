package resource

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// ConfigEntry is one [[resource.config]] table of a Flux config
// (flux-config-resource(5)): Hosts is an RFC 29 hostlist, Cores and GPUs are
// RFC 22 idsets ("" when the key is absent), Properties are property names
// given to every host of the entry. Memory, fluxq's key (Flux's config has
// none), is the schedulable memory of each host of the entry, a size as
// --mem reads it ("64G"; a bare number is megabytes), "" for none known.
type ConfigEntry struct {
	Hosts      string   `toml:"hosts" json:"hosts"`
	Cores      string   `toml:"cores" json:"cores,omitempty"`
	GPUs       string   `toml:"gpus" json:"gpus,omitempty"`
	Memory     string   `toml:"memory" json:"memory,omitempty" kind:"a memory size string"`
	Properties []string `toml:"properties" json:"properties,omitempty"`
	// Launcher is how the entry's hosts are reached (fluxq's key, issue
	// 29): "ssh" or "command"; "" for [exec] launcher's. R never holds
	// it: internal/config reads it for the launcher.
	Launcher string `toml:"launcher" json:"launcher,omitempty"`
}

// invalidPropertyChars are the characters RFC 20 forbids in a property name;
// they are the query syntax's operators, so such a name could never be
// asked for with --requires.
const invalidPropertyChars = "!&'\"^`|()"

// configHost accumulates what the entries give one host.
type configHost struct {
	name        string
	cores, gpus idset.Set
	mem         uint64
	index       int32 // in the order hosts are first named: the rank
	props       []string
	// lastProp is the index of the last property added to props, so that
	// a property given twice is added once.
	lastProp int
}

// FromConfig builds the instance inventory from [[resource.config]]
// entries, as flux-core's rlist_from_config does: ranks are assigned in the
// order hosts are first named, a host named again gets the union of what
// each entry gives it (the same core or GPU twice is an error; memory
// given by several entries is summed, as cores are accumulated, each entry
// adding its own), and properties become R properties. Errors name the
// entry by index.
func FromConfig(entries []ConfigEntry) (*rset.R, error) {
	var hosts []*configHost
	byName := map[string]*configHost{}
	// propHosts lists, for each property (numbered by propIndex), the hosts
	// given it (by index in hosts, repeats and all). Properties are handed to hosts once, at the
	// end, so that the work is linear in what the config says: checking
	// each one against the host's list as it came was quadratic (issue 13:
	// 24 s for 1,000 hosts x 4,000 properties).
	propIndex := map[string]int{}
	var propNames []string
	var propHosts [][]int32
	for i, e := range entries {
		where := fmt.Sprintf("resource.config[%d]", i)
		hl, err := hostlist.Parse(e.Hosts)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid hostlist %q", where, e.Hosts)
		}
		if hl.IsEmpty() {
			return nil, fmt.Errorf("%s: empty hostlist specified", where)
		}
		if len(byName)+hl.Count() > rset.MaxRanks {
			return nil, fmt.Errorf("%s: more than %d hosts configured", where, rset.MaxRanks)
		}
		cores, err := idset.Parse(e.Cores)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid idset cores=%q", where, e.Cores)
		}
		gpus, err := idset.Parse(e.GPUs)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid idset gpus=%q", where, e.GPUs)
		}
		var mem uint64
		if e.Memory != "" {
			if mem, err = jobspec.ParseMemory(e.Memory); err != nil {
				return nil, fmt.Errorf("%s: memory: %v", where, err)
			}
		}
		props := make([]int, len(e.Properties))
		for j, p := range e.Properties {
			if p == "" || strings.ContainsAny(p, invalidPropertyChars) {
				return nil, fmt.Errorf("%s: invalid property %q", where, p)
			}
			k, ok := propIndex[p]
			if !ok {
				k = len(propNames)
				propIndex[p] = k
				propNames = append(propNames, p)
				propHosts = append(propHosts, nil)
			}
			props[j] = k
		}
		for _, name := range hl.All() {
			h := byName[name]
			if h == nil {
				h = &configHost{name: name, index: int32(len(hosts)), lastProp: -1}
				byName[name] = h
				hosts = append(hosts, h)
			}
			if dup := h.cores.Intersection(cores); !dup.IsEmpty() {
				return nil, fmt.Errorf("%s: host %s: core %s configured twice", where, name, dup)
			}
			if dup := h.gpus.Intersection(gpus); !dup.IsEmpty() {
				return nil, fmt.Errorf("%s: host %s: gpu %s configured twice", where, name, dup)
			}
			h.cores = h.cores.Union(cores)
			h.gpus = h.gpus.Union(gpus)
			if h.mem += mem; h.mem > rset.MaxMemory {
				return nil, fmt.Errorf("%s: host %s: memory summed over its entries is more than 1E", where, name)
			}
			for _, k := range props {
				propHosts[k] = append(propHosts[k], h.index)
			}
		}
	}
	if len(hosts) == 0 {
		return nil, errors.New("resource.config: no hosts configured")
	}
	// In name order, so that each host's properties come out sorted.
	order := make([]int, len(propNames))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(propNames[a], propNames[b]) })
	for _, k := range order {
		for _, hi := range propHosts[k] {
			if h := hosts[hi]; h.lastProp != k {
				h.props = append(h.props, propNames[k])
				h.lastProp = k
			}
		}
	}
	nodes := make([]rset.Node, 0, len(hosts))
	var empty []string
	for rank, h := range hosts {
		if h.cores.IsEmpty() && h.gpus.IsEmpty() {
			empty = append(empty, h.name)
			continue
		}
		nodes = append(nodes, rset.Node{Rank: uint(rank), Hostname: h.name, Cores: h.cores, GPUs: h.gpus, Properties: h.props, Memory: h.mem})
	}
	if len(empty) > 0 {
		// A rank with nothing cannot be written in R; flux-core refuses it
		// with this message rather than silently renumbering the others.
		return nil, fmt.Errorf("resource.config: %s assigned no resources", hostlist.New(empty...))
	}
	return rset.New(nodes), nil
}
