package fluxq

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseUpdate(t *testing.T) {
	tests := []struct {
		arg, key, value, err string
	}{
		{"duration=60", "duration", `60`, ""},
		{"duration=1h", "duration", `"1h"`, ""},
		{"duration=-5m", "duration", `"-5m"`, ""},
		{"duration=-5", "duration", `"-5"`, ""},
		{"duration=+10m", "duration", `"+10m"`, ""},
		{"name=42", "name", `"42"`, ""},
		{`name="quoted"`, "name", `"quoted"`, ""},
		{"queue=batch", "queue", `"batch"`, ""},
		{"urgency=hold", "urgency", `"hold"`, ""},
		{"urgency=5", "urgency", `5`, ""},
		{`attributes.user.x={"a":1}`, "attributes.user.x", `{"a":1}`, ""},
		{"attributes.user.x=a=b", "attributes.user.x", `"a=b"`, ""},
		{"name=", "name", `""`, ""},
		{"duration", "", "", "want KEY=VALUE"},
		{"=5", "", "", "want KEY=VALUE"},
	}
	for _, tt := range tests {
		u, err := parseUpdate(tt.arg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseUpdate(%q) = %+v, %v; want an error with %q", tt.arg, u, err, tt.err)
			}
			continue
		}
		if err != nil || u.Key != tt.key || string(u.Value) != tt.value {
			t.Errorf("parseUpdate(%q) = %s=%s, %v; want %s=%s", tt.arg, u.Key, u.Value, err, tt.key, tt.value)
		}
	}
}

// FuzzParseUpdate: every argument is refused or makes a key and a value
// that is valid JSON.
func FuzzParseUpdate(f *testing.F) {
	for _, s := range []string{"duration=1h", "name=x", "urgency=5", "a", `x={"a":`, "x=\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		u, err := parseUpdate(arg)
		if err != nil {
			return
		}
		if u.Key == "" || !json.Valid(u.Value) {
			t.Fatalf("parseUpdate(%q) = %q=%q", arg, u.Key, u.Value)
		}
	})
}
