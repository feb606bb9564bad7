package jobmgr

import (
	"testing"

	json "github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

// mergeOwn gives what Merge gives, whether it prunes the update or copies it.
func TestMergeOwnIsMerge(t *testing.T) {
	for _, tc := range []struct{ base, update string }{
		{`null`, `{"sched":{"resource_summary":"rank0/core3"}}`},
		{`null`, `{"sched":{"resource_summary":"rank0/core3","reason_pending":null,"t_estimate":null}}`},
		{`null`, `{"a":{"b":null},"c":{"d":{"e":null}},"f":[null,{}],"g":null}`},
		{`null`, `{"a":1,"b":"x","c":[1,null],"d":{"e":{"f":true}}}`},
		{`null`, `{"a":null}`},
		{`null`, `{"a":1,"b":null}`},
		{`null`, `{"a":{}}`},
		{`null`, `{"a":{"b":null}}`},
		{`null`, `{"a":{"b":{}}}`},
		{`null`, `{}`},
		{`{"sched":{"t_estimate":5}}`, `{"sched":{"resource_summary":"rank0/core3","t_estimate":null}}`},
		{`{"a":1}`, `{"b":2}`},
		{`{}`, `{"b":2}`},
	} {
		var base, b2, update, u2 map[string]any
		for _, d := range []struct {
			raw string
			v   *map[string]any
		}{{tc.base, &base}, {tc.base, &b2}, {tc.update, &update}, {tc.update, &u2}} {
			if err := json.Unmarshal([]byte(d.raw), d.v); err != nil {
				t.Fatal(err)
			}
		}
		want := Merge(b2, u2)
		got := mergeOwn(base, update)
		if diff := cmp.Diff(want, got); diff != "" || (want == nil) != (got == nil) {
			t.Errorf("base %s update %s: (-Merge +mergeOwn)\n%s", tc.base, tc.update, diff)
		}
	}
}

// BenchmarkAnnotateGrant is the job manager taking a grant's annotations
// onto a job that has none: decoded, then merged.
func BenchmarkAnnotateGrant(b *testing.B) {
	raw := []byte(`{"sched":{"resource_summary":"rank0/core3","reason_pending":null,"t_estimate":null}}`)
	for name, merge := range map[string]func(base, update map[string]any) map[string]any{"Merge": Merge, "mergeOwn": mergeOwn} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var update map[string]any
				if err := json.Unmarshal(raw, &update); err != nil {
					b.Fatal(err)
				}
				if merge(nil, update) == nil {
					b.Fatal("no annotations")
				}
			}
		})
	}
}
