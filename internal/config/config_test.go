package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
		Exec:     Exec{Launcher: "local", KillTimeout: "2s"},
		Access:   Access{AllowGuestUser: true},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sched.MatchPolicy != DefaultMatchPolicy || cfg.Sched.Mode != DefaultMode || cfg.Exec.Launcher != "local" || cfg.KillTimeoutSeconds() != 5 {
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
		{"wrong type", "[access]\nallow-guest-user = \"yes\"\n", "[access.allow-guest-user]"},
		{"bad mode", "[sched]\nmode = \"limited=0\"\n", `error parsing [sched] config table: invalid mode "limited=0"`},
		{"bad match policy", "[sched]\nmatch-policy = \"random\"\n", `unknown match-policy "random"`},
		{"bad kill timeout", "[exec]\nkill-timeout = \"soon\"\n", "error parsing [exec] config table: kill-timeout"},
		{"bad launcher", "[exec]\nlauncher = \"ssh\"\n", `unknown launcher "ssh"`},
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
		if _, err := ParseMode(cfg.Sched.Mode); err != nil {
			t.Fatalf("accepted config has a bad mode: %v", err)
		}
	})
}
