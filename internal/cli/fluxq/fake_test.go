package fluxq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
)

// fakeClient is an instance held in memory: what the commands asked for
// is recorded, what they read is set by the test.
type fakeClient struct {
	mu        sync.Mutex
	jobs      []api.JobSummary
	infos     map[fluid.ID]*api.JobInfo
	events    map[fluid.ID][]eventlog.Event
	stats     api.JobCounts
	cancelErr map[fluid.ID]error
	urgErr    error
	submitErr error

	submits   [][]api.SubmitJob
	canceled  []fluid.ID
	notes     []string
	urgencies map[fluid.ID]int
	queries   []api.JobsQuery
}

var _ client.Client = (*fakeClient)(nil)

func (f *fakeClient) Submit(_ context.Context, jobs []api.SubmitJob) ([]fluid.ID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.submitErr != nil {
		return nil, f.submitErr
	}
	f.submits = append(f.submits, jobs)
	ids := make([]fluid.ID, len(jobs))
	for i := range ids {
		ids[i] = fluid.ID(1000 + i)
	}
	return ids, nil
}

func (f *fakeClient) Jobs(_ context.Context, q api.JobsQuery) ([]api.JobSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	if len(q.IDs) == 0 {
		return slices.Clone(f.jobs), nil
	}
	var out []api.JobSummary
	for _, id := range q.IDs {
		i := slices.IndexFunc(f.jobs, func(s api.JobSummary) bool { return s.ID == id })
		if i < 0 {
			return nil, api.ErrUnknownJob
		}
		out = append(out, f.jobs[i])
	}
	return out, nil
}

func (f *fakeClient) Job(_ context.Context, id fluid.ID) (*api.JobInfo, error) {
	if info, ok := f.infos[id]; ok {
		return info, nil
	}
	return nil, api.ErrUnknownJob
}

func (f *fakeClient) Cancel(_ context.Context, ids []fluid.ID, note string) ([]error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := make([]error, len(ids))
	for i, id := range ids {
		errs[i] = f.cancelErr[id]
		f.canceled = append(f.canceled, id)
		f.notes = append(f.notes, note)
	}
	return errs, nil
}

func (f *fakeClient) Urgency(_ context.Context, id fluid.ID, u int) error {
	if f.urgErr != nil {
		return f.urgErr
	}
	if f.urgencies == nil {
		f.urgencies = map[fluid.ID]int{}
	}
	f.urgencies[id] = u
	return nil
}

func (f *fakeClient) Events(ctx context.Context, id fluid.ID, _ bool, fn func(eventlog.Event) error) error {
	evs, ok := f.events[id]
	if !ok {
		return api.ErrUnknownJob
	}
	for _, ev := range evs {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (f *fakeClient) Wait(_ context.Context, id fluid.ID) (*api.JobSummary, error) {
	info, ok := f.infos[id]
	if !ok {
		return nil, api.ErrUnknownJob
	}
	return &info.Summary, nil
}

// Serve answers wait-all as the instance does: each job's summary, in
// the order asked.
func (f *fakeClient) Serve(ctx context.Context, spec api.Spec, params any, each func(any) error) (any, error) {
	if spec.Name == api.Reap.Name {
		return []fluid.ID(nil), nil // nothing ended before the wait
	}
	if spec.Name == api.CancelAll.Name {
		// As the instance does: the jobs its listing would give, each
		// cancelled, a refusal a failure with its owner.
		p := params.(api.CancelAllParams)
		f.mu.Lock()
		f.queries = append(f.queries, p.Query)
		jobs := slices.Clone(f.jobs)
		f.mu.Unlock()
		res := api.CancelAllResult{Matched: len(jobs)}
		if p.DryRun {
			return res, nil
		}
		for _, s := range jobs {
			errs, _ := f.Cancel(ctx, []fluid.ID{s.ID}, p.Note)
			if errs[0] != nil {
				res.Failed = append(res.Failed, api.CancelFailure{ID: s.ID, UserID: s.UserID, Error: api.Encode(errs[0])})
			}
		}
		return res, nil
	}
	if spec.Name != api.WaitAll.Name {
		return nil, fmt.Errorf("%s: not served by the fake", spec.Name)
	}
	for _, id := range params.(api.IDsParams).IDs {
		s, err := f.Wait(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := each(*s); err != nil {
			return nil, err
		}
	}
	return api.None{}, nil
}

func (f *fakeClient) Stats(context.Context) (*api.JobCounts, error) { return &f.stats, nil }
func (f *fakeClient) Resources(context.Context) (*api.ResourceInfo, error) {
	return &api.ResourceInfo{}, nil
}
func (f *fakeClient) Drain(context.Context, string, string, bool) error { return nil }
func (f *fakeClient) Undrain(context.Context, string) error             { return nil }
func (f *fakeClient) Close() error                                      { return nil }

// Queue commands are tested end to end (testdata/script/fluxq_queue*.txtar):
// the fake has no queues.
func (f *fakeClient) Queues(context.Context) (*api.QueueInfo, error) {
	return nil, errors.New("fake: no queues")
}
func (f *fakeClient) ChangeQueues(context.Context, api.QueueChange) (*api.QueueInfo, error) {
	return nil, errors.New("fake: no queues")
}
func (f *fakeClient) WaitQueues(context.Context, api.QueueWait, func(api.QueueCounts)) (api.QueueCounts, error) {
	return api.QueueCounts{}, errors.New("fake: no queues")
}

func (f *fakeClient) Reserve(context.Context, api.ReserveParams) (*api.ReservationView, error) {
	return nil, errors.New("fake: no reservations")
}

func (f *fakeClient) Reservations(context.Context, bool) (*api.ReservationList, error) {
	return nil, errors.New("fake: no reservations")
}

func (f *fakeClient) ToolEvents(context.Context, bool, func(api.ToolEvent) error) error {
	return errors.New("fake: no reservations")
}

func (f *fakeClient) AddSpares(context.Context, api.SpareParams) ([]string, error) {
	return nil, errors.New("fake: no nodes")
}

func (f *fakeClient) RemoveNodes(context.Context, string) error { return errors.New("fake: no nodes") }

// testNow is the fixed "now" of the tests: 2023-11-14T22:13:20Z.
var testNow = time.Unix(1_700_000_000, 0)

// result is what one command did.
type result struct {
	Stdout, Stderr string
	Code           int
}

// runFluxq runs fluxq with args against fc, as Main would.
func runFluxq(t testing.TB, fc client.Client, stdin string, args ...string) result {
	t.Helper()
	return runEnv(testEnv(fc, stdin), args...)
}

// testEnv is an env around fc with fixed time, user names, directory and
// submitter environment.
func testEnv(fc client.Client, stdin string) *env {
	return &env{
		open:    func(*cli.Context) (client.Client, error) { return fc, nil },
		now:     func() time.Time { return testNow },
		environ: func() []string { return []string{"HOME=/home/alice", "PATH=/bin:/usr/bin", "LANG=C"} },
		getwd:   func() (string, error) { return "/work", nil },
		getenv:  func(string) string { return "" },
		poll:    time.Millisecond,
		stdin:   strings.NewReader(stdin),
		users:   map[uint32]string{1000: "alice", 1001: "bob"},
	}
}

// runEnv runs fluxq in e, capturing its output.
func runEnv(e *env, args ...string) result {
	var out, errb bytes.Buffer
	e.stdout, e.stderr = &out, &errb
	code := runApp(e, append([]string{"fluxq"}, args...))
	return result{out.String(), errb.String(), code}
}

// writeFile creates a file with content for a test.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
