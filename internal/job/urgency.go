package job

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Urgency bounds and named values (RFC 21 / flux-core).
const (
	UrgencyHold     = 0
	UrgencyMin      = 0
	UrgencyDefault  = 16
	UrgencyExpedite = 31
	UrgencyMax      = 31
	// UrgencyGuestMax is the highest urgency a user other than the
	// instance owner may set, at submit or later: as in Flux, only the
	// owner may put a job ahead of the default.
	UrgencyGuestMax = UrgencyDefault
)

// Priority bounds (RFC 27: 0 through 4294967295).
const (
	PriorityMin int64 = 0
	PriorityMax int64 = math.MaxUint32
)

// ParseUrgency reads an urgency as a number 0-31 or one of the names hold,
// default and expedite, as `flux job urgency` does.
func ParseUrgency(s string) (int, error) {
	switch strings.ToLower(s) {
	case "hold":
		return UrgencyHold, nil
	case "default":
		return UrgencyDefault, nil
	case "expedite":
		return UrgencyExpedite, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("invalid urgency %q: want 0-31, hold, default or expedite", s)
	}
	if n < UrgencyMin || n > UrgencyMax {
		return 0, fmt.Errorf("urgency value is out of range")
	}
	return n, nil
}

// PriorityOf is flux-core's default priority plugin: priority follows
// urgency, except that a held job gets the lowest priority and an expedited
// one the highest, so nothing can pass an expedited job.
func PriorityOf(urgency int) int64 {
	switch urgency {
	case UrgencyHold:
		return PriorityMin
	case UrgencyExpedite:
		return PriorityMax
	}
	return int64(urgency)
}
