package client

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
)

// benchSpec is a jobspec the size `fluxq submit true` makes: about 1.7 KB,
// most of it the submitter's environment.
func benchSpec() []byte {
	var env bytes.Buffer
	for i := range 30 {
		if i > 0 {
			env.WriteByte(',')
		}
		env.WriteString(`"VARIABLE_` + strconv.Itoa(i) + `":"/etc/ssl/certs/ca-certificates.crt"`)
	}
	return []byte(`{"attributes":{"system":{"cwd":"/tmp","duration":0.0,"environment":{` + env.String() +
		`}}},"resources":[{"count":1,"label":"task","type":"slot","with":[{"count":1,"type":"core"}]}],` +
		`"tasks":[{"command":["true"],"count":{"per_slot":1},"slot":"task"}],"version":1}`)
}

// The issue: `fluxq submit --cc 1-10000 true` with no fluxsched running
// stores 10,000 jobs at 10,000/s or more; this is the store's share, one
// direct Submit of 10,000 jobs into a fresh store.
func BenchmarkDirectSubmit10000(b *testing.B) {
	spec := benchSpec()
	jobs := make([]api.SubmitJob, 10000)
	for i := range jobs {
		jobs[i] = api.SubmitJob{Jobspec: spec, Urgency: 16}
	}
	for b.Loop() {
		b.StopTimer()
		d := &conn{t: newDirect(Options{StateDir: b.TempDir()})}
		b.StartTimer()
		if _, err := d.Submit(context.Background(), jobs); err != nil {
			b.Fatal(err)
		}
	}
}
