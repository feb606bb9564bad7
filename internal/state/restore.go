package state

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// ExceptionRestored is the exception type of a job that store recovery
// took from the backup while it was active there (RFC 21 lets a service
// name its own types).
const ExceptionRestored = "restore"

// Restore checks a job's record as store recovery salvaged it (values
// by key) and returns the values to store: the same, with the summary
// made again from the eventlog (so a damaged summary never survives a
// recovery). With stale set (the record comes from the backup, and
// whatever happened to the job since is unknown), an active job gets a
// fatal exception of type ExceptionRestored by owner at now, so that it
// is never started again: it may have run, or be running, since.
// A record that does not decode is the error, naming the job.
func Restore(id fluid.ID, values map[string][]byte, stale bool, owner uint32, now time.Time, backupTime time.Time) (map[string][]byte, error) {
	rec, err := Decode(id, func(key string) []byte {
		if key == store.JobSummary {
			return nil
		}
		return values[key]
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(values))
	for k, v := range values {
		out[k] = v
	}
	if stale && rec.Job.State != job.Inactive && !rec.Job.Exception.Fatal() {
		ev := eventlog.Event{Timestamp: Timestamp(now), Name: job.EventException, Context: map[string]any{
			"type":     ExceptionRestored,
			"severity": 0,
			"userid":   owner,
			"note":     fmt.Sprintf("the store was damaged; the job was restored from the backup of %s, and what it did since is unknown", backupTime.UTC().Format(time.RFC3339)),
		}}
		line, err := apply(rec, ev)
		if err != nil {
			return nil, err
		}
		out[store.JobEventlog] = append(append([]byte(nil), values[store.JobEventlog]...), line...)
	}
	sum, err := json.Marshal(Summarize(rec))
	if err != nil {
		return nil, err
	}
	out[store.JobSummary] = sum
	out[store.JobSummarySum] = store.SummarySum(sum)
	return out, nil
}
