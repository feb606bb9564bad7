package jobmgr_test

import (
	"testing"

	"github.com/fluxq/fluxq/internal/jobmgr"
)

// BenchmarkSave is what every loop turn pays so that a failed commit can
// be undone: 10,000 live jobs (benchInstance).
func BenchmarkSave(b *testing.B) {
	_, jm := benchInstance(b)
	var c jobmgr.Checkpoint
	jm.Save(&c)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		jm.Save(&c)
	}
}
