package execproto

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/wire"
)

func msg(topic string, typ wire.Type, payload string) wire.Message {
	return wire.Message{Topic: topic, Type: typ, Payload: json.RawMessage(payload)}
}

// The RFC 32 examples, decoded. The RFC prints several with trailing
// commas, which JSON does not allow; they are removed here.
func TestRFC32Examples(t *testing.T) {
	h, err := DecodeHello(msg(TopicHello, wire.Request, `{"service": "job-exec"}`))
	if err != nil || h.Service != "job-exec" {
		t.Errorf("hello = %+v, %v", h, err)
	}
	s, err := DecodeStart(msg("job-exec.start", wire.Request, `{"id": 1552593348, "userid": 5588, "jobspec": {}, "reattach": false}`))
	if err != nil || s.ID != 1552593348 || s.UserID != 5588 || s.Reattach {
		t.Errorf("start = %+v, %v", s, err)
	}
	tests := []struct {
		payload string
		typ     string
		data    any
	}{
		{`{"id": 1552593348, "type": "start", "data": {}}`, TypeStart, nil},
		{`{"id": 1552593348, "type": "release", "data": {"ranks": "0-2", "final": true}}`, TypeRelease, &Release{Ranks: "0-2", Final: true}},
		{`{"id": 1552593348, "type": "exception", "data": {"severity": 0, "type": "timeout", "note": "resource allocation expired"}}`,
			TypeException, &Exception{Severity: 0, Type: "timeout", Note: "resource allocation expired"}},
		{`{"id": 1552593348, "type": "finish", "data": {"status": 143}}`, TypeFinish, &Finish{Status: 143}},
	}
	for _, tc := range tests {
		r, data, err := DecodeResponse(msg("job-exec.start", wire.Response, tc.payload))
		if err != nil {
			t.Errorf("%s: %v", tc.payload, err)
			continue
		}
		if r.ID != 1552593348 || r.Type != tc.typ {
			t.Errorf("%s: got id %d type %q", tc.payload, r.ID, r.Type)
		}
		if diff := cmp.Diff(tc.data, data); diff != "" {
			t.Errorf("%s data (-want +got):\n%s", tc.typ, diff)
		}
	}
}

func TestNewResponse(t *testing.T) {
	m, err := NewResponse("job-exec", 7, TypeStart, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Topic != "job-exec.start" || string(m.Payload) != `{"id":7,"type":"start","data":{}}` {
		t.Errorf("start response = %s %s", m.Topic, m.Payload)
	}
	m, _ = NewResponse("job-exec", 7, TypeRelease, Release{Ranks: "all", Final: true})
	if string(m.Payload) != `{"id":7,"type":"release","data":{"ranks":"all","final":true}}` {
		t.Errorf("release response = %s", m.Payload)
	}
	b, _ := json.Marshal(Start{ID: 1, Jobspec: json.RawMessage(`{}`)})
	if string(b) != `{"id":1,"userid":0,"jobspec":{},"reattach":false}` {
		t.Errorf("start request = %s", b)
	}
}

func TestRejects(t *testing.T) {
	tests := []struct {
		name, payload, want string
	}{
		{"no data", `{"id":1,"type":"start"}`, `payload has no "data"`},
		{"unknown type", `{"id":1,"type":"bogus","data":{}}`, `unknown response type "bogus"`},
		{"release without final", `{"id":1,"type":"release","data":{"ranks":"all"}}`, `payload has no "final"`},
		{"exception severity", `{"id":1,"type":"exception","data":{"severity":9,"type":"x"}}`, "severity 9 is not 0-7"},
		{"finish without status", `{"id":1,"type":"finish","data":{}}`, `payload has no "status"`},
		{"start data not object", `{"id":1,"type":"start","data":[]}`, "start data must be an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := DecodeResponse(msg("job-exec.start", wire.Response, tc.payload))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := DecodeHello(msg(TopicHello, wire.Request, `{"service":""}`)); err == nil {
		t.Error("empty service name accepted")
	}
	if _, err := DecodeStart(msg("job-exec.start", wire.Request, `{"id":1,"userid":1,"jobspec":{}}`)); err == nil {
		t.Error("start without reattach accepted")
	}
}
