package config

import (
	"fmt"
	"math"

	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/reservation"
)

// checkAccess validates the [access] keys that limit guests' reservations.
func (a *Access) checkAccess() error {
	if a.GuestReservedNodes < 0 {
		return fmt.Errorf("error parsing [access] config table: guest-reserved-nodes: %d is negative", a.GuestReservedNodes)
	}
	if n := a.GuestMaxActiveJobs; n != nil && *n < 0 {
		return fmt.Errorf("error parsing [access] config table: guest-max-active-jobs: %d is negative (0 is no limit)", *n)
	}
	if a.GuestReservationTime != "" {
		t, err := fsd.ParseBounded(a.GuestReservationTime)
		if err != nil {
			return fmt.Errorf("error parsing [access] config table: guest-reservation-time: %v", err)
		}
		if t == 0 {
			return fmt.Errorf("error parsing [access] config table: guest-reservation-time: 0 would forbid every reservation; set guest-reserved-nodes = 0 for that")
		}
	}
	return nil
}

// GuestLimits are the reservation limits of every user but the owner:
// no node unless guest-reserved-nodes says otherwise, and no time bound
// unless guest-reservation-time sets one ("inf" is none).
func (a *Access) GuestLimits() reservation.Limits {
	l := reservation.Limits{Nodes: a.GuestReservedNodes}
	if t, err := fsd.Parse(a.GuestReservationTime); err == nil && !math.IsInf(t, 1) {
		l.Time = t
	}
	return l
}

// GuestMaxActive is the number of active jobs each guest may hold, from
// [access] guest-max-active-jobs (0: no cap).
func (a *Access) GuestMaxActive() int {
	if a.GuestMaxActiveJobs == nil {
		return DefaultGuestMaxActiveJobs
	}
	return *a.GuestMaxActiveJobs
}
