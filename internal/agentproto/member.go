package agentproto

import (
	"crypto/sha256"
	"encoding/hex"
)

// CgroupName names the folder that holds an instance's job cgroups, one
// per job named by its id in decimal: unique to the state directory (an
// absolute path), so that two instances on one machine never share one.
// The agent makes them; fluxsched reads them to tell which job a process
// belongs to (runner.InJob).
func CgroupName(stateDir string) string {
	h := sha256.Sum256([]byte(stateDir))
	return "fluxq-" + hex.EncodeToString(h[:])[:12]
}
