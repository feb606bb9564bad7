package state

import (
	"encoding/json"
	"fmt"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/runner"
	"github.com/fluxq/fluxq/internal/store"
)

// SpareRecord is a spare node as the store keeps it: its place in the
// reservation rules and the resources it brings when it joins.
type SpareRecord struct {
	reservation.Node
	Cores string `json:"cores"`
	GPUs  string `json:"gpus,omitempty"`
}

// Spares reads every spare node record.
func Spares(tx *store.Tx) ([]SpareRecord, error) {
	var out []SpareRecord
	err := tx.ForEachSpare(func(name string, raw []byte) error {
		var s SpareRecord
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("spare node %s: %w", name, err)
		}
		s.Name, s.Origin = name, reservation.Spare
		out = append(out, s)
		return nil
	})
	return out, err
}

// SpareR is the R of spare nodes, for the scheduler, which knows every
// node it may be given.
func SpareR(spares []SpareRecord) (*rset.R, error) {
	nodes := make([]rset.Node, 0, len(spares))
	for _, s := range spares {
		cores, err := idset.Parse(s.Cores)
		if err != nil {
			return nil, fmt.Errorf("spare node %s: cores: %w", s.Name, err)
		}
		gpus, err := idset.Parse(s.GPUs)
		if err != nil {
			return nil, fmt.Errorf("spare node %s: gpus: %w", s.Name, err)
		}
		nodes = append(nodes, rset.Node{Rank: s.Rank, Hostname: s.Name, Cores: cores, GPUs: gpus})
	}
	return rset.New(nodes), nil
}

// LoadReservations reads the reservation state: the startup nodes of the
// inventory, the spare nodes and every reservation.
func LoadReservations(tx *store.Tx, support reservation.Support) (*reservation.State, error) {
	inv, err := Inventory(tx)
	if err != nil {
		return nil, err
	}
	return loadReservations(tx, inv, support)
}

