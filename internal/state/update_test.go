package state

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUpdateKey(t *testing.T) {
	tests := []struct {
		key, want, err string
	}{
		{"duration", KeyDuration, ""},
		{"queue", KeyQueue, ""},
		{"name", KeyName, ""},
		{"urgency", KeyUrgency, ""},
		{"job.name", KeyName, ""},
		{"attributes.system.duration", KeyDuration, ""},
		{"attributes.user.tag", "attributes.user.tag", ""},
		{"attributes.user.a.b", "attributes.user.a.b", ""},
		{"attributes.user.", "", "not supported"},
		{"attributes.user..x", "", "empty part"},
		{"color", "", "update of attributes.system.color is not supported"},
		{"tasks.0.command", "", "update of tasks.0.command is not supported"},
		{"resources", "", "not supported"},
		{"", "", "empty key"},
		{"a\x00b", "", `"attributes.system.a\x00b"`},
	}
	for _, tt := range tests {
		got, err := UpdateKey(tt.key)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("UpdateKey(%q) = %q, %v; want an error with %q", tt.key, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("UpdateKey(%q) = %q, %v; want %q", tt.key, got, err, tt.want)
		}
	}
}

func TestDurationValue(t *testing.T) {
	tests := []struct {
		value   string // JSON
		current float64
		want    float64
		err     string
	}{
		{`60`, 0, 60, ""},
		{`"1h"`, 0, 3600, ""},
		{`"+10m"`, 600, 1200, ""},
		{`"-5m"`, 600, 300, ""},
		{`"inf"`, 600, 0, ""},
		{`0`, 600, 0, ""},
		{`"-10m"`, 600, 0, "would leave the job no time (its limit is 10m)"},
		{`"+1m"`, 0, 0, "has no time limit"},
		{`"+inf"`, 60, 0, "not a change"},
		{`-5`, 60, 0, "invalid value -5"},
		{`"soon"`, 0, 0, "invalid"},
		{`"40000d"`, 0, 0, "longer than the longest allowed"},
		{`"+40000d"`, 60, 0, "longer than the longest allowed"},
		{`true`, 0, 0, "want seconds"},
	}
	for _, tt := range tests {
		var v any
		d := json.NewDecoder(strings.NewReader(tt.value))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got, err := durationValue(v, tt.current)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("durationValue(%s, %v) = %v, %v; want an error with %q", tt.value, tt.current, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("durationValue(%s, %v) = %v, %v; want %v", tt.value, tt.current, got, err, tt.want)
		}
	}
}

func TestSetPath(t *testing.T) {
	doc := map[string]any{"attributes": map[string]any{"system": map[string]any{"duration": 1}, "user": "flat"}}
	if err := setPath(doc, "attributes.system.job.name", "x"); err != nil {
		t.Fatal(err)
	}
	if got := doc["attributes"].(map[string]any)["system"].(map[string]any)["job"].(map[string]any)["name"]; got != "x" {
		t.Errorf("name = %v", got)
	}
	if err := setPath(doc, "attributes.user.tag", "x"); err == nil || !strings.Contains(err.Error(), "attributes.user is not an object") {
		t.Errorf("set under a string: %v", err)
	}
}

// FuzzUpdateKey: any key resolves or is refused in one line, never a
// panic; a key resolved is one fluxq can update.
func FuzzUpdateKey(f *testing.F) {
	for _, s := range []string{"duration", "name", "attributes.user.x", "tasks.0", "a..b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		got, err := UpdateKey(key)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("two-line error for %q: %v", key, err)
			}
			return
		}
		if got != KeyDuration && got != KeyQueue && got != KeyName && got != KeyUrgency && !strings.HasPrefix(got, userPrefix) {
			t.Fatalf("UpdateKey(%q) = %q", key, got)
		}
	})
}

// FuzzDurationValue: any string value is a duration within the bounds or
// a refusal, never a panic or a negative limit.
func FuzzDurationValue(f *testing.F) {
	for _, s := range []string{"1h", "+10m", "-5m", "inf", "-inf", "+0", "1e400s"} {
		f.Add(s, 600.0)
	}
	f.Fuzz(func(t *testing.T, s string, current float64) {
		if current < 0 || current > 1e9 || current != current {
			return
		}
		got, err := durationValue(s, current)
		if err == nil && (got < 0 || got != got) {
			t.Fatalf("durationValue(%q, %v) = %v", s, current, got)
		}
	})
}
