package fluxsched

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMayStop: only the state directory's owner and root may stop an
// instance's agents; anyone else is refused in one line naming the owner.
func TestMayStop(t *testing.T) {
	dir := t.TempDir()
	uid := uint32(os.Getuid())
	other := uid + 4711
	for _, tc := range []struct {
		name    string
		dir     string
		me      uint32
		refused bool
	}{
		{"the owner", dir, uid, false},
		{"root", dir, 0, false},
		{"another user", dir, other, uid != 0 || other != 0},
		{"no instance", filepath.Join(dir, "none"), other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mayStop(tc.dir, tc.me)
			if (err != nil) != tc.refused {
				t.Fatalf("mayStop(%s, %d) = %v, want refused=%v", tc.dir, tc.me, err, tc.refused)
			}
			if err != nil && (!strings.HasPrefix(err.Error(), "permission denied: only the instance owner (") || strings.Contains(err.Error(), "\n")) {
				t.Errorf("message %q", err)
			}
		})
	}
}
