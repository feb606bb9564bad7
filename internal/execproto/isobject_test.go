package execproto

import (
	"testing"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/wire"
)

// isObject answers as decoding into a map did: true for one JSON object,
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
		if got, want := isObject([]byte(s)), decodes([]byte(s)); got != want {
			t.Errorf("isObject(%q) = %v, decoding into a map says %v", s, got, want)
		}
	}
}

// BenchmarkDecodeResponse is the job manager reading a start response.
func BenchmarkDecodeResponse(b *testing.B) {
	m := msg("job-exec.start", wire.Response, `{"id":123456789,"type":"start","data":{}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeResponse(m); err != nil {
			b.Fatal(err)
		}
	}
}
