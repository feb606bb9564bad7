package fluxq

import (
	"strconv"
	"testing"
	"time"
)

// A begin time reads as a time: of day when today, with the date when
// not, with the year when not this one; other dependencies stay listed.
func TestDependsInfo(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	now := time.Date(2026, 11, 26, 13, 0, 0, 0, loc)
	at := func(y int, m time.Month, d, h, min, s int) string {
		return "begin-time=" + ftoa(float64(time.Date(y, m, d, h, min, s, 0, loc).Unix())+0.25)
	}
	tests := []struct {
		deps []string
		want string
	}{
		{[]string{at(2026, 11, 26, 14, 5, 0)}, "begins 14:05"},
		{[]string{at(2026, 11, 26, 14, 5, 30)}, "begins 14:05:30"},
		{[]string{at(2026, 11, 27, 9, 0, 0)}, "begins Nov27 09:00"},
		{[]string{at(2099, 1, 2, 14, 5, 0)}, "begins 2099-01-02 14:05"},
		{[]string{"afterok=ƒ2a", at(2026, 11, 26, 14, 5, 0)}, "depends:afterok=ƒ2a, begins 14:05"},
		{[]string{"afterok=ƒ2a", "afterany=ƒ3b"}, "depends:afterok=ƒ2a,afterany=ƒ3b"},
		// Stored while fluxsched was down: no job manager has seen it
		// (issue 27: it listed a bare "depends:").
		{nil, "waiting for fluxsched"},
	}
	for _, tc := range tests {
		if got := dependsInfo(tc.deps, now); got != tc.want {
			t.Errorf("dependsInfo(%q) = %q, want %q", tc.deps, got, tc.want)
		}
	}
}

// "insufficient resources" names the reservations a job targets; other
// reasons are left as the scheduler words them.
func TestInTargets(t *testing.T) {
	tests := []struct {
		reason  string
		targets []string
		want    string
	}{
		{"insufficient resources", nil, "insufficient resources"},
		{"insufficient resources", []string{"default"}, "insufficient resources"},
		{"insufficient resources", []string{"r1"}, "insufficient resources in reservation r1"},
		{"insufficient resources", []string{"r1", "r2"}, "insufficient resources in reservations r1,r2"},
		{"insufficient resources", []string{"r1", "default"}, "insufficient resources in reservation r1 and the default session"},
		{"target r1 has 1 nodes, needs 2", []string{"r1"}, "target r1 has 1 nodes, needs 2"},
	}
	for _, tc := range tests {
		if got := inTargets(tc.reason, tc.targets); got != tc.want {
			t.Errorf("inTargets(%q, %q) = %q, want %q", tc.reason, tc.targets, got, tc.want)
		}
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
