package jobspec

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Output limits, as flux-core's shell output plugin has them (shell
// option output.limit, flux-shell-options(7)).
const (
	// OutputLimitMax is the largest output.limit: 1G.
	OutputLimitMax = 1 << 30
	// GuestOutputLimit is the output kept of a guest's job: flux-core's
	// default in a multi-user instance, 10M. A guest may lower it, never
	// raise it.
	GuestOutputLimit = 10 << 20
)

// sizeScale are parse_size's suffixes: powers of 1024, k and K alike.
var sizeScale = map[byte]uint{'k': 10, 'K': 10, 'M': 20, 'G': 30, 'T': 40, 'P': 50, 'E': 60}

// ParseSize reads a size as flux-core's parse_size does: a number of
// bytes, integer or floating point (2.5M, 1e6), with an optional suffix
// k or K (KiB), M, G, T, P or E (powers of 1024). A fraction of a byte is
// dropped. Errors are one line in the user's words.
func ParseSize(s string) (uint64, error) {
	num, shift := s, uint(0)
	if n := len(s); n > 0 {
		if sh, ok := sizeScale[s[n-1]]; ok {
			num, shift = s[:n-1], sh
		}
	}
	if num == "" || strings.TrimSpace(num) != num || num[0] == '+' || num[0] == '-' {
		return 0, fmt.Errorf("invalid size %q (want a number of bytes, with an optional k, M or G)", s)
	}
	if v, err := strconv.ParseUint(num, 10, 64); err == nil {
		if v > math.MaxUint64>>shift {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		return v << shift, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("invalid size %q (want a number of bytes, with an optional k, M or G)", s)
	}
	f = math.Ldexp(f, int(shift))
	if f >= math.Ldexp(1, 64) {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return uint64(f), nil
}

// OutputLimit reads the shell option output.limit of opts (a jobspec's
// attributes.system.shell.options): a size as ParseSize reads it, or a
// JSON number of bytes, at most OutputLimitMax; set is false when the
// option is absent.
func OutputLimit(opts map[string]any) (limit uint64, set bool, err error) {
	o, _ := opts["output"].(map[string]any)
	v, ok := o["limit"]
	if !ok {
		return 0, false, nil
	}
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		text = x.String()
	case float64:
		text = strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		text = strconv.Itoa(x)
	case int64:
		text = strconv.FormatInt(x, 10)
	default:
		return 0, true, fmt.Errorf("output.limit: want a size such as 10M, not %s", describeValue(v))
	}
	n, err := ParseSize(text)
	if err != nil {
		return 0, true, fmt.Errorf("output.limit: %v", err)
	}
	if n > OutputLimitMax {
		return 0, true, fmt.Errorf("output.limit: %s is over the largest allowed, 1G", text)
	}
	return n, true, nil
}

// describeValue names the JSON type of a value that is not the one wanted.
func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// FormatSize writes a size with the largest suffix that divides it (10M,
// 1536k), else in bytes: what ParseSize reads back to the same value.
func FormatSize(n uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"E", 60}, {"P", 50}, {"T", 40}, {"G", 30}, {"M", 20}, {"k", 10}} {
		if n != 0 && n&(1<<u.shift-1) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(n, 10)
}
