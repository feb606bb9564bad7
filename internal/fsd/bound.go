package fsd

import (
	"fmt"
	"math"
	"time"
)

// The bounds on every duration and time fluxq takes from a user: a time
// limit, a begin time, a reservation's time, a duration in the config.
// They are defined here, the lowest package that reads durations, so that
// the CLI, the jobspec validation the server runs on every submission, the
// reservation rules and the config all refuse the same values. Beyond
// them a value would reach a time.Time past year 9999, which neither
// encoding/json nor RFC 3339 can print: a job's record that cannot be
// written (issue 24).

// MaxDuration is the longest duration fluxq takes from a user, in
// seconds: 100 years of 365.25 days. It fits a time.Duration (about 292
// years), so no conversion of it saturates.
const MaxDuration = 100 * 365.25 * day

// LatestTime is the latest time fluxq takes from a user, in seconds since
// the Unix epoch: 9000-01-01T00:00:00Z. A job that begins then and runs
// MaxDuration still ends centuries before year 9999, whatever the time
// zone.
const LatestTime = 221845392000

// The bounds as a user reads them, for messages. FSD has no unit of
// years, so the duration is said in days too: a value a user can give
// back.
const (
	MaxDurationText = "100 years (36525d)"
	LatestTimeText  = "9000-01-01T00:00:00Z"
)

// CheckDuration refuses a duration sec longer than MaxDuration, naming it
// as the user wrote it (given). Infinity passes: fluxq reads it as no
// limit wherever it takes one. NaN and negative values are the parsers'
// to refuse.
func CheckDuration(given string, sec float64) error {
	if sec > MaxDuration && !math.IsInf(sec, 1) {
		return fmt.Errorf("duration %s is longer than the longest allowed, %s", shorten(given), MaxDurationText)
	}
	return nil
}

// CheckTime refuses a time t (seconds since the epoch) later than
// LatestTime, naming it as the user wrote it (given).
func CheckTime(given string, t float64) error {
	if t > LatestTime || math.IsInf(t, 1) {
		return fmt.Errorf("time %s is later than the latest allowed, %s", shorten(given), LatestTimeText)
	}
	return nil
}

// ParseBounded is Parse, refusing what CheckDuration refuses: for a
// duration a user gives (a config key, a command's option).
func ParseBounded(s string) (float64, error) {
	d, err := Parse(s)
	if err != nil {
		return 0, err
	}
	if err := CheckDuration(s, d); err != nil {
		return 0, err
	}
	return d, nil
}

// ParseTimeLimitBounded is ParseTimeLimit, refusing what CheckDuration
// refuses: a job's time limit as submit and run take it.
func ParseTimeLimitBounded(s string) (float64, error) {
	d, err := ParseTimeLimit(s)
	if err != nil {
		return 0, err
	}
	if err := CheckDuration(s, d); err != nil {
		return 0, err
	}
	return d, nil
}

// shorten keeps an error one line whatever the user gave: the value is
// repeated as written, unquoted, up to maxQuoted bytes.
func shorten(s string) string {
	if len(s) > maxQuoted {
		return s[:maxQuoted] + "..."
	}
	return s
}

// Time converts t, seconds since the Unix epoch, to a time.Time, for any
// time up to LatestTime and beyond: time.Unix(0, t*1e9), which callers
// wrote, wraps around past year 2262 (a begin time in year 3000 came out
// in 1677, due at once). NaN is the epoch; infinities are the latest or
// earliest second a float64 of seconds can name within int64.
func Time(t float64) time.Time {
	switch {
	case math.IsNaN(t):
		return time.Unix(0, 0)
	case t >= 1<<62:
		return time.Unix(1<<62, 0)
	case t <= -(1 << 62):
		return time.Unix(-(1 << 62), 0)
	}
	sec, frac := math.Modf(t)
	return time.Unix(int64(sec), int64(frac*1e9))
}
