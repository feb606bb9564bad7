package cloexec

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestInherited opens descriptors as an inherited one would be (without
// close-on-exec), and checks that a child started after Inherited sees
// none of them, while what it is given explicitly still reaches it.
func TestInherited(t *testing.T) {
	path := t.TempDir() + "/secret"
	if err := os.WriteFile(path, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var all []int
	t.Cleanup(func() {
		for _, fd := range all {
			unix.Close(fd)
		}
	})
	open := func() (fds []string) {
		for range 3 {
			fd, err := unix.Open(path, unix.O_RDONLY, 0) // no O_CLOEXEC
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, fd)
			fds = append(fds, strconv.Itoa(fd))
		}
		return fds
	}
	for _, tc := range []struct {
		name  string
		seal  func() error // nil: nothing marked
		extra bool         // an ExtraFiles descriptor, passed as fd 3
	}{
		{name: "before", seal: nil},
		{name: "close_range", seal: Inherited},
		{name: "proc listing", seal: eachListed},
		{name: "explicit", seal: Inherited, extra: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Fresh descriptors for each case, as a process inherits them.
			leaked := open()
			var wantIn, wantNo []string
			if tc.seal == nil {
				wantIn = leaked
			} else {
				wantNo = leaked
			}
			if tc.extra {
				wantIn = append(wantIn, "3")
			}
			if tc.seal != nil {
				if err := tc.seal(); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sh", "-c", "ls /proc/$$/fd")
			if tc.extra {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cmd.ExtraFiles = []*os.File{f}
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Fields(string(out))
			for _, w := range wantIn {
				if !slices.Contains(got, w) {
					t.Errorf("child's descriptors %v lack %s", got, w)
				}
			}
			for _, w := range wantNo {
				if slices.Contains(got, w) {
					t.Errorf("child's descriptors %v include inherited %s", got, w)
				}
			}
		})
	}
}