func loadReservations(tx *store.Tx, inv *rset.R, support reservation.Support) (*reservation.State, error) {
	startup := inv.Nodelist().Expand()
	spares, err := Spares(tx)
	if err != nil {
		return nil, err
	}
	nodes := make([]reservation.Node, len(spares))
	for i, s := range spares {
		nodes[i] = s.Node
	}
	var res []*reservation.Reservation
	err = tx.ForEachReservation(func(n uint64, raw []byte) error {
		r := &reservation.Reservation{}
		if err := json.Unmarshal(raw, r); err != nil {
			return fmt.Errorf("reservation r%d: %w", n, err)
		}
		res = append(res, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	st, err := reservation.New(support, startup, nodes, res, tx.LastAlloc())
	if err != nil {
		return nil, fmt.Errorf("reservations: %w", err)
	}
	return st, nil
}

// SaveReservations writes what changed in st since it was last saved.
func SaveReservations(tx *store.Tx, st *reservation.State) error {
	res, nodes := st.Dirty()
	for _, r := range res {
		n, err := strconv.ParseUint(r.ID[1:], 10, 64)
		if err != nil {
			return fmt.Errorf("reservation id %q: %w", r.ID, err)
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if err := tx.PutReservation(n, raw); err != nil {
			return err
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	spares, err := Spares(tx)
	if err != nil {
		return err
	}
	byName := map[string]SpareRecord{}
	for _, s := range spares {
		byName[s.Name] = s
	}
	for _, n := range nodes {
		s, ok := byName[n.Name]
		if !ok {
			return fmt.Errorf("spare node %s has no record", n.Name)
		}
		s.Node = n
		raw, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if err := tx.PutSpare(n.Name, raw); err != nil {
			return err
		}
	}
	return nil
}

// AddSpares registers hosts as spare nodes, each with the given cores and
// GPUs, or without cores with the shape of the instance's first node, and
// returns their R (ranks after every known node). It needs the instance's
// inventory, so that spare ranks never take a startup node's.
func AddSpares(tx *store.Tx, st *reservation.State, hosts, cores, gpus string) (*rset.R, error) {
	inv, err := Inventory(tx)
	if err != nil {
		return nil, err
	}
	if cores == "" {
		c, g := NodeShape(inv)
		cores = c
		if gpus == "" {
			gpus = g
		}
	}
	hl, err := hostlist.Parse(hosts)
	if err != nil || hl.IsEmpty() {
		return nil, fmt.Errorf("invalid hostlist %q", hosts)
	}
	if hl.Count() > 100000 {
		return nil, fmt.Errorf("too many hosts in %q", hosts)
	}
	c, err := idset.Parse(cores)
	if err != nil || c.IsEmpty() {
		return nil, fmt.Errorf("invalid cores %q: an idset such as 0-3", cores)
	}
	g, err := idset.Parse(gpus)
	if err != nil {
		return nil, fmt.Errorf("invalid gpus %q: an idset such as 0-1", gpus)
	}
	added, err := st.AddSpares(hl.Expand())
	if err != nil {
		return nil, err
	}
	recs := make([]SpareRecord, len(added))
	for i, n := range added {
		recs[i] = SpareRecord{Node: n, Cores: c.String(), GPUs: g.String()}
		raw, err := json.Marshal(recs[i])
		if err != nil {
			return nil, err
		}
		if err := tx.PutSpare(n.Name, raw); err != nil {
			return nil, err
		}
	}
	st.Dirty() // written above, with their resources
	return SpareR(recs)
}

// NodeShape is the cores and GPUs of the instance's first node, the
// default shape of a spare node.
func NodeShape(inv *rset.R) (cores, gpus string) {
	nodes := inv.Nodes()
	if len(nodes) == 0 {
		return "0", ""
	}
	return nodes[0].Cores.String(), nodes[0].GPUs.String()
}

// Identify says who is calling (docs/cli.md "Who is asking"): a process inside
// a running job, verified by the job's cgroup (runner.InJob), is that job;
// the instance owner with --as-scheduler is the scheduler; anyone else is
// the tool tool:USER. claim is the caller's FLUXQ_JOB_ID, pid its process.
func Identify(tx *store.Tx, jobsDir string, uid uint32, pid int, claim string, asScheduler, owner bool) (reservation.Requester, error) {
	name := UserName(uid)
	if asScheduler {
		if !owner {
			return reservation.Requester{}, &reservation.Error{Status: reservation.NoPermissions, Msg: "only the instance owner may act as the scheduler"}
		}
		return reservation.Requester{Class: reservation.Scheduler, NS: reservation.ToolNS(name)}, nil
	}
	if claim != "" {
		if id, err := fluid.Parse(claim); err == nil && id != 0 {
			if rec, err := Load(tx, id); err == nil && rec.Job.State == job.Run && rec.Job.UserID == uid &&
				runner.InJob(pid, agentproto.CgroupName(stateDir(jobsDir)), id) {
				return reservation.Requester{Class: reservation.Application, NS: reservation.JobNS(id)}, nil
			}
		}
	}
	return reservation.Requester{Class: reservation.Tool, NS: reservation.ToolNS(name)}, nil
}

// stateDir is the absolute state directory of a jobs folder, as the agent
// names its cgroups after it.
func stateDir(jobsDir string) string {
	dir := filepath.Dir(jobsDir)
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// UserName is the login name of uid, or the number when it has none.
func UserName(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return u.Username
	}
	return strconv.FormatUint(uint64(uid), 10)
}

// ToolEvent is a timeout warning kept for a tool to read.
type ToolEvent = api.ToolEvent

// ToolEvents returns a tool user's warnings after sequence number after.
func ToolEvents(tx *store.Tx, userName string, after uint64) ([]ToolEvent, error) {
	var out []ToolEvent
	err := tx.ForEachToolEvent(userName, after, func(seq uint64, raw []byte) error {
		var w reservation.Warning
		if err := json.Unmarshal(raw, &w); err != nil {
			return fmt.Errorf("tool event %d: %w", seq, err)
		}
		out = append(out, ToolEvent{Seq: seq, Warning: w})
		return nil
	})
	return out, err
}

// Schedulable is every node the scheduler may ever place a job on: the
// inventory inv and the spare nodes, in the instance or not.
func Schedulable(tx *store.Tx, inv *rset.R) (*rset.R, error) {
	spares, err := Spares(tx)
	if err != nil {
		return nil, err
	}
	spareR, err := SpareR(spares)
	if err != nil {
		return nil, err
	}
	r, err := inv.Union(spareR)
	if err != nil {
		return nil, fmt.Errorf("spare nodes: %w", err)
	}
	return r, nil
}
