package rset

import (
	"fmt"
	"strings"
	"testing"
)

// bigR returns an R of 1,000 ranks x 64 cores x 4 GPUs: compressed as
// flux-core writes it, or with one R_lite entry per rank.
func bigR(perRank bool) string {
	if !perRank {
		return `{"version":1,"execution":{"R_lite":[{"rank":"0-999","children":{"core":"0-63","gpu":"0-3"}}],` +
			`"nodelist":["node[0-999]"],"properties":{"batch":"0-499","debug":"500-999"},"starttime":1700000000,"expiration":1700003600}}`
	}
	var b strings.Builder
	b.WriteString(`{"version":1,"execution":{"R_lite":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"rank":"%d","children":{"core":"0-63","gpu":"0-3"}}`, i)
	}
	b.WriteString(`],"nodelist":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"node%d"`, i)
	}
	b.WriteString(`],"starttime":1700000000,"expiration":1700003600}}`)
	return b.String()
}

func BenchmarkParseMarshal(b *testing.B) {
	for _, perRank := range []bool{false, true} {
		name := "compressed"
		if perRank {
			name = "entry-per-rank"
		}
		data := []byte(bigR(perRank))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := Parse(data)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.MarshalJSON(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDifference(b *testing.B) {
	all := mustParse(b, bigR(false))
	// A job's allocation: half the cores and GPUs of every rank.
	half := mustParse(b, `{"version":1,"execution":{"R_lite":[{"rank":"0-999","children":{"core":"0-31","gpu":"0-1"}}],"nodelist":["node[0-999]"]}}`)
	b.Run("half of every rank", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d := all.Difference(half); d.IsEmpty() {
				b.Fatal("empty difference")
			}
		}
	})
	b.Run("identical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d := all.Difference(all); !d.IsEmpty() {
				b.Fatal("non-empty difference")
			}
		}
	})
}

// smallR is the R fluxsched's scheduler writes for a one-core job, which
// is parsed twice per job (fluxsched's SetR, the exec agent's Prepare).
const smallR = `{"execution":{"R_lite":[{"children":{"core":"0"},"rank":"0"}],"expiration":0,"nodelist":["vm"],"nslots":1,"starttime":1795721781.1110675},"version":1}`

func BenchmarkParseSmall(b *testing.B) {
	data := []byte(smallR)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
