package runner

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// startTime returns field 22 of /proc/PID/stat: when the process started,
// in clock ticks since boot, which tells a process from a later one that
// got its pid.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold anything: the fields that
	// follow start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := bytes.Fields(b[i+1:])
	// After the name: field 3 (state) is f[0], so field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return strconv.ParseUint(string(f[19]), 10, 64)
}
