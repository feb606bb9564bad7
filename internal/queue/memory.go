package queue

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/jobspec"
)

// parseMemoryLimit reads policy.limits.job-size.{max,min}.memory: a size
// as --mem reads it (jobspec.ParseMemory: 8G, 512M, a bare number in MB),
// or "0", "-1" or "unlimited" for no bound (returned as 0), so that a
// queue can lift a global limit as -1 lifts the integer job-size keys and
// "0" lifts limits.duration.
func parseMemoryLimit(s string) (uint64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "-1", "unlimited", "inf", "infinity":
		return 0, nil
	}
	return jobspec.ParseMemoryOrZero(s)
}

// checkMemory applies the memory limits to the job's total memory, after
// the default is applied. A job that asks for no memory has no size to
// exceed a maximum with (it is placed by its cores alone), so only a
// minimum refuses it, as min.ncores refuses a job too small.
func (q *Queue) checkMemory(c jobspec.Counts, suffix string) error {
	// Validate bounds slots x memory per slot by MaxMemory: no overflow.
	total := uint64(c.NSlots) * c.MemPerSlot
	if q.MaxMemory > 0 && total > q.MaxMemory {
		asked, limit := formatPair(total, q.MaxMemory)
		return memoryRefusal(asked, "exceeds", limit, q.MaxMemory, suffix)
	}
	if q.MinMemory > 0 && total < q.MinMemory {
		asked, limit := formatPair(total, q.MinMemory)
		if total == 0 {
			asked = "none"
		}
		return memoryRefusal(asked, "is under", limit, q.MinMemory, suffix)
	}
	return nil
}

// memoryRefusal is a memory limit's refusal. The message shows the limit
// as formatPair does beside what was asked; the rule, which every job the
// limit refuses shares, shows it as FormatMemory does alone.
func memoryRefusal(asked, relation, shown string, limit uint64, suffix string) error {
	r := rejectLimit("memory", asked, relation, shown, suffix)
	r.rule = fmt.Sprintf("requested memory %s policy limit of %s%s", relation, jobspec.FormatMemory(limit), suffix)
	return r
}

// formatPair shows two different sizes as jobspec.FormatMemory does,
// unless that shows them alike (2G+1K and 2G are both "2G"): then each in
// the largest unit it is whole in, so a refusal never reads "2G exceeds 2G".
func formatPair(a, b uint64) (string, string) {
	fa, fb := jobspec.FormatMemory(a), jobspec.FormatMemory(b)
	if fa != fb {
		return fa, fb
	}
	return exactMemory(a), exactMemory(b)
}

// exactMemory is n in the largest unit of 1024 that holds it whole.
func exactMemory(n uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"P", 50}, {"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n >= 1<<u.shift && n&(1<<u.shift-1) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(n, 10) + "B"
}
