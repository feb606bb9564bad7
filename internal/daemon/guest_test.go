package daemon

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docs/architecture.md: guest access is refused unless fluxsched runs as root;
// with it, others may pass through the state and jobs directories (to the
// socket and their own job folders) but not list them, and the store
// stays private.
func TestGuestAccess(t *testing.T) {
	tests := []struct {
		name    string
		euid    int
		allow   bool
		missing bool // the jobs directory does not exist
		wantErr string
		// Modes after the call, of the state dir, jobs dir and store.
		want [3]fs.FileMode
	}{
		{name: "not allowed, not root", euid: 1000, want: [3]fs.FileMode{0o700, 0o700, 0o600}},
		{name: "not allowed, root", euid: 0, want: [3]fs.FileMode{0o700, 0o700, 0o600}},
		{name: "allowed, not root", euid: 1000, allow: true,
			wantErr: "[access] allow-guest-user requires fluxsched to run as root",
			want:    [3]fs.FileMode{0o700, 0o700, 0o600}},
		{name: "allowed, root", euid: 0, allow: true, want: [3]fs.FileMode{0o711, 0o711, 0o600}},
		{name: "allowed, root, no jobs directory", euid: 0, allow: true, missing: true,
			wantErr: "jobs directory: chmod ",
			want:    [3]fs.FileMode{0o711, 0, 0o600}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			jobs := filepath.Join(state, "jobs")
			store := filepath.Join(state, "fluxq.db")
			if err := os.Mkdir(state, 0o700); err != nil {
				t.Fatal(err)
			}
			if !tc.missing {
				if err := os.Mkdir(jobs, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(store, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			err := guestAccessAs(tc.euid, tc.allow, state, jobs)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
			}
			var got [3]fs.FileMode
			for i, p := range []string{state, jobs, store} {
				if fi, err := os.Stat(p); err == nil {
					got[i] = fi.Mode().Perm()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("modes of state, jobs, store (-want +got):\n%s", diff)
			}
		})
	}
}

// guestAccess itself asks the process whether it runs as root.
func TestGuestAccessEuid(t *testing.T) {
	dir := t.TempDir()
	err := guestAccess(true, dir, dir)
	if root := os.Geteuid() == 0; root != (err == nil) {
		t.Errorf("as euid %d: %v", os.Geteuid(), err)
	}
}
