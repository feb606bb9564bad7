// Command fluxsched: see internal/cli/fluxsched.
package main

import (
	"os"

	"github.com/fluxq/fluxq/internal/cli/fluxsched"
)

func main() { os.Exit(fluxsched.Main(os.Args)) }
