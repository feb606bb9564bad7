// Package config reads fluxsched's configuration: TOML in Flux's own format,
// one file or a directory of *.toml files, strictly — an unknown key or a
// wrong type is an error that names its table, as Flux reports it.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/reservation"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/suggest"
)

// Config is everything fluxsched reads.
type Config struct {
	Resource Resource `toml:"resource"`
	Sched    Sched    `toml:"sched"`
	Exec     Exec     `toml:"exec"`
	Access   Access   `toml:"access"`
	// JobManager is Flux's [job-manager] table: retention of inactive jobs.
	JobManager JobManager `toml:"job-manager"`
	// Policy and Queues are RFC 33's [policy] and [queues] tables.
	Policy queue.Policy            `toml:"policy"`
	Queues map[string]queue.Config `toml:"queues"`

	// Reservation is the [reservation] table (docs/reservations.md decision 13).
	Reservation Reservation `toml:"reservation"`

	// Store is the [store] table: the store's backup.
	Store Store `toml:"store"`

	// QueueSet is Policy and Queues, checked and compiled by Load.
	QueueSet *queue.Set `toml:"-"`
	// Support is Reservation, checked by Load.
	Support reservation.Support `toml:"-"`
}

// Reservation is the [reservation] table: the attributes of the
// node-reservation specification this instance behaves as if it lacked.
type Reservation struct {
	Unsupported []string `toml:"unsupported" json:"unsupported"`
}

// Store is the [store] table.
type Store struct {
	// BackupInterval is how often fluxsched writes its backup copy of
	// the store (FSD; "0": only at clean stops).
	BackupInterval string `toml:"backup-interval" kind:"a duration string"`
}

// Resource is the [resource] table.
type Resource struct {
	// Config is [[resource.config]]; empty means discover this machine.
	Config []resource.ConfigEntry `toml:"config"`
	// MemoryReserve is the memory of a discovered host left to the
	// system, a size ("2G"); "" for resource.DefaultMemoryReserve (5% of
	// the host, at least 512M, at most 4G). It does not apply to hosts of
	// [[resource.config]], whose memory is what their entries say.
	MemoryReserve string `toml:"memory-reserve" kind:"a memory size string"`
}

// Reserve is the checked memory-reserve.
func (r Resource) Reserve() resource.MemoryReserve {
	if r.MemoryReserve == "" {
		return resource.MemoryReserve{}
	}
	n, _ := jobspec.ParseMemoryOrZero(r.MemoryReserve) // Load checked it
	return resource.MemoryReserve{Bytes: n, Set: true}
}

// Sched is the [sched] table.
type Sched struct {
	Policy           string `toml:"policy"`            // queue policy: fcfs, easy, hybrid, conservative
	MatchPolicy      string `toml:"match-policy"`      // first-fit, worst-fit, best-fit
	QueueDepth       *int   `toml:"queue-depth"`       // pending jobs a pass considers per queue (0: all)
	ReservationDepth *int   `toml:"reservation-depth"` // hybrid: reservations per pass
	Mode             string `toml:"mode"`              // unlimited or limited=N
}

// Exec is the [exec] table.
type Exec struct {
	Launcher    string `toml:"launcher"`                              // "local": every host's tasks run here
	KillTimeout string `toml:"kill-timeout" kind:"a duration string"` // FSD between SIGTERM and SIGKILL
	// AgentIdleTimeout is how long an exec agent that holds no job and
	// has no fluxsched connected waits before it exits (FSD; 0 or inf:
	// never).
	AgentIdleTimeout string `toml:"agent-idle-timeout" kind:"a duration string"`
	// The launchers for other machines' keys (exec.go): ssh's and the
	// command launcher's.
	RemotePath     string     `toml:"remote-path"`
	RemoteStateDir string     `toml:"remote-state-dir"`
	SSHOptions     []string   `toml:"ssh-options"`
	Command        string     `toml:"command"`
	HostTimeout    string     `toml:"host-timeout" kind:"a duration string"`
	Hosts          []ExecHost `toml:"hosts"`
}

