// Package fsd parses and prints Flux Standard Duration strings (RFC 23,
// flux-framework/rfc spec_23.rst): a non-negative number with an optional
// unit suffix ms, s, m, h or d, or the special values "inf" and "infinity".
//
// Durations are float64 seconds because FSD allows fractions and infinity.
// Parsing follows flux-core's fsd_parse_duration (src/common/libutil/fsd.c);
// Format follows what Flux's tools print for humans (flux.util.fsd), FormatG
// follows fsd_format_duration_ex, and FormatExact is a lossless canonical
// form of fluxq's own.
package fsd

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Unit multipliers from RFC 23's suffix table. Milliseconds multiply by
// 0.001, as flux-core does, rather than divide by 1000: the two differ in the
// last bit for some inputs and Flux's value is the reference.
const (
	millisecond = 0.001
	second      = 1.0
	minute      = 60.0
	hour        = 60.0 * 60.0
	day         = 60.0 * 60.0 * 24.0
)

// maxQuoted bounds how much of a bad input an error message repeats, so an
// error stays one readable line whatever the caller passed in.
const maxQuoted = 64

func quote(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "..."
	}
	return strconv.Quote(s)
}

func invalid(s, why string) error {
	return fmt.Errorf("invalid Flux standard duration %s: %s", quote(s), why)
}

// Parse converts an RFC 23 duration string to seconds.
func Parse(s string) (float64, error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, err
	}
	return apply(s, num, unit, second)
}

// ParseTimeLimit parses a job time limit the way `flux submit -t` does: a
// bare number counts minutes, anything with a unit is an RFC 23 duration.
func ParseTimeLimit(s string) (float64, error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, err
	}
	return apply(s, num, unit, minute)
}

// split checks the syntax of s and returns the numeric part and the suffix.
// The number is the decimal subset of what C's strtod accepts: hex floats,
// nan, and leading whitespace are refused, since none is a sensible duration
// and accepting them would make the canonical form ambiguous.
func split(s string) (num, unit string, err error) {
	if s == "" {
		return "", "", invalid(s, "empty string")
	}
	i := 0
	if s[0] == '+' {
		i = 1
	} else if s[0] == '-' {
		return "", "", invalid(s, "must not be negative")
	}
	rest := s[i:]
	if w := infWord(rest); w != "" {
		if len(rest) > len(w) {
			return "", "", invalid(s, "units not allowed with infinity")
		}
		return s, "", nil
	}
	j := i
	digits := 0
	for j < len(s) && isDigit(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		if strings.HasPrefix(strings.ToLower(rest), "nan") {
			return "", "", invalid(s, "not a number")
		}
		return "", "", invalid(s, "expected a number")
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		e := k
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		// Like strtod, an "e" without digits is not an exponent; it is
		// left for the suffix check, which rejects it.
		if k > e {
			j = k
		}
	}
	num, unit = s[:j], s[j:]
	switch unit {
	case "", "ms", "s", "m", "h", "d":
		return num, unit, nil
	}
	return "", "", invalid(s, fmt.Sprintf("unknown unit %s (want ms, s, m, h or d)", quote(unit)))
}

