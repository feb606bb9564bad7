package jobkinds

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/jobmgr"
)

// The job manager's refusals cross the wire as their kinds, with their
// messages.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind error
	}{
		{jobmgr.ErrPermission, api.ErrPermission},
		{jobmgr.ErrGuestUrgency, api.ErrPermission},
		{fmt.Errorf("cancel: %w", jobmgr.ErrInactive), api.ErrInactive},
		{jobmgr.ErrUrgencyRunning, api.ErrUrgencyRunning},
	} {
		got := api.Wire(tc.err)
		if !errors.Is(got, tc.kind) || got.Error() != tc.err.Error() {
			t.Errorf("%v: %v (is %v: %v)", tc.err, got, tc.kind, errors.Is(got, tc.kind))
		}
	}
}
