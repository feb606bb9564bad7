package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/resource"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.toml", `
[[resource.config]]
hosts = "node[0-3]"
cores = "0-7"
gpus = "0-1"
properties = ["gpu"]

[sched]
match-policy = "first-fit"
mode = "limited=4"

[exec]
kill-timeout = "2s"

[access]
allow-guest-user = true
`)
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Resource: Resource{Config: []resource.ConfigEntry{{Hosts: "node[0-3]", Cores: "0-7", GPUs: "0-1", Properties: []string{"gpu"}}}},
		Sched:    Sched{Policy: "fcfs", MatchPolicy: "first-fit", Mode: "limited=4"},
		Exec:     Exec{Launcher: "local", KillTimeout: "2s", AgentIdleTimeout: DefaultAgentIdleTimeout, HostTimeout: DefaultHostTimeout},
		Access:   Access{AllowGuestUser: true},
	}
	if cfg.QueueSet == nil || cfg.QueueSet.Named() {
		t.Errorf("QueueSet = %v, want the anonymous queue", cfg.QueueSet)
	}
	cfg.QueueSet = nil
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

// TestQueueTables covers RFC 33's tables as fluxsched reads them: every
// error names its table.
func TestQueueTables(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content, wantErr string
	}{
		{"two queues and a default", "[policy.jobspec.defaults.system]\nqueue = \"batch\"\n[queues.batch]\n[queues.debug]\n", ""},
		// RFC 33: "If more than one named queue is configured, one queue
		// MUST be designated as the default queue".
		{"two queues, no default", "[queues.batch]\n[queues.debug]\n",
			"error parsing [policy.jobspec.defaults.system] config table: queue is not set: RFC 33 says one of several named queues (batch, debug) MUST be the default"},
		{"many queues, no default", "[queues.a]\n[queues.b]\n[queues.c]\n[queues.d]\n[queues.e]\n[queues.f]\n[queues.g]\n",
			"error parsing [policy.jobspec.defaults.system] config table: queue is not set: RFC 33 says one of several named queues (a, b, c, d, e and 2 more) MUST be the default"},
		{"one queue, no default", "[queues.batch]\n", ""},
		{"unknown default", "[policy.jobspec.defaults.system]\nqueue = \"nosuch\"\n[queues.batch]\n",
			"error parsing [policy.jobspec.defaults.system] config table: default queue 'nosuch' is not configured"},
		{"default without queues", "[policy.jobspec.defaults.system]\nqueue = \"batch\"\n",
			"error parsing [policy.jobspec.defaults.system] config table: default queue 'batch' is not configured"},
		{"queue sets the default", "[queues.batch.policy.jobspec.defaults.system]\nqueue = \"batch\"\n",
			"error parsing [queues.batch.policy] config table: a queue's policy may not set jobspec.defaults.system.queue"},
		{"unknown parent", "[queues.x]\nparent = \"nosuch\"\n",
			"error parsing [queues.x] config table: parent queue 'nosuch' is not configured"},
		{"parent cycle", "[queues.a]\nparent = \"b\"\n[queues.b]\nparent = \"a\"\n",
			"error parsing [queues.a] config table: parent queues form a cycle: a -> b -> a"},
		{"bad duration", "[policy.limits]\nduration = \"1x\"\n",
			"error parsing [policy.limits] config table: duration: "},
		{"bad queue duration", "[queues.debug.policy.jobspec.defaults.system]\nduration = \"-1\"\n",
			"error parsing [queues.debug.policy.jobspec.defaults.system] config table: duration: "},
		{"bad size", "[queues.debug.policy.limits]\njob-size.max.ncores = -2\n",
			"error parsing [queues.debug.policy.limits] config table: job-size.max.ncores: size must be -1 (unlimited), or >= 0"},
		{"size of wrong type", "[policy.limits]\njob-size.max.ncores = \"2\"\n", "q.toml: [policy.limits.job-size.max]: ncores must be an integer"},
		{"memory limits and default", "[policy.jobspec.defaults.system]\nmemory = \"1G\"\n[policy.limits]\njob-size.max.memory = \"64G\"\njob-size.min.memory = \"512M\"\n[queues.big.policy.limits]\njob-size.max.memory = \"unlimited\"\n", ""},
		{"bad memory limit", "[queues.debug.policy.limits]\njob-size.max.memory = \"8Q\"\n",
			"error parsing [queues.debug.policy.limits] config table: job-size.max.memory: invalid memory size \"8Q\" (want a size such as 512M, 4G or 1.5T)"},
		{"memory limit in bytes", "[policy.limits]\njob-size.min.memory = 1024\n", "q.toml: [policy.limits.job-size.min]: memory must be a size string"},
		{"bad default memory", "[policy.jobspec.defaults.system]\nmemory = \"-1\"\n",
			"error parsing [policy.jobspec.defaults.system] config table: memory: invalid memory size \"-1\" (want a size such as 512M, 4G or 1.5T)"},
		{"unknown key", "[queues.debug]\nrequire = [\"x\"]\n", `[queues.debug]: unknown key "require"`},
		{"unknown policy key", "[queues.debug.policy.limits]\nwalltime = \"1h\"\n", `[queues.debug.policy.limits]: unknown key "walltime"`},
		{"bad requires", "[queues.debug]\nrequires = [\"a|b\"]\n", "error parsing [queues.debug] config table: requires: "},
		{"bad match policy", "[queues.debug.policy.scheduler]\nmatch-policy = \"any\"\n",
			`error parsing [queues.debug.policy.scheduler] config table: unknown match-policy "any"`},
		{"bad queue name", "[queues.\"a b\"]\n", "error parsing [queues.a b] config table: queue name"},
		{"bad user", "[policy.access]\nallow-user = [\"\"]\n", "error parsing [policy.access] config table: allow-user: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(write(t, dir, "q.toml", tt.content))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Load error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// The RFC 27 mode follows the policy unless set: limited=8 for fcfs (as
// sched-simple), unlimited for the backfilling ones (as Fluxion).
func TestModeOrDefault(t *testing.T) {
	for _, tc := range []struct{ policy, mode, want string }{
		{"", "", DefaultMode},
		{"fcfs", "", DefaultMode},
		{"easy", "", "unlimited"},
		{"conservative", "", "unlimited"},
		{"easy", "limited=2", "limited=2"},
	} {
		if got := (Sched{Policy: tc.policy, Mode: tc.mode}).ModeOrDefault(); got != tc.want {
			t.Errorf("policy %q mode %q: got %q, want %q", tc.policy, tc.mode, got, tc.want)
		}
	}
}

// agent-idle-timeout as the launcher tells it to the agents: negative for
// never, and never less than a millisecond.
func TestAgentIdleTimeout(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"", 10 * time.Minute}, // the default
		{"2s", 2 * time.Second},
		{"1.5m", 90 * time.Second},
		{"1h", time.Hour},
		{"0", -1},
		{"inf", -1},
		{"infinity", -1},
		{"36525d", 36525 * 24 * time.Hour}, // the longest allowed (fsd.MaxDuration)
		{"0.0000001s", time.Millisecond},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "a.toml")
		content := ""
		if tc.value != "" {
			content = "[exec]\nagent-idle-timeout = \"" + tc.value + "\"\n"
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path)
		if err != nil {
			t.Errorf("%q: %v", tc.value, err)
			continue
		}
		if got := cfg.AgentIdleTimeout(); got != tc.want {
			t.Errorf("%q: AgentIdleTimeout() = %v, want %v", tc.value, got, tc.want)
		}
	}
	if got := (&Config{}).AgentIdleTimeout(); got != 0 {
		t.Errorf("unchecked config: %v, want 0 (the agent's own default)", got)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sched.MatchPolicy != DefaultMatchPolicy || cfg.Sched.ModeOrDefault() != DefaultMode || cfg.Exec.Launcher != "local" || cfg.KillTimeoutSeconds() != 5 {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestDirectoryMerges(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "1-resources.toml", "[[resource.config]]\nhosts = \"a\"\ncores = \"0\"\n")
	write(t, dir, "2-more.toml", "[[resource.config]]\nhosts = \"b\"\ncores = \"0-1\"\n[sched]\nmode = \"unlimited\"\n")
	write(t, dir, "ignored.txt", "not toml at all [")
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Resource.Config) != 2 || cfg.Sched.Mode != "unlimited" {
		t.Errorf("merged = %+v", cfg)
	}
	// An unknown key is named with its file, not the directory.
	bad := write(t, dir, "4-typo.toml", "[quues.debug]\n")
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), bad+`: top level: unknown key "quues". Did you mean "queues"?`) {
		t.Errorf("unknown key in a directory's file: %v", err)
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "3-dup.toml", "[sched]\nmode = \"limited=2\"\n")
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "sched.mode is set twice") {
		t.Errorf("duplicate key across files: %v", err)
	}
}