// JobManager is the [job-manager] table (flux-config-job-manager(5)): how
// long, and how many, inactive jobs are kept.
type JobManager struct {
	InactiveAgeLimit string `toml:"inactive-age-limit" kind:"a duration string"` // FSD since the job became inactive
	InactiveNumLimit *int   `toml:"inactive-num-limit"`                          // inactive jobs kept
}

// Retention is the checked [job-manager] limits, in seconds and jobs; -1
// is no limit.
func (j JobManager) Retention() (age float64, num int) {
	age, num = -1, -1
	if j.InactiveAgeLimit != "" {
		age, _ = fsd.Parse(j.InactiveAgeLimit)
	}
	if j.InactiveNumLimit != nil {
		num = *j.InactiveNumLimit
	}
	return age, num
}

// maxInactiveAge bounds inactive-age-limit: a century (36525d), beyond which
// "keep for ever" is what is meant, and which every clock holds.
const maxInactiveAge = 100 * 365.25 * 86400

// check validates the [job-manager] keys.
func (j JobManager) check() error {
	if j.InactiveAgeLimit != "" {
		age, err := fsd.Parse(j.InactiveAgeLimit)
		if err != nil {
			return fmt.Errorf("error parsing [job-manager] config table: inactive-age-limit: %v", err)
		}
		if age > maxInactiveAge {
			return fmt.Errorf("error parsing [job-manager] config table: inactive-age-limit: %s is longer than the longest allowed, 36525d", j.InactiveAgeLimit)
		}
	}
	if n := j.InactiveNumLimit; n != nil && *n < 0 {
		return fmt.Errorf("error parsing [job-manager] config table: inactive-num-limit: must be >= 0")
	}
	return nil
}

// Access is the [access] table (as Flux's).
type Access struct {
	AllowGuestUser bool `toml:"allow-guest-user"`
	// GuestReservedNodes and GuestReservationTime limit each guest's
	// node reservations (access.go).
	GuestReservedNodes   int    `toml:"guest-reserved-nodes"`
	GuestReservationTime string `toml:"guest-reservation-time" kind:"a duration string"` // FSD
	// GuestMaxActiveJobs caps each guest's active jobs (nil: the
	// default; 0: no cap). See GuestMaxActive.
	GuestMaxActiveJobs *int `toml:"guest-max-active-jobs"`
}

// Defaults fluxsched uses for what a config leaves out.
const (
	DefaultMatchPolicy = "worst-fit"
	DefaultMode        = "limited=8" // for fcfs; backfilling policies default to unlimited
	DefaultLauncher    = "local"
	DefaultKillTimeout = "5s"
	// DefaultGuestMaxActiveJobs is [access] guest-max-active-jobs when
	// unset: room for any honest use, and a bound on what one guest can
	// make fluxsched hold in memory and the store.
	DefaultGuestMaxActiveJobs = 10000
	// DefaultBackupInterval: a backup of a store of a million jobs
	// (4 GB) is a few seconds of reading beside the loop; every half
	// hour bounds what a damaged store can lose to what that half hour
	// wrote, and what the journal of the exec agents does not hold.
	DefaultBackupInterval = "30m"
	// MaxBackupInterval bounds backup-interval: a backup older than this
	// is no longer one.
	MaxBackupInterval = 30 * 24 * time.Hour
	// DefaultAgentIdleTimeout is agent.DefaultIdleTimeout in FSD.
	DefaultAgentIdleTimeout = "10m"
)

