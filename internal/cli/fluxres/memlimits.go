package fluxres

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cli/printable"
)

// memoryLimits is what the last exec agent to start said of memory
// limits (agentproto.MemoryFile): how they are enforced, or why they are
// not. Both are empty when no agent said (none has run yet, or the file
// cannot be read): status then says nothing of them.
func memoryLimits(c *cli.Context) (how, whyNot string) {
	dir, err := instance.StateDir(c)
	if err != nil {
		return "", ""
	}
	b, err := os.ReadFile(filepath.Join(dir, agentproto.MemoryFile))
	if err != nil {
		return "", ""
	}
	how, whyNot, _ = agentproto.ParseMemoryStatus(b)
	return how, whyNot
}

// memoryLimitsJSON is status --json's "memory_limits": how they are
// enforced, or "not enforced: why"; nil when unknown.
func memoryLimitsJSON(how, whyNot string) any {
	switch {
	case how != "":
		return map[string]any{"enforced": true, "how": how}
	case whyNot != "":
		return map[string]any{"enforced": false, "why": whyNot}
	}
	return nil
}

// printMemoryLimits is status's one line when memory limits are not
// enforced.
func printMemoryLimits(w io.Writer, whyNot string) {
	if whyNot != "" {
		fmt.Fprintln(w, printable.String(agentproto.NotEnforcedLine(whyNot)))
	}
}
