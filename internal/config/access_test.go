package config

import (
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/reservation"
)

// [access] guest-reserved-nodes and guest-reservation-time: none and no
// bound by default; bad values are one line naming the table and key.
func TestGuestLimits(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          reservation.Limits
		err           string
	}{
		{"default", "", reservation.Limits{}, ""},
		{"set", "[access]\nguest-reserved-nodes = 4\nguest-reservation-time = \"2h\"\n", reservation.Limits{Nodes: 4, Time: 7200}, ""},
		{"inf is no bound", "[access]\nguest-reserved-nodes = 1\nguest-reservation-time = \"inf\"\n", reservation.Limits{Nodes: 1}, ""},
		{"negative", "[access]\nguest-reserved-nodes = -1\n", reservation.Limits{}, "error parsing [access] config table: guest-reserved-nodes: -1 is negative"},
		{"bad time", "[access]\nguest-reservation-time = \"soon\"\n", reservation.Limits{}, "error parsing [access] config table: guest-reservation-time:"},
		{"zero time", "[access]\nguest-reservation-time = \"0\"\n", reservation.Limits{}, "guest-reservation-time: 0 would forbid every reservation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadAccess(t, tc.content, tc.err)
			if cfg == nil {
				return
			}
			if got := cfg.Access.GuestLimits(); got != tc.want {
				t.Errorf("GuestLimits = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// [access] guest-max-active-jobs: 10,000 by default, 0 is no cap, a
// negative value is refused in one line naming the key.
func TestGuestMaxActive(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          int
		err           string
	}{
		{"default", "", DefaultGuestMaxActiveJobs, ""},
		{"default is 10000", "[access]\nallow-guest-user = true\n", 10000, ""},
		{"set", "[access]\nguest-max-active-jobs = 5\n", 5, ""},
		{"zero is no cap", "[access]\nguest-max-active-jobs = 0\n", 0, ""},
		{"negative", "[access]\nguest-max-active-jobs = -1\n", 0, "error parsing [access] config table: guest-max-active-jobs: -1 is negative"},
		{"not a number", "[access]\nguest-max-active-jobs = \"many\"\n", 0, "guest-max-active-jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadAccess(t, tc.content, tc.err)
			if cfg == nil {
				return
			}
			if got := cfg.Access.GuestMaxActive(); got != tc.want {
				t.Errorf("GuestMaxActive = %d, want %d", got, tc.want)
			}
		})
	}
}

// loadAccess loads a config of content, and checks that it is refused in
// one line holding wantErr when that is set (then nil is returned).
func loadAccess(t *testing.T, content, wantErr string) *Config {
	t.Helper()
	cfg, err := Load(write(t, t.TempDir(), "a.toml", content))
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Load err = %v, want one line with %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