// Load reads a config file or a directory of *.toml files (merged; a key
// set in two files is an error, as in Flux). An empty path is the default
// config.
func Load(path string) (*Config, error) {
	cfg := &Config{}
	if path != "" {
		data, doc, err := read(path)
		if err != nil {
			return nil, err
		}
		// Types first, in the config's words; the decoder would say them
		// in Go's, and takes a table where an array of tables belongs.
		if err := typeError(doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		dec := toml.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(cfg); err != nil {
			return nil, describe(path, err)
		}
	}
	if err := cfg.check(); err != nil {
		if path != "" {
			// Named as fluxsched loaded it: the file, or the directory
			// whose files were merged.
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	return cfg, nil
}

// read returns one TOML document, as text and as parsed: the file, or the
// directory's *.toml files merged after checking that no key is set twice.
func read(path string) ([]byte, map[string]any, error) {
	fi, err := os.Stat(path)
	if err != nil {
		// "config: conf.d: no such file or directory", not Go's "stat".
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, nil, fmt.Errorf("config: %s: %w", path, pe.Err)
		}
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	if !fi.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
		var doc map[string]any
		if err := toml.Unmarshal(data, &doc); err != nil {
			return nil, nil, describe(path, err)
		}
		return data, doc, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.toml"))
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	sort.Strings(files)
	merged := map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("config: %w", err)
		}
		var doc map[string]any
		if err := toml.Unmarshal(data, &doc); err != nil {
			return nil, nil, describe(f, err)
		}
		// An unknown key is the file's: named with it, before the merge
		// makes it the directory's.
		if err := typeError(doc); err == nil {
			dec := toml.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			var strict *toml.StrictMissingError
			if err := dec.Decode(&Config{}); errors.As(err, &strict) {
				return nil, nil, describe(f, err)
			}
		}
		if err := merge(merged, doc, ""); err != nil {
			return nil, nil, fmt.Errorf("config: %s: %w", f, err)
		}
	}
	data, err := toml.Marshal(merged)
	return data, merged, err
}

// merge adds src into dst; tables merge, arrays of tables append, and any
// other key set in both is an error.
func merge(dst, src map[string]any, where string) error {
	for k, v := range src {
		name := strings.TrimPrefix(where+"."+k, ".")
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		switch ov := old.(type) {
		case map[string]any:
			nv, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s is set twice", name)
			}
			if err := merge(ov, nv, name); err != nil {
				return err
			}
		case []any:
			nv, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s is set twice", name)
			}
			dst[k] = append(ov, nv...)
		default:
			return fmt.Errorf("%s is set twice", name)
		}
	}
	return nil
}

// describe turns a TOML error into one line naming the file, the table
// and the key, e.g. `config.toml: [sched]: unknown key "polcy"`.
func describe(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		key := strict.Errors[0].Key()
		at, known := unknownAt(reflect.TypeOf(Config{}), key)
		msg := fmt.Sprintf("%s: %s: unknown key %q", path, table(key[:at]), key[at])
		if near := suggest.Names(key[at], known); len(near) > 0 {
			msg += fmt.Sprintf(". Did you mean %q?", near[0])
		}
		return errors.New(msg)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		if k := de.Key(); len(k) > 0 {
			return fmt.Errorf("%s:%d:%d: %s: %v", path, row, col, table(k), de.Error())
		}
		return fmt.Errorf("%s:%d:%d: %v", path, row, col, de.Error())
	}
	return fmt.Errorf("%s: %v", path, err)
}

// unknownAt finds where a key the decoder did not know leaves the
// config's tables: the index of its first part that no field of t (the
// table so far) is named, and the names that table does know. The
// decoder reports a table header's whole key ("quues.batch"), though
// only its first part is wrong.
func unknownAt(t reflect.Type, key []string) (int, []string) {
	for i, part := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map {
				// A map's keys are names the config chooses (a queue's):
				// this part is one, and the next is the value's.
				t = t.Elem()
				goto next
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return i, nil
		}
		{
			f, ok := field(t, part)
			if !ok {
				return i, tomlNames(t)
			}
			t = f.Type
		}
	next:
	}
	return len(key) - 1, nil
}

// tomlNames are the keys a table of type t takes.
func tomlNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if n := tomlName(f); f.IsExported() && n != "-" {
			names = append(names, n)
		}
	}
	return names
}

func table(key []string) string {
	if len(key) == 0 {
		return "top level"
	}
	return "[" + strings.Join(key, ".") + "]"
}

