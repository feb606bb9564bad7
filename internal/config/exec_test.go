package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/launcher"
)

// The hosts of a config with launchers for other machines: in rank
// order, each with its launcher and its address from [[exec.hosts]].
func TestLauncherHosts(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		kind       string
		hosts      []launcher.RemoteHost
	}{
		{"local", "[[resource.config]]\nhosts = \"n[1-2]\"\n", launcher.Local, nil},
		{"ssh with addresses", `[[resource.config]]
hosts = "n[1-3]"
[exec]
launcher = "ssh"
[[exec.hosts]]
host = "n[1-2]"
address = "127.0.0.[2-3]"
`, launcher.SSH, []launcher.RemoteHost{{Name: "n1", Address: "127.0.0.2", Launcher: "ssh"}, {Name: "n2", Address: "127.0.0.3", Launcher: "ssh"}, {Name: "n3", Launcher: "ssh"}}},
		{"per entry", `[[resource.config]]
hosts = "a1"
launcher = "command"
[[resource.config]]
hosts = "b1"
launcher = "ssh"
[exec]
command = "srun -w {host} {command}"
`, launcher.Command, []launcher.RemoteHost{{Name: "a1", Launcher: "command"}, {Name: "b1", Launcher: "ssh"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.toml")
			os.WriteFile(path, []byte(tc.toml), 0o600)
			cfg, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			kind, r, err := cfg.Launcher()
			if err != nil || kind != tc.kind || !reflect.DeepEqual(r.Hosts, tc.hosts) {
				t.Errorf("Launcher() = %q, %+v; want %q, %+v", kind, r.Hosts, tc.kind, tc.hosts)
			}
		})
	}
}

// The CPUs that more than one local host names: those of hosts laid
// over the same cores, none of hosts given cores apart, none with a
// launcher for other machines.
func TestSharedCPUs(t *testing.T) {
	for _, tc := range []struct {
		name, toml, want string
	}{
		{"no config: this machine alone", "", ""},
		{"one host", "[[resource.config]]\nhosts = \"n1\"\ncores = \"0-3\"\n", ""},
		{"local hosts on the same cores", "[[resource.config]]\nhosts = \"n[0-3]\"\ncores = \"0-1\"\n", "0-1"},
		{"hosts given cores apart", "[[resource.config]]\nhosts = \"n0\"\ncores = \"0-1\"\n[[resource.config]]\nhosts = \"n1\"\ncores = \"2-3\"\n", ""},
		{"partly over each other", "[[resource.config]]\nhosts = \"n0\"\ncores = \"0-2\"\n[[resource.config]]\nhosts = \"n1\"\ncores = \"2-3\"\n", "2"},
		{"one host in two entries", "[[resource.config]]\nhosts = \"n0\"\ncores = \"0-1\"\n[[resource.config]]\nhosts = \"n0\"\ngpus = \"0\"\ncores = \"1\"\n", ""},
		{"past a CPU mask", "[[resource.config]]\nhosts = \"n[0-1]\"\ncores = \"1022-1100\"\n", "1022-1023"},
		{"other machines", "[[resource.config]]\nhosts = \"n[1-2]\"\ncores = \"0-1\"\n[exec]\nlauncher = \"ssh\"\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.toml")
			os.WriteFile(path, []byte(tc.toml), 0o600)
			cfg, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.SharedCPUs().String(); got != tc.want {
				t.Errorf("SharedCPUs() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostTimeout(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{{"", 5 * time.Minute}, {"30s", 30 * time.Second}, {"0", 0}, {"inf", 0}} {
		cfg := &Config{Exec: Exec{HostTimeout: tc.value}}
		if got := cfg.HostTimeout(); got != tc.want {
			t.Errorf("%q: HostTimeout() = %v, want %v", tc.value, got, tc.want)
		}
	}
}
