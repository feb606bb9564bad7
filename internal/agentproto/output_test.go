package agentproto

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/wire"
)

func TestDecodeOutputRequest(t *testing.T) {
	for _, tc := range []struct {
		payload string
		want    OutputRequest
		err     string
	}{
		{`{"id":1,"userid":5,"stream":"stdout","offset":0}`, OutputRequest{ID: 1, UserID: 5, Stream: "stdout", Max: MaxOutputRead}, ""},
		{`{"id":1,"userid":5,"stream":"stderr","offset":9,"max":10}`, OutputRequest{ID: 1, UserID: 5, Stream: "stderr", Offset: 9, Max: 10}, ""},
		{`{"id":1,"userid":5,"stream":"spec.json","offset":0}`, OutputRequest{}, "neither stdout nor stderr"},
		{`{"id":1,"userid":5,"stream":"stdout","offset":-4}`, OutputRequest{}, "negative"},
		{`{"id":1,"userid":5,"stream":"stdout","offset":0,"max":-1}`, OutputRequest{}, "not within"},
		{`{"id":1,"userid":5,"stream":"stdout","offset":0,"max":1048577}`, OutputRequest{}, "not within"},
		{`{"id":1,"stream":"stdout","offset":0}`, OutputRequest{}, `no "userid"`},
		{`[1]`, OutputRequest{}, "object"},
	} {
		got, err := DecodeOutputRequest(wire.Message{Topic: TopicOutput, Type: wire.Request, Payload: json.RawMessage(tc.payload)})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.payload, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s = %+v, %v; want %+v", tc.payload, got, err, tc.want)
		}
	}
}

func FuzzDecodeOutputRequest(f *testing.F) {
	f.Add([]byte(`{"id":1,"userid":5,"stream":"stdout","offset":0}`))
	f.Add([]byte(`{"id":18446744073709551615,"userid":4294967295,"stream":"stderr","offset":9223372036854775807,"max":1048576}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeOutputRequest(wire.Message{Topic: TopicOutput, Type: wire.Request, Payload: b})
		if err != nil {
			return
		}
		if (r.Stream != StreamStdout && r.Stream != StreamStderr) || r.Offset < 0 || r.Max <= 0 || r.Max > MaxOutputRead {
			t.Fatalf("DecodeOutputRequest(%q) = %+v: out of its bounds", b, r)
		}
	})
}