// check validates values (types are checked by the decoder).
func (c *Config) check() error {
	if c.Sched.MatchPolicy == "" {
		c.Sched.MatchPolicy = DefaultMatchPolicy
	}
	switch c.Sched.MatchPolicy {
	case "first-fit", "worst-fit", "best-fit":
	default:
		return fmt.Errorf("error parsing [sched] config table: unknown match-policy %q (want first-fit, worst-fit or best-fit)", c.Sched.MatchPolicy)
	}
	if _, err := ParseMode(c.Sched.ModeOrDefault()); err != nil {
		return fmt.Errorf("error parsing [sched] config table: %v", err)
	}
	if c.Sched.Policy == "" {
		c.Sched.Policy = sched.FCFS.String()
	}
	if c.Exec.Launcher == "" {
		c.Exec.Launcher = DefaultLauncher
	}
	if err := c.checkLaunchers(); err != nil {
		return err
	}
	if c.Exec.KillTimeout == "" {
		c.Exec.KillTimeout = DefaultKillTimeout
	}
	if _, err := fsd.ParseBounded(c.Exec.KillTimeout); err != nil {
		return fmt.Errorf("error parsing [exec] config table: kill-timeout: %v", err)
	}
	if c.Exec.AgentIdleTimeout == "" {
		c.Exec.AgentIdleTimeout = DefaultAgentIdleTimeout
	}
	if _, err := fsd.ParseBounded(c.Exec.AgentIdleTimeout); err != nil {
		return fmt.Errorf("error parsing [exec] config table: agent-idle-timeout: %v", err)
	}
	if _, err := c.BackupInterval(); err != nil {
		return fmt.Errorf("error parsing [store] config table: backup-interval: %v", err)
	}
	if c.Resource.MemoryReserve != "" {
		if _, err := jobspec.ParseMemoryOrZero(c.Resource.MemoryReserve); err != nil {
			return fmt.Errorf("error parsing [resource] config table: memory-reserve: %v", err)
		}
	}
	for i, e := range c.Resource.Config {
		if e.Hosts == "" {
			return fmt.Errorf("error parsing [resource.config] config table: entry %d has no hosts", i)
		}
	}
	if err := c.JobManager.check(); err != nil {
		return err
	}
	if err := c.Access.checkAccess(); err != nil {
		return err
	}
	support, err := reservation.ParseUnsupported(c.Reservation.Unsupported)
	if err != nil {
		return fmt.Errorf("error parsing [reservation] config table: %v", err)
	}
	c.Support = support
	set, err := queue.Compile(queue.Tables{Policy: c.Policy, Queues: c.Queues})
	if err != nil {
		return err
	}
	if err := set.RequireDefault(); err != nil {
		return err
	}
	c.QueueSet = set
	_, _, err = c.Policies()
	return err
}

// ParseMode reads the RFC 27 mode: "unlimited" or "limited=N" (0 means
// unlimited in the result).
func ParseMode(s string) (int, error) {
	if s == "unlimited" {
		return 0, nil
	}
	var n int
	if _, err := fmt.Sscanf(s, "limited=%d", &n); err != nil || fmt.Sprintf("limited=%d", n) != s || n < 1 || n > 2147483647 {
		return 0, fmt.Errorf("invalid mode %q (want unlimited or limited=N, N 1-2147483647)", s)
	}
	return n, nil
}

// BackupInterval is [store] backup-interval: 0 for backups at clean
// stops only.
func (c *Config) BackupInterval() (time.Duration, error) {
	v := c.Store.BackupInterval
	if v == "" {
		v = DefaultBackupInterval
	}
	s, err := fsd.Parse(v)
	if err != nil {
		return 0, err
	}
	if s != 0 && (s < 1 || s > MaxBackupInterval.Seconds()) {
		return 0, fmt.Errorf("%q is outside 1s to %s (0 for backups at clean stops only)", v, fsd.Format(MaxBackupInterval.Seconds()))
	}
	return time.Duration(s * float64(time.Second)), nil
}

// AgentIdleTimeout is the checked agent-idle-timeout: negative for never
// (0 or inf), else at least a millisecond; 0 for a config that Load did
// not check (the agent's default then holds).
func (c *Config) AgentIdleTimeout() time.Duration {
	if c.Exec.AgentIdleTimeout == "" {
		return 0
	}
	s, err := fsd.Parse(c.Exec.AgentIdleTimeout)
	if err != nil {
		return 0
	}
	if s == 0 || s >= float64(math.MaxInt64/int64(time.Second)) {
		return -1
	}
	return max(time.Duration(s*float64(time.Second)), time.Millisecond)
}

// KillTimeoutSeconds is the checked kill-timeout in seconds.
func (c *Config) KillTimeoutSeconds() float64 {
	s, _ := fsd.Parse(c.Exec.KillTimeout)
	return s
}
