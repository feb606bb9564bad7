package launcher

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// HostStatusFile, in the state directory, lists the hosts a launcher for
// other machines last failed to reach, with why: `fluxres status` reads
// it, as it reads the agent's memory-limits file. The launcher rewrites it
// after each try of a host (a host reached leaves it), and fluxsched
// removes it when it starts with the local launcher
// (daemon.NewLauncher): an instance that no longer reaches other
// machines has none to report.
const HostStatusFile = "exec-hosts.json"

// Why a host cannot be used (HostStatus.Kind).
const (
	HostUnreachable  = "unreachable"   // ssh (or the command) did not reach it, or no agent answered
	HostNoBinary     = "no binary"     // the host has no fluxsched at remote-path
	HostAnotherBuild = "another build" // its fluxsched is not this instance's build
)

// HostStatus is one host that cannot be used.
type HostStatus struct {
	Host   string `json:"host"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	// Since is when the launcher first failed to reach it, in a row
	// (seconds since the epoch).
	Since float64 `json:"since"`
}

// classify says which kind of failure a ConnectHost error is, from the
// words of the bridge (another build) or of the remote shell (no binary).
func classify(reason string) string {
	switch {
	case strings.Contains(reason, " runs fluxsched build ") && strings.Contains(reason, ", this instance is build "):
		return HostAnotherBuild
	case strings.HasSuffix(reason, ": No such file or directory") || strings.HasSuffix(reason, ": command not found") ||
		strings.HasSuffix(reason, ": Permission denied") && !strings.Contains(reason, "publickey"):
		return HostNoBinary
	}
	return HostUnreachable
}

// ReadHostStatus lists the hosts of stateDir's HostStatusFile, by name;
// none when there is no file or it does not read.
func ReadHostStatus(stateDir string) []HostStatus {
	b, err := os.ReadFile(filepath.Join(stateDir, HostStatusFile))
	if err != nil {
		return nil
	}
	var hs []HostStatus
	if json.Unmarshal(b, &hs) != nil {
		return nil
	}
	return hs
}

// recordHost records a try of a host, and rewrites the file when what
// it says changed. Called with r.mu held.
func (r *remote) recordHost(host string, err error) {
	if r.failed == nil {
		r.failed = map[string]HostStatus{}
	}
	old, had := r.failed[host]
	switch {
	case err == nil && !had:
		return
	case err == nil:
		delete(r.failed, host)
	default:
		s := HostStatus{Host: host, Reason: err.Error(), Kind: classify(err.Error()), Since: float64(time.Now().UnixNano()) / 1e9}
		if had {
			s.Since = old.Since
		}
		r.failed[host] = s
	}
	r.writeHostStatus()
}

func (r *remote) writeHostStatus() {
	path := filepath.Join(r.opts.StateDir, HostStatusFile)
	if len(r.failed) == 0 {
		os.Remove(path)
		return
	}
	var hs []HostStatus
	for _, h := range slices.Sorted(maps.Keys(r.failed)) {
		hs = append(hs, r.failed[h])
	}
	b, _ := json.Marshal(hs)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		r.opts.Log.Warn("cannot write the hosts' status", "file", path, "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		r.opts.Log.Warn("cannot write the hosts' status", "file", path, "err", err)
	}
}
