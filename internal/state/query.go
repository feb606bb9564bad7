package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/store"
)

// The read-only operations, shared by the direct path and the server: they
// only read the store, so both run them on a snapshot.

// Selects is the filter of a api.JobsQuery for uid, but for its Count:
// whether it takes a job, as its summary says (the listing), or as the
// job manager holds it (a cancel of many, api.CancelAll).
func Selects(uid uint32, q api.JobsQuery) func(s *api.JobSummary) bool {
	states := q.States
	switch {
	case states == 0 && len(q.Results) > 0:
		states = job.Inactive // results name inactive jobs only
	case states == 0:
		states = job.Pending | job.Running
	case len(q.Results) > 0:
		states |= job.Inactive
	}
	return func(s *api.JobSummary) bool {
		if s.State&states == 0 {
			return false
		}
		if len(q.Results) > 0 && s.State == job.Inactive && !slices.Contains(q.Results, s.Result) {
			return false
		}
		switch {
		case q.UserID != nil:
			if s.UserID != *q.UserID {
				return false
			}
		case !q.AllUsers && len(q.IDs) == 0:
			if s.UserID != uid {
				return false
			}
		}
		if q.Name != "" && s.Name != q.Name {
			return false
		}
		return len(q.Queues) == 0 || slices.Contains(q.Queues, s.Queue)
	}
}

// ListJobs answers a api.JobsQuery for uid. Every filter is applied here,
// before the count: a count taken first and narrowed after (as the name
// once was, in the client) prints fewer rows than asked for, or none.
func ListJobs(tx *store.Tx, uid uint32, q api.JobsQuery) ([]api.JobSummary, error) {
	want := Selects(uid, q)
	var raws [][]byte
	var ids []fluid.ID
	if len(q.IDs) > 0 {
		for _, id := range q.IDs {
			raw, err := tx.JobValue(uint64(id), store.JobSummary)
			if err != nil {
				return nil, ErrUnknownJob
			}
			raws = append(raws, raw)
		}
		ids = q.IDs
	} else {
		// In place: they are decoded before the transaction ends.
		err := tx.ForEachJobSummary(func(id uint64, summary []byte) {
			raws = append(raws, summary)
			ids = append(ids, fluid.ID(id))
		})
		if err != nil {
			return nil, err
		}
	}
	all, bad := decodeSummaries(raws, ids)
	for _, i := range bad {
		// A summary is derived from the job's eventlog and jobspec: one
		// that does not decode, or names another job, is made again from
		// them, so a damaged summary never hides a job from a listing.
		// A job whose record cannot be read either is an error that
		// names it: a listing that leaves it out would say it is gone.
		id := ids[i]
		sum, err := rebuiltSummary(id, func(key string) []byte {
			v, _ := tx.JobValue(uint64(id), key)
			return v
		})
		if err != nil {
			return nil, err
		}
		all[i] = *sum
	}
	out := all[:0]
	for i := range all {
		if want(&all[i]) {
			out = append(out, all[i])
		}
	}
	SortJobs(out)
	if q.Count > 0 && len(out) > q.Count {
		out = out[:q.Count]
	}
	return out, nil
}

// SortJobs orders a listing as docs/cli.md says: pending by priority, then id;
// running by start, newest first; inactive by end, newest first.
func SortJobs(js []api.JobSummary) {
	group := func(s *api.JobSummary) int {
		switch {
		case s.State == job.Inactive:
			return 2
		case s.State&job.Running != 0:
			return 1
		}
		return 0
	}
	sort.SliceStable(js, func(a, b int) bool {
		x, y := &js[a], &js[b]
		if gx, gy := group(x), group(y); gx != gy {
			return gx < gy
		}
		switch group(x) {
		case 0:
			if x.Priority != y.Priority {
				return x.Priority > y.Priority
			}
			return x.ID < y.ID
		case 1:
			if x.TRun != y.TRun {
				return x.TRun > y.TRun
			}
		default:
			if x.TInactive != y.TInactive {
				return x.TInactive > y.TInactive
			}
		}
		return x.ID > y.ID
	})
}

// LoadJobInfo reads one job whole.
func LoadJobInfo(tx *store.Tx, id fluid.ID, jobsDir string) (*api.JobInfo, error) {
	rec, err := Load(tx, id)
	if err != nil {
		return nil, err
	}
	info := &api.JobInfo{Summary: *Summarize(rec), Jobspec: rec.Raw, R: rec.RawR, Eventlog: rec.Events, Resubmitted: ResubmittedFrom(tx, id)}
	if jobsDir != "" {
		info.JobDir = JobDir(jobsDir, id)
	}
	return info, nil
}

// CountJobs answers fluxq stats.
func CountJobs(tx *store.Tx) (*api.JobCounts, error) {
	st := &api.JobCounts{States: map[string]int{}, Results: map[string]int{}}
	err := tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
		var s struct {
			State  string `json:"state"`
			Result string `json:"result"`
		}
		if err := decodeSummary(fluid.ID(id), get, &s); err != nil {
			return false, err
		}
		st.States[s.State]++
		if s.Result != "" {
			st.Results[s.Result]++
		}
		st.Total++
		return true, nil
	})
	return st, err
}

// NewEvents returns the events after the first n, for followers.
func NewEvents(tx *store.Tx, id fluid.ID, n int) ([]eventlog.Event, bool, error) {
	raw, err := tx.JobValue(uint64(id), store.JobEventlog)
	if err != nil {
		return nil, false, ErrUnknownJob
	}
	evs, err := eventlog.Parse(raw)
	if err != nil {
		return nil, false, err
	}
	done := len(evs) > 0 && evs[len(evs)-1].Name == job.EventClean
	if n > len(evs) {
		n = len(evs)
	}
	return evs[n:], done, nil
}

