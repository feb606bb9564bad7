// Command fluxq: see internal/cli/fluxq.
package main

import (
	"os"

	"github.com/fluxq/fluxq/internal/cli/fluxq"
)

func main() { os.Exit(fluxq.Main(os.Args)) }