// infWord returns the spelling of infinity that s starts with, if any.
// strtod matches "inf" and "infinity" without regard to case.
func infWord(s string) string {
	l := strings.ToLower(s)
	if strings.HasPrefix(l, "infinity") {
		return s[:8]
	}
	if strings.HasPrefix(l, "inf") {
		return s[:3]
	}
	return ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// apply converts num and scales it by unit; bare numbers use bareUnit.
func apply(s, num, unit string, bareUnit float64) (float64, error) {
	v, err := strconv.ParseFloat(num, 64)
	if math.IsInf(v, 1) && infWord(strings.TrimPrefix(num, "+")) != "" {
		return v, nil
	}
	if err != nil || math.IsInf(v, 0) {
		return 0, invalid(s, "out of range")
	}
	mult := bareUnit
	switch unit {
	case "ms":
		mult = millisecond
	case "s":
		mult = second
	case "m":
		mult = minute
	case "h":
		mult = hour
	case "d":
		mult = day
	}
	v *= mult
	// A finite number that overflows once scaled is refused rather than
	// silently turned into "inf", which the user did not write.
	if math.IsInf(v, 0) {
		return 0, invalid(s, "out of range")
	}
	return v, nil
}

// Format renders sec for humans as Flux's tools do (flux.util.fsd, used for
// the RUNTIME and similar columns of flux jobs): under a millisecond is "0s",
// under ten seconds gets three decimals ("0.057s"), larger values get four
// significant digits in the largest unit below the value ("1.765m", "8h"),
// and infinity is "inf". It is lossy by design. Negative and NaN inputs,
// which are not durations, print as "0s". The result always parses.
func Format(sec float64) string {
	switch {
	case math.IsInf(sec, 1):
		return "inf"
	case math.IsNaN(sec) || sec < 1e-3:
		return "0s"
	case sec < 10:
		return strconv.FormatFloat(sec, 'f', 3, 64) + "s"
	case sec < minute:
		return strconv.FormatFloat(sec, 'g', 4, 64) + "s"
	case sec < hour:
		return strconv.FormatFloat(sec/minute, 'g', 4, 64) + "m"
	case sec < day:
		return strconv.FormatFloat(sec/hour, 'g', 4, 64) + "h"
	}
	s := strconv.FormatFloat(sec/day, 'g', 4, 64) + "d"
	// Within a rounding step of the largest float64, four digits of days
	// round up past what a float64 holds and would not parse back; such
	// durations fall back to the exact form.
	if sec > math.MaxFloat64/2 {
		if _, err := Parse(s); err != nil {
			return FormatExact(sec)
		}
	}
	return s
}

// FormatG renders sec as flux-core's fsd_format_duration_ex does with the
// given number of significant digits (fsd_format_duration uses 6): "%.*g"
// in milliseconds below 0.1s, then seconds, minutes, hours or days, and
// "infinity" for infinity. Like flux-core it refuses NaN and negative values.
func FormatG(sec float64, precision int) (string, error) {
	if math.IsInf(sec, 1) {
		return "infinity", nil
	}
	if math.IsNaN(sec) || sec < 0 {
		return "", fmt.Errorf("invalid duration %v: must be a non-negative number", sec)
	}
	// C treats a precision of 0 as 1; the upper bound keeps the output
	// short, and 17 digits already identify every float64.
	precision = min(max(precision, 1), 40)
	g := func(v float64, unit string) string {
		return strconv.FormatFloat(v, 'g', precision, 64) + unit
	}
	switch {
	case sec < 0.1 && sec != 0:
		return g(sec*1000, "ms"), nil
	case sec < minute:
		return g(sec, "s"), nil
	case sec < hour:
		return g(sec/minute, "m"), nil
	case sec < day:
		return g(sec/hour, "h"), nil
	}
	return g(sec/day, "d"), nil
}

// units lists the RFC 23 suffixes from the largest, the order FormatExact
// prefers on a tie.
var units = []struct {
	suffix string
	mult   float64
}{
	{"d", day},
	{"h", hour},
	{"m", minute},
	{"s", second},
	{"ms", millisecond},
}

// FormatExact renders sec in a canonical, lossless form: Parse of the result
// returns exactly sec. For each unit it takes the shortest decimal that
// represents sec in that unit, keeps those that parse back to exactly sec,
// and picks the one with the fewest written digits, preferring a value of
// at least 1 and then the larger unit: 90 is "1.5m", 3600 is "1h", 0.001 is
// "1ms", 100 is "100s", and infinity is "inf". Seconds always qualify, so a
// result always exists. A negative or NaN input, not being a duration,
// yields a string that does not parse.
func FormatExact(sec float64) string {
	switch {
	case math.IsInf(sec, 1):
		return "inf"
	case math.IsNaN(sec) || sec < 0:
		return strconv.FormatFloat(sec, 'g', -1, 64) + "s"
	case sec == 0:
		return "0s"
	}
	best, bestScore := "", score{}
	for _, u := range units {
		v := sec / u.mult
		if u.suffix == "ms" {
			v = sec * 1000
		}
		if v == 0 || math.IsInf(v, 0) || v*u.mult != sec {
			continue
		}
		sc := score{small: v < 1, digits: plainDigits(v)}
		if best == "" || sc.less(bestScore) {
			best = strconv.FormatFloat(v, 'g', -1, 64) + u.suffix
			bestScore = sc
		}
	}
	return best
}

type score struct {
	small  bool // value below 1 in this unit: "30s" reads better than "0.5m"
	digits int
}

// less orders candidates; ties keep the earlier, larger unit.
func (a score) less(b score) bool {
	if a.small != b.small {
		return !a.small
	}
	return a.digits < b.digits
}

// plainDigits counts the digits v's shortest decimal has when written
// without an exponent, leading "0." zeros and trailing zeros included, so
// "90" (2) ties with "1.5" (2) and loses to "1" (1).
func plainDigits(v float64) int {
	e := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	n := len(strings.Replace(mant, ".", "", 1))
	x, _ := strconv.Atoi(exp)
	switch {
	case x < 0:
		return n - x // "0." then -x-1 zeros, then n digits; count the 0 too
	case x+1 > n:
		return x + 1
	}
	return n
}

// Seconds converts d to float64 seconds.
func Seconds(d time.Duration) float64 { return d.Seconds() }

// Duration converts seconds to a time.Duration, rounding to the nearest
// nanosecond; durations beyond its range, infinity included, saturate at
// the largest (or smallest) Duration, and NaN gives 0.
func Duration(sec float64) time.Duration {
	switch {
	case math.IsNaN(sec):
		return 0
	case sec >= float64(math.MaxInt64)/1e9:
		return time.Duration(math.MaxInt64)
	case sec <= float64(math.MinInt64)/1e9:
		return time.Duration(math.MinInt64)
	}
	ns := math.Round(sec * 1e9)
	// float64(MaxInt64) rounds up to 2^63, which does not fit in int64.
	if ns >= float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	if ns <= float64(math.MinInt64) {
		return time.Duration(math.MinInt64)
	}
	return time.Duration(ns)
}
