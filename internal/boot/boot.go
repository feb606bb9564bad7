// Package boot names this boot of the machine. A launch the exec agent
// has written but not synced survives the agent's death (it is in the page
// cache) but not a crash of the machine, which also ends every process the
// launch made. So what fluxsched may trust of the agent's records after a
// restart depends on whether the machine restarted: the boot id tells.
package boot

import (
	"os"
	"strings"
)

// idPath is the kernel's random id of the current boot, new at every boot.
var idPath = "/proc/sys/kernel/random/boot_id"

// ID returns the current boot's id, or "" if the kernel does not say: then
// a restart of the machine cannot be told from a restart of fluxsched, and
// callers must not rely on the page cache.
func ID() string {
	b, err := os.ReadFile(idPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
