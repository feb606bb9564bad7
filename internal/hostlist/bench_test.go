package hostlist

import "testing"

func BenchmarkExpandCompress(b *testing.B) {
	h := MustParse("node[0-99999]")
	b.ReportAllocs()
	for b.Loop() {
		names := h.Expand()
		if s := New(names...).String(); s != "node[0-99999]" {
			b.Fatal(s)
		}
	}
}

func BenchmarkExpand(b *testing.B) {
	h := MustParse("node[0-99999]")
	b.ReportAllocs()
	for b.Loop() {
		if len(h.Expand()) != 100000 {
			b.Fatal("short")
		}
	}
}

func BenchmarkCompress(b *testing.B) {
	names := MustParse("node[0-99999]").Expand()
	b.ReportAllocs()
	for b.Loop() {
		if s := New(names...).String(); s != "node[0-99999]" {
			b.Fatal(s)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	in := "mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581,584,587-589,592,594,597,600-602,605,608,610,618-622,627,634,636-670,687-696,699-733,735-742,744-760,762-773],login[1-2],node[0000-9999]-ib"
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFind(b *testing.B) {
	h := MustParse("mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581,584,587-589,592,594,597,600-602,605,608,610,618-622,627,634,636-670,687-696,699-733,735-742,744-760,762-773]")
	b.ReportAllocs()
	for b.Loop() {
		if h.Find("mcr770") < 0 {
			b.Fatal("not found")
		}
	}
}