func TestRejects(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"unknown table key", "[sched]\npolcy = \"fcfs\"\n", `[sched]: unknown key "polcy"`},
		{"unknown top level", "[bogus]\nx = 1\n", `top level: unknown key "bogus"`},
		// A misspelt table is named where it goes wrong, with the key it
		// was surely meant to be, in the file (issue 27: `[quues.batch]`
		// said `[quues]: unknown key "batch"`).
		{"misspelt table", "[quues.batch]\n", `a.toml: top level: unknown key "quues". Did you mean "queues"?`},
		{"misspelt key", "[sched]\nmatch-polcy = \"first-fit\"\n", `a.toml: [sched]: unknown key "match-polcy". Did you mean "match-policy"?`},
		{"misspelt queue key", "[queues.batch]\npolcy.limits.duration = \"1h\"\n", `a.toml: [queues.batch]: unknown key "polcy". Did you mean "policy"?`},
		{"a value's error names the file", "[sched]\nmatch-policy = \"random\"\n", `a.toml: error parsing [sched] config table: unknown match-policy "random"`},
		{"wrong type", "[access]\nallow-guest-user = \"yes\"\n", "a.toml: [access]: allow-guest-user must be a boolean (true or false)"},
		{"bad mode", "[sched]\nmode = \"limited=0\"\n", `error parsing [sched] config table: invalid mode "limited=0"`},
		{"bad match policy", "[sched]\nmatch-policy = \"random\"\n", `unknown match-policy "random"`},
		{"bad kill timeout", "[exec]\nkill-timeout = \"soon\"\n", "error parsing [exec] config table: kill-timeout"},
		// Every duration in the config is held to fsd's bound (issue 24).
		{"kill timeout beyond the bound", "[exec]\nkill-timeout = \"1e9d\"\n", "error parsing [exec] config table: kill-timeout: duration 1e9d is longer than the longest allowed, 100 years (36525d)"},
		{"guest reservation time beyond the bound", "[access]\nguest-reservation-time = \"1e308s\"\n", "guest-reservation-time: duration 1e308s is longer than the longest allowed"},
		{"queue limit beyond the bound", "[queues.batch]\npolicy.limits.duration = \"36526d\"\n", "[queues.batch.policy.limits] config table: duration: duration 36526d is longer than the longest allowed"},
		{"queue default beyond the bound", "[policy.jobspec.defaults.system]\nduration = \"1e300d\"\n", "duration: duration 1e300d is longer than the longest allowed"},
		{"bad agent idle timeout", "[exec]\nagent-idle-timeout = \"soon\"\n", "error parsing [exec] config table: agent-idle-timeout"},
		{"agent idle timeout beyond the bound", "[exec]\nagent-idle-timeout = \"1e300d\"\n", "error parsing [exec] config table: agent-idle-timeout: duration 1e300d is longer than the longest allowed"},
		{"bad launcher", "[exec]\nlauncher = \"pdsh\"\n", `unknown launcher "pdsh" (want local, ssh or command)`},
		{"ssh without hosts", "[exec]\nlauncher = \"ssh\"\n", `launcher ssh needs the hosts it reaches in [[resource.config]]`},
		{"bad entry launcher", "[[resource.config]]\nhosts = \"n1\"\nlauncher = \"rsh\"\n", `entry 0: unknown launcher "rsh" (want ssh or command)`},
		{"local beside ssh", "[[resource.config]]\nhosts = \"n1\"\nlauncher = \"ssh\"\n[[resource.config]]\nhosts = \"n2\"\n", `host n2 is this machine's (launcher local)`},
		{"two launchers for a host", "[[resource.config]]\nhosts = \"n1\"\nlauncher = \"ssh\"\n[[resource.config]]\nhosts = \"n1\"\nlauncher = \"command\"\n[exec]\ncommand = \"srun -w {host} {command}\"\n", `host n1 is reached by two launchers, ssh and command`},
		{"command without template", "[[resource.config]]\nhosts = \"n1\"\n[exec]\nlauncher = \"command\"\n", `launcher command needs command, a template`},
		{"bad template", "[[resource.config]]\nhosts = \"n1\"\n[exec]\nlauncher = \"command\"\ncommand = \"srun -w {hots} {command}\"\n", `command: the template names "{hots}": want {host}, {address} or {command}`},
		{"template without command", "[exec]\ncommand = \"srun -w {host}\"\n", `command: the template has no {command}`},
		{"bad host timeout", "[exec]\nhost-timeout = \"soon\"\n", "error parsing [exec] config table: host-timeout"},
		{"relative remote state dir", "[exec]\nremote-state-dir = \"state/{host}\"\n", `remote-state-dir: "state/{host}" is not an absolute path`},
		{"other placeholder in remote state dir", "[exec]\nremote-state-dir = \"/s/{rank}\"\n", `the only placeholder is {host}`},
		{"addresses count", "[[resource.config]]\nhosts = \"n[1-2]\"\n[exec]\nlauncher = \"ssh\"\n[[exec.hosts]]\nhost = \"n[1-2]\"\naddress = \"10.0.0.1\"\n", `hosts: entry 0: 2 hosts but 1 addresses`},
		{"address of an unknown host", "[[resource.config]]\nhosts = \"n[1-2]\"\n[exec]\nlauncher = \"ssh\"\n[[exec.hosts]]\nhost = \"m1\"\naddress = \"10.0.0.1\"\n", `hosts: entry 0: host m1 is not in [[resource.config]]`},
		{"two addresses", "[[resource.config]]\nhosts = \"n[1-2]\"\n[exec]\nlauncher = \"ssh\"\n[[exec.hosts]]\nhost = \"n1\"\naddress = \"a\"\n[[exec.hosts]]\nhost = \"n1\"\naddress = \"b\"\n", `hosts: host n1 has two addresses`},
		{"addresses for local hosts", "[[resource.config]]\nhosts = \"n1\"\n[[exec.hosts]]\nhost = \"n1\"\naddress = \"a\"\n", `hosts: no host is reached by the ssh or command launcher`},
		{"ssh options not strings", "[exec]\nssh-options = \"-v\"\n", `ssh-options must be an array of strings`},
		{"bad backup interval", "[store]\nbackup-interval = \"often\"\n", "error parsing [store] config table: backup-interval"},
		{"backup interval too short", "[store]\nbackup-interval = \"0.5s\"\n", `backup-interval: "0.5s" is outside 1s to 30d`},
		{"backup interval too long", "[store]\nbackup-interval = \"1e9d\"\n", `backup-interval: "1e9d" is outside 1s to 30d`},
		{"backup interval never", "[store]\nbackup-interval = \"inf\"\n", `backup-interval: "inf" is outside`},
		{"backup interval a number", "[store]\nbackup-interval = 60\n", "[store]: backup-interval must be a duration string"},
		{"bad memory reserve", "[resource]\nmemory-reserve = \"some\"\n", `error parsing [resource] config table: memory-reserve: invalid memory size "some"`},
		{"memory reserve a number", "[resource]\nmemory-reserve = 512\n", "[resource]: memory-reserve must be a memory size string"},
		{"memory a number", "[[resource.config]]\nhosts = \"n0\"\ncores = \"0\"\nmemory = 4\n", "memory must be a memory size string"},
		{"not toml", "[sched\n", "a.toml:"},
		{"entry without hosts", "[[resource.config]]\ncores = \"0\"\n", "entry 0 has no hosts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, t.TempDir(), "a.toml", tc.content)
			_, err := Load(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load err = %v, want it to contain %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestBackupInterval(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    time.Duration
	}{
		{"", 30 * time.Minute},
		{"[store]\nbackup-interval = \"0\"\n", 0},
		{"[store]\nbackup-interval = \"90s\"\n", 90 * time.Second},
		{"[store]\nbackup-interval = \"2h\"\n", 2 * time.Hour},
	} {
		cfg, err := Load(write(t, t.TempDir(), "a.toml", tc.content))
		if err != nil {
			t.Fatalf("%q: %v", tc.content, err)
		}
		if got, err := cfg.BackupInterval(); err != nil || got != tc.want {
			t.Errorf("%q: backup interval %v, %v; want %v", tc.content, got, err, tc.want)
		}
	}
}

func TestMemoryReserve(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    resource.MemoryReserve
	}{
		{"", resource.MemoryReserve{}},
		{"[resource]\nmemory-reserve = \"0\"\n", resource.MemoryReserve{Set: true}},
		{"[resource]\nmemory-reserve = \"2G\"\n", resource.MemoryReserve{Bytes: 2 << 30, Set: true}},
		{"[resource]\nmemory-reserve = \"512\"\n", resource.MemoryReserve{Bytes: 512 << 20, Set: true}},
	} {
		cfg, err := Load(write(t, t.TempDir(), "a.toml", tc.content))
		if err != nil {
			t.Fatalf("%q: %v", tc.content, err)
		}
		if got := cfg.Resource.Reserve(); got != tc.want {
			t.Errorf("%q: reserve %+v, want %+v", tc.content, got, tc.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{{"unlimited", 0, true}, {"limited=8", 8, true}, {"limited=2147483647", 2147483647, true}, {"limited=0", 0, false}, {"limited=08", 0, false}, {"limited", 0, false}, {"single", 0, false}} {
		got, err := ParseMode(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseMode(%q) = %d, %v", tc.in, got, err)
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add("[[resource.config]]\nhosts = \"n[0-1]\"\ncores = \"0-3\"\n[sched]\nmode = \"limited=8\"\n")
	f.Add("[exec]\nkill-timeout = \"1.5m\"\n")
	f.Add("[sched\n")
	f.Add("[policy.jobspec.defaults.system]\nmemory = \"1G\"\n[policy.limits]\njob-size.max.memory = \"8G\"\njob-size.min.memory = \"-1\"\n[queues.a.policy.jobspec.defaults.system]\nmemory = \"0\"\n")
	f.Add("[policy.jobspec.defaults.system]\nqueue = \"batch\"\nduration = \"1h\"\n[policy.limits]\nduration = \"4h\"\njob-size.max.nnodes = 10\njob-size.min.ncores = -1\n[queues.batch]\nrequires = [\"batch\"]\n[queues.debug]\nrequires = [\"debug\"]\n[queues.debug.policy.limits]\nduration = \"0\"\n[queues.debug.policy.access]\nallow-user = [\"alice\"]\nallow-group = [\"wheel\"]\n[queues.x]\nparent = \"batch\"\n[queues.x.policy.scheduler]\nmatch-policy = \"first-fit\"\n")
	f.Add("[queues.a]\nparent = \"b\"\n[queues.b]\nparent = \"a\"\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(dir, "fuzz.toml")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(p)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if _, err := ParseMode(cfg.Sched.ModeOrDefault()); err != nil {
			t.Fatalf("accepted config has a bad mode: %v", err)
		}
		if _, _, err := cfg.Policies(); err != nil {
			t.Fatalf("accepted config has bad policies: %v", err)
		}
		// The store keeps the queue tables as JSON: what was accepted must
		// come back as the same queues.
		b, err := json.Marshal(cfg.QueueSet)
		if err != nil {
			t.Fatalf("queue set does not marshal: %v", err)
		}
		var back queue.Set
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("queue set does not unmarshal: %v\n%s", err, b)
		}
		if !slices.Equal(back.Names(), cfg.QueueSet.Names()) || back.Default() != cfg.QueueSet.Default() {
			t.Fatalf("queue set changed in the store: %v/%q, want %v/%q", back.Names(), back.Default(), cfg.QueueSet.Names(), cfg.QueueSet.Default())
		}
	})
}
