package jobspec

import (
	"testing"
)

// TestRetries reads attributes.system.retry: absent is 0, a whole
// number 0-MaxRetry is itself, anything else is refused in words.
func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string // JSON, "" for absent
		want  int
		bad   bool
	}{
		{"absent", "", 0, false},
		{"zero", "0", 0, false},
		{"two", "2", 2, false},
		{"the most", "100", 100, false},
		{"too many", "101", 0, true},
		{"negative", "-1", 0, true},
		{"a fraction", "1.5", 0, true},
		{"huge", "1e400", 0, true},
		{"a string", `"2"`, 0, true},
		{"null", "null", 0, true},
	} {
		doc := minimal
		if tc.value != "" {
			doc = edit(`"duration":0`, `"duration":0,"retry":`+tc.value)
		}
		js, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := js.Retries()
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s: Retries() = %d, %v; want %d, refused %v", tc.name, got, err, tc.want, tc.bad)
		}
		if err != nil && err.Error() != "attributes.system.retry must be a whole number from 0 to 100" {
			t.Errorf("%s: error %q", tc.name, err)
		}
	}
}

// FuzzRetries: any retry value parses to a count in range or an error,
// never a panic.
func FuzzRetries(f *testing.F) {
	for _, s := range []string{"0", "3", "100", "101", "-1", "1.0", "1e2", `"x"`, "[]", "{}", "true", "9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		js, err := Parse([]byte(edit(`"duration":0`, `"duration":0,"retry":`+v)))
		if err != nil {
			return
		}
		n, err := js.Retries()
		if err == nil && (n < 0 || n > MaxRetry) {
			t.Fatalf("retry %s read as %d", v, n)
		}
	})
}
