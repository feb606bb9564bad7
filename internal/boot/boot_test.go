package boot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestID(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
		missing             bool
	}{
		{name: "kernel form", content: "4e1a8f3c-2b6d-4a3e-9c1f-0d2e3f4a5b6c\n", want: "4e1a8f3c-2b6d-4a3e-9c1f-0d2e3f4a5b6c"},
		{name: "no newline", content: "abc", want: "abc"},
		{name: "missing", missing: true, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if !tc.missing {
				if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old := idPath
			idPath = p
			defer func() { idPath = old }()
			if got := ID(); got != tc.want {
				t.Errorf("ID() = %q, want %q", got, tc.want)
			}
		})
	}
}

// The real file, where there is one, gives the same id twice.
func TestIDStable(t *testing.T) {
	a := ID()
	if a == "" {
		t.Skip("this kernel has no boot id")
	}
	if b := ID(); a != b {
		t.Errorf("boot id changed within a boot: %q then %q", a, b)
	}
}
