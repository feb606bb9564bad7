package fluxres

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/cli/printable"
	"github.com/fluxq/fluxq/internal/launcher"
)

// unusableHosts are the hosts the launcher for other machines last
// failed to reach, from the state directory (launcher.HostStatusFile).
func unusableHosts(c *cli.Context) []launcher.HostStatus {
	dir, err := instance.StateDir(c)
	if err != nil {
		return nil
	}
	return launcher.ReadHostStatus(dir)
}

// printUnusableHosts is status's lines for them: one per host, with the
// launcher's reason (ssh's own words, or the bridge's on the host).
func printUnusableHosts(w io.Writer, hosts []launcher.HostStatus) {
	if len(hosts) == 0 {
		return
	}
	fmt.Fprintln(w, "hosts the launcher cannot use:")
	for _, h := range hosts {
		since := time.Unix(0, int64(h.Since*1e9)).Format(time.DateTime)
		fmt.Fprintln(w, printable.String(fmt.Sprintf("  %s: %s since %s: %s", h.Host, h.Kind, since, h.Reason)))
	}
}
