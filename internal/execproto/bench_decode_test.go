package execproto

import (
	"testing"

	"github.com/fluxq/fluxq/internal/wire"
)

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
