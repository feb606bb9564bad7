package sched

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// The annotations a typed message carries as values are what their bytes
// decode to, so the job manager keeps the same annotations either way.
func TestAnnotatedDecodes(t *testing.T) {
	check := func(what string, raw json.RawMessage, value map[string]any) {
		t.Helper()
		var decoded map[string]any
		if err := json.Unmarshal(raw, &decoded); err != nil {
			t.Fatalf("%s: %s: %v", what, raw, err)
		}
		if !reflect.DeepEqual(decoded, value) {
			t.Errorf("%s: %s decodes to %#v, the value is %#v", what, raw, decoded, value)
		}
	}
	for _, s := range []string{"rank0/core0", "", `rank[0-3]/core[0-1] "quoted"`} {
		check("granted", granted(s), grantedValue(s))
	}
	for _, reason := range []string{ReasonInsufficient, "insufficient memory: needs 2G, 1G free on node1", `odd "reason"`} {
		for _, est := range []float64{math.NaN(), 0, 1000, 946684800.5, 1e21} {
			for _, clear := range []bool{false, true} {
				check("waiting", waiting(reason, est, clear), waitingValue(reason, est, clear))
			}
		}
	}
}
