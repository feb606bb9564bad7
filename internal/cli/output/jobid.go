package output

import (
	"strconv"

	"github.com/fluxq/fluxq/internal/fluid"
)

// JobID prints a job ID as every command does (docs/cli.md): F58 with "ƒ", or
// with "f" when FLUXQ_F58_FORCE_ASCII is set in getenv's environment.
func JobID(id fluid.ID, getenv func(string) string) string {
	f := fluid.F58
	if v := getenv("FLUXQ_F58_FORCE_ASCII"); v != "" && v != "0" {
		f = fluid.F58Plain
	}
	s, err := id.Encode(f)
	if err != nil {
		return strconv.FormatUint(uint64(id), 10)
	}
	return s
}
