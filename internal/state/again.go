package state

import (
	"encoding/json"
	"fmt"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/store"
)

// Resubmission is the request fluxq resubmit makes of job id for the
// user uid: the old job's jobspec as it was admitted, to be admitted
// again as a new submission (its queue's limits and access, its
// reservation targets, as they are now), naming the job it comes from.
//
// Only the job's own submitter may resubmit it, the instance owner
// included: a new job runs as whoever submits it (as Flux's ingest takes
// the userid from the credentials), so the owner "resubmitting" a
// guest's job would run the guest's command as the owner. pueue, with
// one user, restarts any task; cancel, which ends a job under its own
// user, stays the owner's to do on any job.
func Resubmission(tx *store.Tx, uid uint32, id fluid.ID) (SubmitRequest, error) {
	rec, err := Load(tx, id)
	if err != nil {
		return SubmitRequest{}, err
	}
	if rec.Job.UserID != uid {
		return SubmitRequest{}, api.Errorf(api.CodePermission, "permission denied: the job is user %s's; only its submitter may resubmit it", UserName(rec.Job.UserID))
	}
	raw, err := RawJobspec(tx, rec)
	if err != nil {
		return SubmitRequest{}, err
	}
	return SubmitRequest{Jobspec: raw, UserID: uid, Urgency: rec.Job.Urgency, Again: id}, nil
}

// Resubmitted records on the old job that the new one was made from it
// (store.JobResubmitted): an inactive job's eventlog takes no more
// events, and the old job may be either.
func Resubmitted(tx *store.Tx, old, made fluid.ID) error {
	var ids []fluid.ID
	if b, err := tx.JobValue(uint64(old), store.JobResubmitted); err == nil && len(b) > 0 {
		if err := json.Unmarshal(b, &ids); err != nil {
			return fmt.Errorf("job %s: %s: %w", old, store.JobResubmitted, err)
		}
	}
	b, err := json.Marshal(append(ids, made))
	if err != nil {
		return err
	}
	return tx.PutJobValue(uint64(old), store.JobResubmitted, b)
}

// ResubmittedFrom reads the jobs resubmitted from id; a damaged record
// reads as none (it only links, and the jobs it names stand on their own).
func ResubmittedFrom(tx *store.Tx, id fluid.ID) []fluid.ID {
	var ids []fluid.ID
	if b, err := tx.JobValue(uint64(id), store.JobResubmitted); err == nil && len(b) > 0 {
		_ = json.Unmarshal(b, &ids)
	}
	return ids
}
