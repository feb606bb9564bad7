package idset

import (
	"strconv"
	"strings"
	"testing"
)

// thousandRanges is 1,000 ranges of 1,000 ids each with one-id gaps:
// 1,000,000 ids in all.
func thousandRanges() string {
	var b strings.Builder
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		lo := i * 1001
		b.WriteString(strconv.Itoa(lo) + "-" + strconv.Itoa(lo+999))
	}
	return b.String()
}

func BenchmarkParseString(b *testing.B) {
	in := thousandRanges()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(in)
		if err != nil {
			b.Fatal(err)
		}
		if s.Count() != 1000000 {
			b.Fatal(s.Count())
		}
		if out := s.String(); len(out) != len(in) {
			b.Fatal(len(out))
		}
	}
}

func BenchmarkUnion(b *testing.B) {
	a := MustParse(thousandRanges())
	o := FromRanges([]Range{{500, 600000}, {700000, 700500}, {999000, 2000000}})
	b.ReportAllocs()
	for b.Loop() {
		_ = a.Union(o)
	}
}

func BenchmarkContains(b *testing.B) {
	a := MustParse(thousandRanges())
	b.ReportAllocs()
	id := uint(0)
	for b.Loop() {
		_ = a.Contains(id)
		id = (id + 7919) % 1001000
	}
}
