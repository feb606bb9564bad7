package jobmgr

import (
	"encoding/json"
	"reflect"
	"testing"
)

// mergeOwned, the merge made in the update it owns, gives what Merge
// gives, key for key, and leaves base as it was.
func TestMergeOwnedIsMerge(t *testing.T) {
	decode := func(raw string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	updates := []string{
		`{"sched":{"resource_summary":"rank0/core0","reason_pending":null,"t_estimate":null}}`,
		`{"sched":{"reason_pending":"insufficient resources","t_estimate":12.5}}`,
		`{"sched":{"reason_pending":"insufficient resources"}}`,
		`{"a":null}`, `{}`, `{"a":{"b":null}}`, `{"a":{"b":{"c":null,"d":1}},"e":[1,null]}`, `{"a":5}`, `{"x":{"y":2}}`,
	}
	bases := append([]string{`null`, `{"a":1}`, `{"a":{"b":1,"c":2}}`, `{"x":1,"a":{"b":{"c":3}}}`}, updates...)
	for _, b := range bases {
		for _, u := range updates {
			base := Merge(nil, decode(b)) // a merge's result, as annotations are
			want := Merge(base, decode(u))
			before := Merge(nil, base)
			got := mergeOwned(base, decode(u))
			if !reflect.DeepEqual(want, got) {
				t.Errorf("base %s, update %s: mergeOwned = %#v, Merge = %#v", b, u, got, want)
			}
			if !reflect.DeepEqual(base, before) {
				t.Errorf("base %s, update %s: base changed to %#v", b, u, base)
			}
		}
	}
}
