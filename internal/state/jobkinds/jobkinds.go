// Package jobkinds gives the job manager's refusals (jobmgr.ErrPermission
// and its kin, which predate internal/api) their api error kinds, so that
// they cross the socket, and come back from the direct path, as the same
// kinds. The server and the client import it for that effect alone; once
// jobmgr's sentinels are api errors themselves it can go.
package jobkinds

import (
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/store"
)

func init() {
	api.Classify(jobmgr.ErrPermission, api.CodePermission)
	api.Classify(jobmgr.ErrGuestUrgency, api.CodePermission)
	api.Classify(jobmgr.ErrInactive, api.CodeInactive)
	api.Classify(jobmgr.ErrUrgencyRunning, api.CodeUrgencyRunning)
	// A damaged store (store.DamagedError, a record that does not
	// decode) is its own kind, so a command can tell it from a refusal.
	api.Classify(store.ErrCorrupt, api.CodeStoreDamaged)
}