// HasException reports whether the job's eventlog already holds this
// exception: an exec agent that takes a job back reports the job's
// exceptions again, not knowing which the last fluxsched committed, and
// a non-fatal one (an output note) must not be posted twice.
func HasException(tx *store.Tx, id fluid.ID, typ string, severity int, note string) (bool, error) {
	raw, err := tx.JobValue(uint64(id), store.JobEventlog)
	if err != nil {
		return false, ErrUnknownJob
	}
	evs, err := eventlog.Parse(raw)
	if err != nil {
		return false, err
	}
	for _, ev := range evs {
		if ev.Name != job.EventException {
			continue
		}
		t, _ := ev.Context["type"].(string)
		n, _ := ev.Context["note"].(string)
		if t != typ || n != note {
			continue
		}
		if sev, ok := severityOf(ev.Context["severity"]); ok && sev == severity {
			return true, nil
		}
	}
	return false, nil
}

// severityOf reads an exception's severity, decoded as any JSON number.
func severityOf(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), true
	case int:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

// decodeSummaries decodes stored summaries on every core: listing 100,000
// jobs is mostly JSON decoding, and each summary stands alone. They are
// the store's own encoding, so the faster decoder reads them, as a wait's
// answer does (EndSummary; encoding/json took 0.4 s of CPU a listing of
// 100,000). It returns the indexes of those that do not decode or do not
// name their job (ids[i]), in order.
func decodeSummaries(raws [][]byte, ids []fluid.ID) ([]api.JobSummary, []int) {
	out := make([]api.JobSummary, len(raws))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(raws)/1024))
	bad := make([][]int, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(raws); i += workers {
				if err := gojson.Unmarshal(raws[i], &out[i]); err != nil || out[i].ID != ids[i] {
					bad[w] = append(bad[w], i)
				}
			}
		}(w)
	}
	wg.Wait()
	all := slices.Concat(bad...)
	slices.Sort(all)
	return out, all
}

// rebuiltSummary is a job's summary made again from its record (get
// gives its stored values), for a stored one that is damaged: a
// store-damaged error naming the job when the record cannot be read.
func rebuiltSummary(id fluid.ID, get func(string) []byte) (*api.JobSummary, error) {
	rec, err := Decode(id, func(key string) []byte {
		if key == store.JobSummary {
			return nil // the damaged part
		}
		return get(key)
	})
	if err != nil {
		return nil, damagedJob(id, err)
	}
	return Summarize(rec), nil
}

// decodeSummary decodes a job's stored summary into v (a partial view of
// api.JobSummary), or, when it is damaged, the one its record gives.
func decodeSummary(id fluid.ID, get func(string) []byte, v any) error {
	if json.Unmarshal(get(store.JobSummary), v) == nil {
		return nil
	}
	sum, err := rebuiltSummary(id, get)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// damagedJob is a job whose record cannot be read, as a listing reports
// it: naming the job, of the store-damaged kind.
func damagedJob(id fluid.ID, err error) error {
	return &api.Error{Code: api.CodeStoreDamaged, Message: fmt.Sprintf("job %s cannot be read from the store (%v): run 'fluxsched store check' with fluxsched stopped", id, strings.TrimPrefix(err.Error(), "job "+id.String()+": "))}
}

// Ended reports whether a job is inactive: whether its eventlog's last
// event is clean, as NewEvents tells, without decoding the others (a
// wait asks after every turn that touched the job).
func Ended(tx *store.Tx, id fluid.ID) (bool, error) {
	raw, err := tx.JobValue(uint64(id), store.JobEventlog)
	if err != nil {
		return false, ErrUnknownJob
	}
	name, err := eventlog.LastName(raw)
	return name == job.EventClean, err
}

// AppendEndLine appends the wait-all stream line of an ended job to dst:
// its stored summary's bytes as they are (our own compact encoding of
// api.JobSummary, see SaveSummary), never decoded to be encoded again, or,
// for a job stored before summaries were, EndSummary's, encoded. Stored
// bytes that are not one line of JSON (a damaged store) are refused as
// EndSummary refuses them, not passed on to break the caller's stream.
func AppendEndLine(tx *store.Tx, id fluid.ID, dst []byte) ([]byte, error) {
	raw, err := tx.JobValue(uint64(id), store.JobSummary)
	if err != nil {
		return dst, ErrUnknownJob
	}
	if len(raw) > 0 {
		if bytes.IndexByte(raw, '\n') >= 0 || !gojson.Valid(raw) {
			return dst, fmt.Errorf("job %s: stored summary: not one line of JSON", id)
		}
		return api.AppendProgressLine(dst, raw), nil
	}
	sum, err := EndSummary(tx, id)
	if err != nil {
		return dst, err
	}
	b, err := gojson.Marshal(sum)
	if err != nil {
		return dst, err
	}
	return api.AppendProgressLine(dst, b), nil
}

// EndSummary is the summary a wait answers with: the one stored beside
// the eventlog, which every commit keeps up to date, or, for a job stored
// before summaries were, the one its record gives.
func EndSummary(tx *store.Tx, id fluid.ID) (*api.JobSummary, error) {
	raw, err := tx.JobValue(uint64(id), store.JobSummary)
	if err != nil {
		return nil, ErrUnknownJob
	}
	if len(raw) > 0 {
		var s api.JobSummary
		// The store's own encoding, read on every wait's answer: the
		// faster decoder (user input keeps encoding/json's errors).
		if err := gojson.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("job %s: stored summary: %w", id, err)
		}
		return &s, nil
	}
	info, err := LoadJobInfo(tx, id, "")
	if err != nil {
		return nil, err
	}
	return &info.Summary, nil
}
