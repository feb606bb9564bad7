package agentproto

import (
	"bytes"
	"strings"
)

// MemoryFile is the last exec agent's word on memory limits, in the state
// directory (<state>/memory-limits), for the commands that say it without
// a fluxsched to ask (fluxres status): one line, as FormatMemoryStatus
// writes it, rewritten by each agent as it starts, and left when it
// exits (the agents' folder is left empty), since the next agent, on the
// same host, says the same. It is readable by every user who can reach
// the state directory.
const MemoryFile = "memory-limits"

// Memory status lines, as FormatMemoryStatus writes them.
const (
	memEnforced    = "enforced: "
	memNotEnforced = "not enforced: "
)

// FormatMemoryStatus is MemoryFile's line: how memory limits are enforced
// (a Hello's Memory), or, when how is empty, why they are not.
func FormatMemoryStatus(how, whyNot string) []byte {
	if how != "" {
		return []byte(memEnforced + oneLine(how) + "\n")
	}
	if whyNot == "" {
		whyNot = "unknown"
	}
	return []byte(memNotEnforced + oneLine(whyNot) + "\n")
}

// ParseMemoryStatus reads MemoryFile's line: how memory limits are
// enforced, or why they are not; ok is false for a line it does not know.
func ParseMemoryStatus(b []byte) (how, whyNot string, ok bool) {
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	s := string(line)
	if v, found := strings.CutPrefix(s, memEnforced); found && v != "" {
		return v, "", true
	}
	if v, found := strings.CutPrefix(s, memNotEnforced); found && v != "" {
		return "", v, true
	}
	return "", "", false
}

// NotEnforcedLine is the one line that says memory limits are not
// enforced, and why, as fluxres status and fluxsched's log print it.
func NotEnforcedLine(whyNot string) string {
	return "memory limits are scheduled but not enforced on this host: " + whyNot
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
