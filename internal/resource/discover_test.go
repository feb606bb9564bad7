package resource

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestDiscover(t *testing.T) {
	tests := []struct {
		name string
		fs   fstest.MapFS
		want string // rset summary
	}{
		{
			name: "online file",
			fs:   fstest.MapFS{"sys/devices/system/cpu/online": file("0-7\n")},
			want: "rank0/core[0-7]",
		},
		{
			name: "offline cpus are left out of the online file",
			fs:   fstest.MapFS{"sys/devices/system/cpu/online": file("0,2-3\n")},
			want: "rank0/core[0,2-3]",
		},
		{
			name: "no online file: count cpuN directories",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/cpu0/topology/core_id": file("0\n"),
				"sys/devices/system/cpu/cpu1/online":           file("1\n"),
				"sys/devices/system/cpu/cpu2/online":           file("0\n"), // offline
				"sys/devices/system/cpu/cpu3/online":           file("1\n"),
				"sys/devices/system/cpu/cpu10/online":          file("1\n"),
				"sys/devices/system/cpu/cpufreq/policy0":       file(""),
				"sys/devices/system/cpu/cpuidle/current":       file(""),
				"sys/devices/system/cpu/possible":              file("0-63\n"),
			},
			want: "rank0/core[0-1,3,10]",
		},
		{
			name: "nvidia gpus from proc",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/online":                    file("0-3\n"),
				"proc/driver/nvidia/gpus/0000:3b:00.0/information": file("Model: X\n"),
				"proc/driver/nvidia/gpus/0000:86:00.0/information": file("Model: X\n"),
				"dev/nvidia0":                file(""),
				"dev/nvidia5":                file(""),
				"proc/driver/nvidia/version": file("NVRM\n"),
				"proc/driver/nvidia/gpus/0000:af:00.0/information":      file("Model: X\n"),
				"proc/driver/nvidia/gpus/0000:d8:00.0/information":      file("Model: X\n"),
				"proc/driver/nvidia/gpus/0000:d8:00.0/registry":         file(""),
				"proc/driver/nvidia/gpus/0000:af:00.0/power":            file(""),
				"proc/driver/nvidia/gpus/0000:3b:00.0/power":            file(""),
				"proc/driver/nvidia/gpus/0000:86:00.0/registry":         file(""),
				"proc/driver/nvidia/gpus/0000:86:00.0/information.orig": file(""),
			},
			want: "rank0/core[0-3],gpu[0-3]",
		},
		{
			name: "nvidia gpus from dev",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/online": file("0-1\n"),
				"dev/nvidia0":                   file(""),
				"dev/nvidia1":                   file(""),
				"dev/nvidiactl":                 file(""),
				"dev/nvidia-uvm":                file(""),
				"dev/nvidia-caps/nvidia-cap1":   file(""),
				"dev/null":                      file(""),
			},
			want: "rank0/core[0-1],gpu[0-1]",
		},
		{
			name: "no gpus",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/online": file("0\n"),
				"dev/nvidiactl":                 file(""),
				"dev/null":                      file(""),
			},
			want: "rank0/core0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Discover(tc.fs, "myhost")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.String()); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if got := r.Nodelist().String(); got != "myhost" {
				t.Errorf("nodelist = %q, want myhost", got)
			}
		})
	}
}

func TestDiscoverErrors(t *testing.T) {
	tests := []struct {
		name, host string
		fs         fstest.MapFS
		want       string
	}{
		{"empty fs", "h", fstest.MapFS{}, "discover: no cpu information"},
		{"bad online file", "h", fstest.MapFS{"sys/devices/system/cpu/online": file("zero\n")}, "discover: /sys/devices/system/cpu/online:"},
		{"no cpus", "h", fstest.MapFS{"sys/devices/system/cpu/online": file("\n")}, "discover: no online cpus found"},
		{"bad hostname", "a b", fstest.MapFS{"sys/devices/system/cpu/online": file("0\n")}, `discover: invalid hostname "a b"`},
		{"empty hostname", "", fstest.MapFS{"sys/devices/system/cpu/online": file("0\n")}, `discover: invalid hostname ""`},
		{"huge online file", "h", fstest.MapFS{"sys/devices/system/cpu/online": file(strings.Repeat("0", 1<<20))}, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Discover(tc.fs, tc.host)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
