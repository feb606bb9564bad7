package wire

import (
	"testing"

	json "github.com/goccy/go-json"
)

// IsObject answers as decoding into a map did: true for one JSON object,
// false for anything else (null, other values, bad or trailing syntax).
func TestIsObjectAsDecoding(t *testing.T) {
	decodes := func(b []byte) bool {
		var m map[string]json.RawMessage
		return json.Unmarshal(b, &m) == nil && m != nil
	}
	for _, s := range []string{
		`{}`, ` {"a":1} `, "\t\n{\"a\":[1,{\"b\":null}]}\r", `{"a":1,"a":2}`, `{"a":"\u00e9\n"}`,
		`null`, `[]`, `[{}]`, `"{}"`, `1`, `true`, ``, ` `, `{`, `}`, `{}}`, `{}{}`, `{} x`,
		`{"a":1,}`, `{"a":}`, `{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":[1,]}`, `{"a":01}`, `{"a":1.}`,
		`{"a":-}`, `{"a":tru}`, `{"a":{"b":nul}}`, `{"a":"\q"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}",
		`{"a":"\ud800"}`, `{"a":1e}`, `{"a":.5}`, `{"a":+1}`, `{"a":NaN}`, "{\"a\":1}\x00",
	} {
		if got, want := IsObject([]byte(s)), decodes([]byte(s)); got != want {
			t.Errorf("IsObject(%q) = %v, decoding into a map says %v", s, got, want)
		}
	}
}
