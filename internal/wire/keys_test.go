package wire

import (
	"encoding/json"
	"testing"
)

var keyCases = []string{
	`{"id":1,"jobspec":{"id":2,"x":[1,{"y":"}"}]},"r":"a\"b","t":true,"n":null}`,
	`{ "a" : { "b" : [ ] } , "c" : -1.5e3 }`,
	`{"\u0069d":7}`,
	`{"s":"\\","k":"{["}`,
	`{}`,
	`[{"id":1}]`,
	`{"deep":{"id":1}}`,
}

// hasKey agrees with decoding into a map on the top-level keys, and finds
// none of the keys of nested objects.
func TestHasKey(t *testing.T) {
	for _, c := range keyCases {
		checkKeys(t, []byte(c))
	}
}

func FuzzHasKey(f *testing.F) {
	for _, c := range keyCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		checkKeys(t, b)
	})
}

func checkKeys(t *testing.T, b []byte) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		for _, k := range []string{"id", "a", ""} {
			if hasKey(b, k) {
				t.Fatalf("%s is no object, yet hasKey(%q)", b, k)
			}
		}
		return
	}
	for k := range m {
		if !hasKey(b, k) {
			t.Fatalf("hasKey(%s, %q) = false, want true", b, k)
		}
	}
	for _, k := range []string{"id", "y", "b", "x", "zz", ""} {
		if _, ok := m[k]; !ok && hasKey(b, k) {
			t.Fatalf("hasKey(%s, %q) = true, want false", b, k)
		}
	}
}
