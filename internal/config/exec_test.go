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
