package fsd

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCheckDuration(t *testing.T) {
	for _, tc := range []struct {
		given string
		sec   float64
		bad   bool
	}{
		{"0", 0, false},
		{"inf", math.Inf(1), false},
		{"36525d", 36525 * day, false},
		{"36525.0001d", 36525.0001 * day, true},
		{"1e9d", 1e9 * day, true},
		{"1e308s", 1e308, true},
		{strings.Repeat("9", 100) + "s", 1e100, true},
	} {
		err := CheckDuration(tc.given, tc.sec)
		if (err != nil) != tc.bad {
			t.Errorf("CheckDuration(%q) = %v, want refused: %v", tc.given, err, tc.bad)
			continue
		}
		if err != nil && len(err.Error()) > 140 {
			t.Errorf("CheckDuration(%q): message of %d bytes: %s", tc.given, len(err.Error()), err)
		}
	}
	err := CheckDuration("1e9d", 1e9*day)
	if want := "duration 1e9d is longer than the longest allowed, 100 years (36525d)"; err == nil || err.Error() != want {
		t.Errorf("CheckDuration(1e9d) = %v, want %q", err, want)
	}
}

func TestParseBounded(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit bool // ParseTimeLimitBounded
		want  float64
		err   string
	}{
		{"36525d", false, MaxDuration, ""},
		{"inf", false, math.Inf(1), ""},
		{"1e9d", false, 0, "longer than the longest allowed"},
		{"1e300d", true, 0, "duration 1e300d is longer"},
		{"1e20", true, 0, "duration 1e20 is longer"},
		{"52596000", true, MaxDuration, ""}, // minutes
		{"-1s", false, 0, "must not be negative"},
	} {
		parse := ParseBounded
		if tc.limit {
			parse = ParseTimeLimitBounded
		}
		got, err := parse(tc.s)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("parse(%q): %v", tc.s, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parse(%q) = %v, %v; want error containing %q", tc.s, got, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("parse(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestCheckTime(t *testing.T) {
	if err := CheckTime("x", LatestTime); err != nil {
		t.Errorf("CheckTime(LatestTime): %v", err)
	}
	for _, v := range []float64{LatestTime + 1, 1e300, math.Inf(1)} {
		if err := CheckTime("x", v); err == nil {
			t.Errorf("CheckTime(%v) accepted", v)
		}
	}
	err := CheckTime("9999-12-31", 253402214400)
	if want := "time 9999-12-31 is later than the latest allowed, 9000-01-01T00:00:00Z"; err == nil || err.Error() != want {
		t.Errorf("CheckTime = %v, want %q", err, want)
	}
}

// TestBoundsEncode is why the bounds are what they are: the latest time
// plus the longest duration is a time every encoder of a job's record
// prints, in every time zone, and LatestTime is the instant it names.
func TestBoundsEncode(t *testing.T) {
	latest := time.Unix(LatestTime, 0).UTC()
	if got := latest.Format(time.RFC3339); got != LatestTimeText {
		t.Errorf("LatestTime is %s, its text says %s", got, LatestTimeText)
	}
	if Duration(MaxDuration) == time.Duration(math.MaxInt64) {
		t.Errorf("MaxDuration saturates a time.Duration")
	}
	end := latest.Add(Duration(MaxDuration))
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600)} {
		if _, err := json.Marshal(end.In(loc)); err != nil {
			t.Errorf("the latest end in %s does not encode: %v", loc, err)
		}
	}
}

func TestTime(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want time.Time
	}{
		{0, time.Unix(0, 0)},
		{1.5, time.Unix(1, 5e8)},
		{LatestTime, time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{32503680000, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}, // past UnixNano's range
		{math.NaN(), time.Unix(0, 0)},
		{math.Inf(1), time.Unix(1<<62, 0)},
	} {
		if got := Time(tc.in); !got.Equal(tc.want) {
			t.Errorf("Time(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseBounded: whatever a user writes, the bounded parsers accept
// exactly what Parse (or ParseTimeLimit) accepts within MaxDuration, the
// bound's refusal is one line of bounded length, and what they accept is a
// duration whose end, from the latest time, encodes.
func FuzzParseBounded(f *testing.F) {
	for _, s := range []string{"36525d", "36525.0000001d", "1e9d", "1e300d", "1e308s", "inf", "52596000", "52596001", "0", strings.Repeat("9", 200) + "s"} {
		f.Add(s)
	}
	latest := time.Unix(LatestTime, 0)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []struct {
			bounded, plain func(string) (float64, error)
		}{{ParseBounded, Parse}, {ParseTimeLimitBounded, ParseTimeLimit}} {
			v, err := p.bounded(s)
			w, perr := p.plain(s)
			switch {
			case perr != nil && err == nil:
				t.Fatalf("%q: bounded accepts %v, plain refuses: %v", s, v, perr)
			case perr == nil && (w <= MaxDuration || math.IsInf(w, 1)) && (err != nil || v != w):
				t.Fatalf("%q: plain %v, bounded %v, %v", s, w, v, err)
			case perr == nil && w > MaxDuration && !math.IsInf(w, 1) && err == nil:
				t.Fatalf("%q: %v past the bound accepted", s, w)
			case perr == nil && err != nil && (strings.ContainsAny(err.Error(), "\n\r") || len(err.Error()) > 200):
				t.Fatalf("%q: the bound's refusal is not one short line: %q", s, err)
			case err == nil && !math.IsInf(v, 1):
				if _, jerr := json.Marshal(latest.Add(Duration(v))); jerr != nil {
					t.Fatalf("%q: the latest end does not encode: %v", s, jerr)
				}
			}
		}
	})
}
