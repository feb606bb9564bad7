package complete

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/instance"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/rset"
)

// Source is where the live values come from: the instance, or a fake in
// tests.
type Source interface {
	// Queues are the named queues, with their state as description.
	Queues(ctx context.Context) ([]Candidate, error)
	// Jobs are the caller's pending and running jobs.
	Jobs(ctx context.Context) ([]Job, error)
	// Reservations are the live reservations' allocation IDs.
	Reservations(ctx context.Context) ([]Candidate, error)
	// Hosts are the instance's nodes and the scheduler's spare ones.
	Hosts(ctx context.Context) ([]Host, error)
}

// Job is one of the caller's jobs, as completion describes it.
type Job struct {
	ID    fluid.ID
	State string // RFC 21 name, or "held"
	Name  string
}

// Host is one node.
type Host struct {
	Name    string
	Drained bool // fluxres undrain takes it
	Spare   bool // in the scheduler's pool, outside the instance
	Desc    string
}

// Timeout bounds how long completion waits for the instance: a prompt
// must not hang on a busy store.
const Timeout = time.Second

// Live is the Source of the instance that the application's options in
// words (--state-dir), or the environment, name. It opens the instance
// once, at the first value asked for, and only when the state directory
// already holds a store or a socket: completing must not create one.
func Live(app *cli.App, words []string) *LiveSource {
	return &LiveSource{app: app, globals: walk(app, words).globals}
}

// LiveSource reads values from a running or stopped instance.
type LiveSource struct {
	app     *cli.App
	globals []string

	once sync.Once
	cl   client.Client
	err  error
}

var errNoInstance = errors.New("no instance")

// open connects to the instance, once. The options are parsed as the
// application would (FLUXQ_STATE_DIR included), with a short --timeout.
func (s *LiveSource) open(ctx context.Context) (client.Client, error) {
	s.once.Do(func() {
		set := flag.NewFlagSet(s.app.Name, flag.ContinueOnError)
		set.SetOutput(io.Discard)
		for _, f := range instance.Flags() {
			if err := f.Apply(set); err != nil {
				s.err = err
				return
			}
		}
		if err := set.Parse(s.globals); err != nil {
			s.err = err
			return
		}
		if err := set.Set(instance.FlagTimeout, fmt.Sprintf("%gs", Timeout.Seconds())); err != nil {
			s.err = err
			return
		}
		c := cli.NewContext(s.app, set, nil)
		c.Context = ctx
		dir, err := instance.StateDir(c)
		if err != nil {
			s.err = err
			return
		}
		if !exists(filepath.Join(dir, client.SocketFile)) && !exists(filepath.Join(dir, client.StoreFile)) {
			s.err = errNoInstance
			return
		}
		s.cl, s.err = instance.Open(c)
	})
	return s.cl, s.err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Close releases the instance, if it was opened.
func (s *LiveSource) Close() error {
	if s.cl != nil {
		return s.cl.Close()
	}
	return nil
}

// Queues implements Source.
func (s *LiveSource) Queues(ctx context.Context) ([]Candidate, error) {
	cl, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	qi, err := cl.Queues(ctx)
	if err != nil || qi.Set == nil || !qi.Set.Named() {
		return nil, err
	}
	var out []Candidate
	for _, n := range qi.Set.Names() {
		if n == "" {
			continue
		}
		st := qi.Set.StateOf(qi.States, n)
		desc := []string{"disabled", "stopped"}
		if st.Enabled {
			desc[0] = "enabled"
		}
		if st.Started {
			desc[1] = "started"
		}
		d := strings.Join(desc, ", ")
		if n == qi.Set.Default() {
			d = "default, " + d
		}
		out = append(out, Candidate{Value: n, Desc: d})
	}
	return out, nil
}

// Jobs implements Source.
func (s *LiveSource) Jobs(ctx context.Context) ([]Job, error) {
	cl, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	sums, err := cl.Jobs(ctx, api.JobsQuery{})
	if err != nil {
		return nil, err
	}
	out := make([]Job, 0, len(sums))
	for _, j := range sums {
		state := j.State.String()
		if j.Urgency == 0 && j.State&job.Running == 0 {
			state = "held"
		}
		out = append(out, Job{ID: j.ID, State: state, Name: j.Name})
	}
	return out, nil
}

// Reservations implements Source.
func (s *LiveSource) Reservations(ctx context.Context) ([]Candidate, error) {
	cl, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	rl, err := cl.Reservations(ctx, false)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	for _, r := range rl.Reservations {
		if r.State != "active" {
			continue
		}
		d := fmt.Sprintf("%d nodes", len(r.Nodes))
		if len(r.Nodes) == 1 {
			d = r.Nodes[0]
		}
		if r.ReqID != "" {
			d += ", request " + r.ReqID
		}
		out = append(out, Candidate{Value: r.ID, Desc: d})
	}
	return out, nil
}

// Hosts implements Source: the inventory's nodes (with their drain
// state), then the spare nodes the reservation state knows.
func (s *LiveSource) Hosts(ctx context.Context) ([]Host, error) {
	cl, res, inv, err := s.resources(ctx)
	if err != nil {
		return nil, err
	}
	reasons := map[uint]string{}
	for _, d := range res.Drained {
		reasons[d.Rank] = d.Reason
	}
	var out []Host
	seen := map[string]bool{}
	for rank := range inv.Ranks().All() {
		n, ok := inv.Node(rank)
		if !ok || n.Hostname == "" {
			continue
		}
		h := Host{Name: n.Hostname, Desc: fmt.Sprintf("rank %d", rank)}
		if reason, ok := reasons[rank]; ok {
			h.Drained = true
			h.Desc += ", drained"
			if reason != "" {
				h.Desc += ": " + reason
			}
		}
		seen[h.Name] = true
		out = append(out, h)
	}
	// Spare nodes live in the reservation state only; an instance that
	// cannot say (an old store) still gives its own nodes.
	if rl, err := cl.Reservations(ctx, false); err == nil {
		var spares []Host
		for _, n := range rl.Nodes {
			if n.Origin != reservation.Spare || seen[n.Name] {
				continue
			}
			desc := "spare"
			if n.Session != "" {
				desc += ", in " + n.Session
			}
			spares = append(spares, Host{Name: n.Name, Spare: true, Desc: desc})
		}
		sort.Slice(spares, func(a, b int) bool { return spares[a].Name < spares[b].Name })
		out = append(out, spares...)
	}
	return out, nil
}

// Properties implements PropertySource: the node properties of the
// instance's resources, which --requires names.
func (s *LiveSource) Properties(ctx context.Context) ([]Candidate, error) {
	_, _, inv, err := s.resources(ctx)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	for _, p := range inv.Properties() {
		out = append(out, Candidate{Value: p, Desc: "property"})
	}
	return out, nil
}

// resources reads the instance's resources through the client it opens,
// and parses their inventory.
func (s *LiveSource) resources(ctx context.Context) (client.Client, *api.ResourceInfo, *rset.R, error) {
	cl, err := s.open(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := cl.Resources(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	inv, err := rset.Parse(res.Inventory)
	if err != nil {
		return nil, nil, nil, err
	}
	return cl, res, inv, nil
}
