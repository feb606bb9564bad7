package jobmgr

import (
	"encoding/json"
	"reflect"
	"testing"
)

// dropNulls, the merge of an update into no annotations made in place,
// gives what Merge(nil, update) gives, key for key.
func TestDropNullsIsMergeIntoNothing(t *testing.T) {
	for _, raw := range []string{
		`{"sched":{"resource_summary":"rank0/core0","reason_pending":null,"t_estimate":null}}`,
		`{"sched":{"reason_pending":"insufficient resources","t_estimate":12.5}}`,
		`{"a":null}`, `{}`, `{"a":{"b":null}}`, `{"a":{"b":{"c":null,"d":1}},"e":[1,null]}`,
	} {
		var a, b map[string]any
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(raw), &b); err != nil {
			t.Fatal(err)
		}
		want, got := Merge(nil, a), dropNulls(b)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: dropNulls = %#v, Merge(nil, ·) = %#v", raw, got, want)
		}
	}
}
