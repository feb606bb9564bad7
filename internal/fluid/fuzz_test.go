package fluid

import (
	"testing"
)

var allFormats = []Format{F58, F58Plain, Dec, Hex, Dothex, Words}

func FuzzParseFLUID(f *testing.F) {
	for _, s := range []string{
		// RFC 19 examples.
		"6731191091817518", "ƒuZZybuNNy", "ƒZemgA8Bzf", "ƒ278oEf7zGf",
		"0x17e9fb8df16c2e", "0xedaf97d000000", "0017.e9fb.8df1.6c2e",
		"000e.daf9.7d00.0000", "reform-remote-galileo--heart-package-academy",
		"random-idea-yoyo--sugar-printer-academy", "🚹💂🙌😳💱🏃",
		// flux-core test vectors and error cases.
		"ƒ1", "f111", "fjpXCZedGfVQ", "18446744073709551615", "0xffffffffffffffff",
		"ffff.ffff.ffff.ffff", "0.0.0.0039", "", "boo", "f", "-1", "flux", "f1230",
		"x1", "a-a-a--a-a-a", " 0xffff   ",
		// Overflow and shape edges.
		"fjpXCZedGfVR", "f1jpXCZedGfVQ", "18446744073709551616", "0x", "1ffff.0.0.0",
		"amen-amen-amen--academy-academy-academy", "ƒ", "f\xff", "0x0.1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			return
		}
		for _, fm := range allFormats {
			s1, err := id.Encode(fm)
			if err != nil {
				t.Fatalf("Encode(%d, %v): %v", uint64(id), fm, err)
			}
			id1, err := Parse(s1)
			if err != nil {
				t.Fatalf("Parse(%q) = %d; Encode %v = %q does not parse: %v", s, uint64(id), fm, s1, err)
			}
			if id1 != id {
				t.Fatalf("Parse(%q) = %d; Encode %v = %q parses to %d", s, uint64(id), fm, s1, uint64(id1))
			}
			if s2, _ := id1.Encode(fm); s2 != s1 {
				t.Fatalf("Encode %v not canonical: %q then %q", fm, s1, s2)
			}
		}
		b, _ := id.MarshalJSON()
		var back ID
		if err := back.UnmarshalJSON(b); err != nil || back != id {
			t.Fatalf("JSON %s: got %d, %v; want %d", b, uint64(back), err, uint64(id))
		}
	})
}

// FuzzEncodeFLUID starts from arbitrary 64-bit values, which string inputs
// reach only slowly, and checks that every encoding decodes to the same ID.
func FuzzEncodeFLUID(f *testing.F) {
	for _, v := range []uint64{0, 1, 57, 58, 6731191091817518, 0xedaf97d000000, 1<<32 - 1, 1 << 32, 1<<64 - 1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint64) {
		id := ID(v)
		if id.Timestamp()<<timestampShift|uint64(id.GeneratorID())<<generatorShift|uint64(id.Sequence()) != v {
			t.Fatalf("fields of %d do not reassemble", v)
		}
		for _, fm := range allFormats {
			s, err := id.Encode(fm)
			if err != nil {
				t.Fatalf("Encode(%d, %v): %v", v, fm, err)
			}
			back, err := Parse(s)
			if err != nil || back != id {
				t.Fatalf("Encode(%d, %v) = %q parses to %d, %v", v, fm, s, uint64(back), err)
			}
		}
	})
}
