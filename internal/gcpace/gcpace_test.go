package gcpace

import "testing"

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 1600},
		{1 << 20, 1600},       // 16 MiB of room past 1 MiB is 1,600%
		{512 << 10, 1600},     // capped
		{4 << 20, 400},        // 16 MiB past 4 MiB
		{8 << 20, 200},        // 16 MiB past 8 MiB
		{16 << 20, 100},       // the default from here on
		{1 << 30, 100},        // never below the default
		{(16 << 20) / 3, 300}, // rounds down
	} {
		if got := Percent(tc.live); got != tc.want {
			t.Errorf("Percent(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}
