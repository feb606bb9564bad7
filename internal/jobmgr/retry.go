package jobmgr

import (
	"github.com/fluxq/fluxq/internal/job"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// retry runs a job submitted with --retry N again, when it is about to
// end FAILED (a nonzero exit, or a fatal exception other than cancel or
// timeout: a node failure among them) and its chain has retries left:
// a new job of the same jobspec, for the same user, admitted as a new
// submission is, and stored in tx, the transaction that posts the
// failed job's clean. So a crash of fluxsched between the failure and
// the retry loses no retry and makes none twice: the clean and the
// retry are committed together or not at all, and a job left in
// CLEANUP is cleaned, and retried, when the next fluxsched takes it up.
//
// Each link is in both eventlogs: the retry's submit context names the
// run it follows (job.CtxAgainOf) and its place in the chain
// (job.CtxRetry); the failed run's memo, posted just before its clean,
// names the retry (job.MemoRetriedAs). A retry the queue no longer
// admits (disabled, or its limits changed) is not made, and the memo
// says why (job.MemoRetryRefused): the failed run ends all the same.
//
// It returns the retry's record, for Submitted once the failed run is
// inactive; nil for none.
func (m *Manager) retry(tx *store.Tx, e *entry) ([]*ops.Record, error) {
	j := e.j()
	if j.Retry >= e.rec.Spec.Retries || j.Ending() != job.Failed {
		return nil, nil
	}
	raw, err := ops.RawJobspec(tx, e.rec)
	if err != nil {
		return nil, err
	}
	req := ops.SubmitRequest{
		Jobspec: raw, UserID: j.UserID, Owner: j.UserID == m.cfg.Owner, Urgency: j.Urgency,
		Again: j.ID, Retry: j.Retry + 1,
	}
	ids, recs, err := ops.Submit(tx, m.cfg.Now(), []ops.SubmitRequest{req}, m.res)
	if err != nil {
		// Submit refuses before it writes anything: the turn goes on.
		return nil, m.post(tx, e, job.EventMemo, map[string]any{job.MemoRetryRefused: err.Error()})
	}
	return recs, m.post(tx, e, job.EventMemo, map[string]any{job.MemoRetriedAs: ids[0].String()})
}
