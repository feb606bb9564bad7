package jobspec

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MemoryType is the resource vertex type of memory inside a slot, as
// Fluxion's jobspecs write it: {type: memory, count: 4, unit: GB}.
const MemoryType = "memory"

// MaxMemory is the most memory a jobspec may ask for, per slot and in
// total: 1E. It keeps every sum of requests far inside a uint64.
const MaxMemory = 1 << 60

// memoryUnits are the units a memory vertex may give, as powers of 1024
// (Slurm's and Fluxion's sizes: 1G is 1024M). Without a unit a count is in
// GB, the unit Fluxion's resource graph keeps memory in.
var memoryUnits = map[string]uint{
	"B": 0,
	"K": 10, "k": 10, "KB": 10, "kB": 10, "KiB": 10,
	"M": 20, "MB": 20, "MiB": 20,
	"G": 30, "GB": 30, "GiB": 30,
	"T": 40, "TB": 40, "TiB": 40,
	"P": 50, "PB": 50, "PiB": 50,
}

// DefaultMemoryUnit is the unit of a memory count that gives none.
const DefaultMemoryUnit = "GB"

// memoryUnitShift returns the power of 1024 of a memory vertex's unit.
func memoryUnitShift(unit string) (uint, error) {
	if unit == "" {
		unit = DefaultMemoryUnit
	}
	sh, ok := memoryUnits[unit]
	if !ok {
		return 0, fmt.Errorf("slot memory unit %q is not one of B, KB, MB, GB, TB, PB", unit)
	}
	return sh, nil
}

// memoryBytes is the size a memory vertex asks for, in bytes.
func memoryBytes(r *Resource) (uint64, error) {
	sh, err := memoryUnitShift(r.Unit)
	if err != nil {
		return 0, err
	}
	if r.Count < 1 {
		return 0, fmt.Errorf("slot memory count must be >= 1")
	}
	if uint64(r.Count) > MaxMemory>>sh {
		return 0, fmt.Errorf("slot memory must be at most 1E (asked %d%s)", r.Count, unitOr(r.Unit))
	}
	return uint64(r.Count) << sh, nil
}

func unitOr(u string) string {
	if u == "" {
		return DefaultMemoryUnit
	}
	return u
}

// memoryVertex is the vertex FromOptions writes for n bytes per slot: the
// count in the largest unit that holds n exactly (4G is {4, GB}, 1536M is
// {1536, MB}), so the jobspec reads back to the same size and a Fluxion
// reader sees its own units.
func memoryVertex(n uint64) (Resource, error) {
	if n == 0 || n > MaxMemory {
		return Resource{}, fmt.Errorf("memory per slot must be between 1 byte and 1E")
	}
	for _, u := range []struct {
		name  string
		shift uint
	}{{"PB", 50}, {"TB", 40}, {"GB", 30}, {"MB", 20}, {"KB", 10}, {"B", 0}} {
		if n&(1<<u.shift-1) == 0 && n>>u.shift <= MaxCount {
			return Resource{Type: MemoryType, Count: int(n >> u.shift), Unit: u.name}, nil
		}
	}
	// Too many bytes to count in bytes and not whole in a unit that
	// could count them: round up to the smallest unit that can, which
	// never asks for less.
	for _, u := range []struct {
		name  string
		shift uint
	}{{"KB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}, {"PB", 50}} {
		if k := (n + 1<<u.shift - 1) >> u.shift; k <= MaxCount {
			return Resource{Type: MemoryType, Count: int(k), Unit: u.name}, nil
		}
	}
	return Resource{}, fmt.Errorf("memory per slot must be between 1 byte and 1E")
}

// ParseMemory reads a memory size as --mem takes it, Slurm's and Flux's
// way: a number with an optional suffix K, M, G, T or P (powers of 1024,
// with or without a trailing B or iB); a bare number is in megabytes, as
// Slurm's --mem reads it. Errors are one line in the user's words.
func ParseMemory(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("invalid memory size %q (want a size such as 512M, 4G or 1.5T)", s)
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "iB"), "B")
	if n := len(t); n > 0 && strings.IndexByte("kmgtp", t[n-1]) >= 0 {
		t = t[:n-1] + strings.ToUpper(t[n-1:])
	}
	if t != "" {
		if c := t[len(t)-1]; c >= '0' && c <= '9' || c == '.' {
			t += "M"
		}
	}
	if t == "" || strings.HasSuffix(t, "E") || strings.HasSuffix(t, "e") {
		return 0, fmt.Errorf("invalid memory size %q (want a size such as 512M, 4G or 1.5T)", s)
	}
	n, err := ParseSize(t)
	if err != nil {
		return 0, fmt.Errorf("invalid memory size %q (want a size such as 512M, 4G or 1.5T)", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("memory size %q must be more than 0", s)
	}
	if n > MaxMemory {
		return 0, fmt.Errorf("memory size %q is over the largest allowed, 1E", s)
	}
	return n, nil
}

// ParseMemoryOrZero reads a size as ParseMemory does, or "0" for none
// (returned as 0): the config keys whose 0 turns a size off
// ([resource] memory-reserve, a queue's default memory).
func ParseMemoryOrZero(s string) (uint64, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	return ParseMemory(s)
}

// FormatMemory writes a memory size for people, in the largest unit of
// 1024 it reaches, with one decimal where the size is not whole in it:
// 12G, 6.3G, 512M, 0 (ParseMemory reads a whole one back exactly). The
// one way sizes of memory are shown: pending reasons, fluxres, fluxq info.
func FormatMemory(n uint64) string {
	units := []struct {
		suffix string
		shift  uint
	}{{"P", 50}, {"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}}
	for _, u := range units {
		if n < 1<<u.shift {
			continue
		}
		if n&(1<<u.shift-1) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.suffix
		}
		// One decimal, rounded down so that free memory is never shown
		// as more than it is.
		hi, lo := bits.Mul64(n, 10)
		tenths := hi<<(64-u.shift) | lo>>u.shift
		if tenths%10 == 0 {
			return strconv.FormatUint(tenths/10, 10) + u.suffix
		}
		return strconv.FormatUint(tenths/10, 10) + "." + strconv.FormatUint(tenths%10, 10) + u.suffix
	}
	return strconv.FormatUint(n, 10) + "B"
}
