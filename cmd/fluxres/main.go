// Command fluxres: see internal/cli/fluxres.
package main

import (
	"os"

	"github.com/fluxq/fluxq/internal/cli/fluxres"
)

func main() { os.Exit(fluxres.Main(os.Args)) }
