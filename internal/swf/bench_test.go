package swf

import (
	"bytes"
	"os"
	"testing"
)

func BenchmarkRead(b *testing.B) {
	for _, name := range []string{"lublin_256", "hpc2n-excerpt"} {
		data, err := os.ReadFile("../../testdata/swf/" + name + ".swf")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Read(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
