package fluxformat

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// strftime directives, as glibc's strftime(3) (which Python's calls)
// writes them in the C locale. Flux's {t_run!d:%H:%M} passes its layout
// to strftime; these are the directives a layout may use.
var directives = map[byte]func(t time.Time) string{
	'a': func(t time.Time) string { return t.Format("Mon") },
	'A': func(t time.Time) string { return t.Format("Monday") },
	'b': func(t time.Time) string { return t.Format("Jan") },
	'h': func(t time.Time) string { return t.Format("Jan") },
	'B': func(t time.Time) string { return t.Format("January") },
	'c': func(t time.Time) string { return t.Format("Mon Jan _2 15:04:05 2006") },
	'C': func(t time.Time) string { return two(t.Year() / 100) },
	'd': func(t time.Time) string { return two(t.Day()) },
	'D': func(t time.Time) string { return t.Format("01/02/06") },
	'e': func(t time.Time) string { return fmt.Sprintf("%2d", t.Day()) },
	'f': func(t time.Time) string { return fmt.Sprintf("%06d", t.Nanosecond()/1000) },
	'F': func(t time.Time) string { return t.Format("2006-01-02") },
	'G': func(t time.Time) string { y, _ := t.ISOWeek(); return strconv.Itoa(y) },
	'g': func(t time.Time) string { y, _ := t.ISOWeek(); return two(y % 100) },
	'H': func(t time.Time) string { return two(t.Hour()) },
	'I': func(t time.Time) string { return t.Format("03") },
	'j': func(t time.Time) string { return fmt.Sprintf("%03d", t.YearDay()) },
	'k': func(t time.Time) string { return fmt.Sprintf("%2d", t.Hour()) },
	'l': func(t time.Time) string { return t.Format("_3") },
	'm': func(t time.Time) string { return two(int(t.Month())) },
	'M': func(t time.Time) string { return two(t.Minute()) },
	'n': func(time.Time) string { return "\n" },
	'p': func(t time.Time) string { return t.Format("PM") },
	'P': func(t time.Time) string { return t.Format("pm") },
	'r': func(t time.Time) string { return t.Format("03:04:05 PM") },
	'R': func(t time.Time) string { return t.Format("15:04") },
	's': func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) },
	'S': func(t time.Time) string { return two(t.Second()) },
	't': func(time.Time) string { return "\t" },
	'T': func(t time.Time) string { return t.Format("15:04:05") },
	'u': func(t time.Time) string { return strconv.Itoa((int(t.Weekday())+6)%7 + 1) },
	'V': func(t time.Time) string { _, w := t.ISOWeek(); return two(w) },
	'w': func(t time.Time) string { return strconv.Itoa(int(t.Weekday())) },
	'x': func(t time.Time) string { return t.Format("01/02/06") },
	'X': func(t time.Time) string { return t.Format("15:04:05") },
	'y': func(t time.Time) string { return two(t.Year() % 100) },
	'Y': func(t time.Time) string { return strconv.Itoa(t.Year()) },
	'z': func(t time.Time) string { return t.Format("-0700") },
	'Z': func(t time.Time) string { return t.Format("MST") },
	'%': func(time.Time) string { return "%" },
}

func two(n int) string { return fmt.Sprintf("%02d", n) }

// checkLayout refuses a strftime layout with a directive there is not.
func checkLayout(layout string) error {
	for i := 0; i < len(layout); i++ {
		if layout[i] != '%' {
			continue
		}
		if i+1 == len(layout) {
			return fmt.Errorf("time layout %q ends in a lone '%%' (write %%%% for a percent sign)", layout)
		}
		i++
		if _, ok := directives[layout[i]]; !ok {
			return fmt.Errorf("time layout %q: no directive %%%s (there are %%Y %%m %%d %%H %%M %%S %%b %%a %%F %%T %%R and the rest of strftime(3)'s)", layout, firstRune(layout[i:]))
		}
	}
	return nil
}

// Strftime writes t by a strftime layout that checkLayout accepted.
func Strftime(layout string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c != '%' || i+1 == len(layout) {
			b.WriteByte(c)
			continue
		}
		i++
		if d, ok := directives[layout[i]]; ok {
			b.WriteString(d(t))
		} else {
			b.WriteByte('%')
			b.WriteByte(layout[i])
		}
	}
	return b.String()
}
