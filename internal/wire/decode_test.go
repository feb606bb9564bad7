package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Decode reads a payload into its type only when every REQUIRED key of
// the RFC is there, naming the first that is not; an error response is
// its error.
func TestDecode(t *testing.T) {
	type alloc struct {
		ID   int `json:"id"`
		Type int `json:"type"`
	}
	msg := func(payload string) Message {
		m := Message{Topic: "sched.alloc", Type: Response}
		if payload != "" {
			m.Payload = json.RawMessage(payload)
		}
		return m
	}
	tests := []struct {
		name     string
		m        Message
		required []string
		want     alloc
		wantErr  string
	}{
		{"all keys", msg(`{"id": 7, "type": 1}`), []string{"id", "type"}, alloc{7, 1}, ""},
		{"escaped key", msg(`{"\u0069d": 7, "type": 0}`), []string{"id"}, alloc{ID: 7}, ""},
		{"nested key does not count", msg(`{"x": {"id": 1}, "type": 0}`), []string{"id"}, alloc{}, `sched.alloc: payload has no "id"`},
		{"missing key", msg(`{"id": 7}`), []string{"id", "type"}, alloc{}, `sched.alloc: payload has no "type"`},
		{"no payload, keys required", msg(""), []string{"id"}, alloc{}, "sched.alloc: payload is missing (want id)"},
		{"no payload, none required", msg(""), nil, alloc{}, ""},
		{"not an object", msg(`[1, 2]`), []string{"id"}, alloc{}, "sched.alloc: payload must be an object: "},
		{"not JSON", msg(`{"id": `), []string{"id"}, alloc{}, "sched.alloc: payload must be an object: "},
		{"wrong type, key required", msg(`{"id": "seven"}`), []string{"id"}, alloc{}, "sched.alloc: json: cannot unmarshal"},
		{"wrong type, none required", msg(`{"id": "seven"}`), nil, alloc{}, "sched.alloc: json: cannot unmarshal"},
		{"nothing required", msg(`{"type": 2}`), nil, alloc{Type: 2}, ""},
		{"error response", NewError("sched.alloc", ENOSYS, "no scheduler"), []string{"id"}, alloc{}, "sched.alloc: no scheduler"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got alloc
			err := Decode(tc.m, &got, tc.required...)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
			case tc.wantErr == "" && got != tc.want:
				t.Errorf("decoded %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A pipe refuses a message whose envelope is invalid, and sends nothing.
func TestPipeRefusesInvalid(t *testing.T) {
	a, b := Pipe()
	defer a.Close()
	if err := a.Send(Message{Type: Request}); err == nil {
		t.Fatal("a message without a topic was sent")
	}
	if err := a.Send(Message{Topic: "x", Type: "gossip"}); err == nil {
		t.Fatal("a message of an unknown type was sent")
	}
	if err := a.Send(Message{Topic: "x", Type: Request, Errnum: 2}); err == nil {
		t.Fatal("a request with an error was sent")
	}
	ok, _ := NewRequest("x", nil)
	if err := a.Send(ok); err != nil {
		t.Fatal(err)
	}
	if m, err := b.Recv(); err != nil || m.Topic != "x" {
		t.Errorf("received %+v, %v; want the valid message only", m, err)
	}
	a.Close()
	if err := a.Send(ok); !errors.Is(err, ErrClosed) {
		t.Errorf("send on a closed pipe: %v, want ErrClosed", err)
	}
}
