package queue

import (
	"testing"

	"github.com/fluxq/fluxq/internal/jobspec"
)

// ReadmitCanonical holds a job to the requires of the queue it names now,
// not to those of the queue it left, and an update in place does not
// and the queue's requires in twice.
func TestReadmitRequires(t *testing.T) {
	set := mustCompile(t, admitTables())
	tests := []struct {
		name string
		own  map[string]any // the job's own constraints
		to   string         // the queue it moves to ("" stays)
		user User
		want string
	}{
		{"stays, none of its own", nil, "", alice, `{"properties":["batch"]}`},
		{"stays, its own", map[string]any{"properties": []string{"ssd"}}, "", alice, `{"and":[{"properties":["ssd"]},{"properties":["batch"]}]}`},
		{"moves, none of its own", nil, "debug", alice, `{"properties":["debug"]}`},
		{"moves, its own", map[string]any{"properties": []string{"ssd"}}, "debug", alice, `{"and":[{"properties":["ssd"]},{"properties":["debug"]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := jobspec.Options{}
			if tt.own != nil {
				opts.Constraints = tt.own
			}
			js := job(t, opts)
			if err := set.Admit(js, nil, tt.user); err != nil {
				t.Fatal(err)
			}
			if tt.to != "" {
				js.Attributes.System.Queue = tt.to
			}
			if _, err := set.ReadmitCanonical(js, "batch", nil, tt.user); err != nil {
				t.Fatal(err)
			}
			if got := string(js.Attributes.System.Constraints); got != tt.want {
				t.Errorf("constraints = %s, want %s", got, tt.want)
			}
		})
	}
}

// withoutProperties leaves alone what andProperties did not make.
func TestWithoutPropertiesLeavesOthers(t *testing.T) {
	for _, c := range []string{`{"properties":["other"]}`, `{"and":[{"properties":["a"]}]}`, `{"or":[{"properties":["a"]},{"properties":["batch"]}]}`, `not json`} {
		if got := string(withoutProperties([]byte(c), []string{"batch"})); got != c {
			t.Errorf("withoutProperties(%s) = %s", c, got)
		}
	}
}
