package agentproto

import "testing"

func TestMemoryStatus(t *testing.T) {
	tests := []struct {
		how, why         string
		line             string
		wantHow, wantWhy string
	}{
		{"cgroup v1 (memory)", "", "enforced: cgroup v1 (memory)\n", "cgroup v1 (memory)", ""},
		{"", "no cgroup memory controller: not mounted", "not enforced: no cgroup memory controller: not mounted\n", "", "no cgroup memory controller: not mounted"},
		{"", "two\nlines", "not enforced: two lines\n", "", "two lines"},
		{"", "", "not enforced: unknown\n", "", "unknown"},
	}
	for _, tc := range tests {
		b := FormatMemoryStatus(tc.how, tc.why)
		if string(b) != tc.line {
			t.Errorf("FormatMemoryStatus(%q, %q) = %q, want %q", tc.how, tc.why, b, tc.line)
		}
		how, why, ok := ParseMemoryStatus(b)
		if !ok || how != tc.wantHow || why != tc.wantWhy {
			t.Errorf("ParseMemoryStatus(%q) = %q, %q, %v", b, how, why, ok)
		}
	}
	for _, bad := range []string{"", "\n", "enforced: \n", "maybe\n", "not enforced:\n"} {
		if how, why, ok := ParseMemoryStatus([]byte(bad)); ok {
			t.Errorf("ParseMemoryStatus(%q) = %q, %q, true; want not ok", bad, how, why)
		}
	}
}

func FuzzParseMemoryStatus(f *testing.F) {
	f.Add([]byte("enforced: cgroup v1 (memory)\n"))
	f.Add([]byte("not enforced: no cgroup memory controller\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		how, why, ok := ParseMemoryStatus(b)
		if ok && (how == "") == (why == "") {
			t.Fatalf("ParseMemoryStatus(%q) = %q, %q: exactly one must be set", b, how, why)
		}
	})
}
