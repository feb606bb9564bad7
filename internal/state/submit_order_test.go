package state

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/store"
)

// A large batch is checked partly on every core, yet the refusal is the
// one checking the requests whole, in order, would give: the first
// request refused, and its first check that fails.
func TestSubmitFirstRefusal(t *testing.T) {
	good := spec(t, jobspec.Options{Command: []string{"true"}})
	queue := spec(t, jobspec.Options{Command: []string{"true"}, Queue: "nosuch"})
	dep := spec(t, jobspec.Options{Command: []string{"true"}, Dependencies: []string{"afterok:ƒ2P4d5"}})
	depQueue := spec(t, jobspec.Options{Command: []string{"true"}, Queue: "nosuch", Dependencies: []string{"afterok:ƒ2P4d5"}})
	batch := func(bad map[int]SubmitRequest) []SubmitRequest {
		reqs := make([]SubmitRequest, 1000)
		for i := range reqs {
			reqs[i] = SubmitRequest{Jobspec: good, UserID: 5, Owner: true, Urgency: 16}
			if r, ok := bad[i]; ok {
				reqs[i] = r
			}
		}
		return reqs
	}
	for _, c := range []struct {
		name string
		bad  map[int]SubmitRequest
		want string
	}{
		{"queue before urgency", map[int]SubmitRequest{300: {Jobspec: queue, Owner: true, Urgency: 16}, 700: {Jobspec: good, Owner: true, Urgency: 99}}, "Invalid queue 'nosuch'"},
		{"urgency before queue", map[int]SubmitRequest{300: {Jobspec: good, Owner: true, Urgency: 99}, 700: {Jobspec: queue, Owner: true, Urgency: 16}}, "urgency value is out of range"},
		{"dependency before queue", map[int]SubmitRequest{300: {Jobspec: dep, Owner: true, Urgency: 16}, 700: {Jobspec: queue, Owner: true, Urgency: 16}}, "unknown job id"},
		{"queue before dependency", map[int]SubmitRequest{300: {Jobspec: queue, Owner: true, Urgency: 16}, 700: {Jobspec: dep, Owner: true, Urgency: 16}}, "Invalid queue 'nosuch'"},
		{"queue before dependency in one request", map[int]SubmitRequest{500: {Jobspec: depQueue, Owner: true, Urgency: 16}}, "Invalid queue 'nosuch'"},
		{"bad jobspec before queue", map[int]SubmitRequest{300: {Jobspec: []byte(`{"version":1}`), Owner: true, Urgency: 16}, 700: {Jobspec: queue, Owner: true, Urgency: 16}}, "resources"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t)
			err := st.Update(func(tx *store.Tx) error {
				_, _, err := Submit(tx, time.Now(), batch(c.bad), nil)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if c.want == "unknown job id" && !errors.Is(err, ErrUnknownJob) {
				t.Fatalf("error %v is not ErrUnknownJob", err)
			}
		})
	}
}
