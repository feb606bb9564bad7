package fluxsched

import "github.com/fluxq/fluxq/internal/version"

// buildID stands in for agent.BuildID until the agent lands (issue 14, H2).
func buildID() string { return "tmp" + version.String() }
