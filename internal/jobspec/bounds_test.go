package jobspec

import (
	"strings"
	"testing"
)

func TestCheckBounds(t *testing.T) {
	for _, tc := range []struct {
		system string
		err    string
	}{
		{`"duration": 0`, ""},
		{`"duration": 3155760000`, ""}, // 100 years exactly
		{`"duration": 3155760000.5`, "attributes.system: duration 3.1557600005e+09 is longer than the longest allowed"},
		{`"duration": 1e308`, "duration 1e+308 is longer"},
		{`"duration": 0, "dependencies": [{"scheme": "begin-time", "value": "221845392000"}]`, ""},
		{`"duration": 0, "dependencies": [{"scheme": "begin-time", "value": "221845392000.5"}]`, "attributes.system.dependencies[0]: time 221845392000.5 is later than the latest allowed, 9000-01-01T00:00:00Z"},
		{`"duration": 0, "dependencies": [{"scheme": "afterok", "value": "1e20"}]`, ""},
	} {
		js, err := Parse([]byte(`{"version": 1, "resources": [{"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}],
"tasks": [{"command": ["true"], "slot": "task", "count": {"per_slot": 1}}], "attributes": {"system": {` + tc.system + `}}}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.system, err)
		}
		err = js.CheckBounds()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.system, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.system, err, tc.err)
		}
	}
}
