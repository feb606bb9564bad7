package agentproto

import (
	"strings"
	"testing"
)

func TestCgroupName(t *testing.T) {
	a, b := CgroupName("/state/a"), CgroupName("/state/b")
	if a == b || !strings.HasPrefix(a, "fluxq-") || len(a) != len("fluxq-")+12 || CgroupName("/state/a") != a {
		t.Fatalf("CgroupName: %q %q", a, b)
	}
}
