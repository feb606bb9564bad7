package fluid

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const maxID = ID(math.MaxUint64)

func TestFields(t *testing.T) {
	// RFC 19: 40 bits of timestamp, 14 of generator id, 10 of sequence.
	if diff := cmp.Diff(64, TimestampBits+GeneratorIDBits+SequenceBits); diff != "" {
		t.Errorf("field widths (-want +got):\n%s", diff)
	}
	tests := []struct {
		name          string
		ts            uint64
		gen, seq      uint32
		want          ID
		wantTimestamp uint64
	}{
		{"zero", 0, 0, 0, 0, 0},
		{"seq only", 0, 0, 1023, 1023, 0},
		{"gen only", 0, 1, 0, 1 << 10, 0},
		{"ts only", 1, 0, 0, 1 << 24, 1},
		{"all ones", MaxTimestamp, MaxGeneratorID, MaxSequence, maxID, MaxTimestamp},
		{"mixed", 12345, 678, 9, ID(12345<<24 | 678<<10 | 9), 12345},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New(tt.ts, tt.gen, tt.seq)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("New (-want +got):\n%s", diff)
			}
			fields := []uint64{got.Timestamp(), uint64(got.GeneratorID()), uint64(got.Sequence())}
			if diff := cmp.Diff([]uint64{tt.wantTimestamp, uint64(tt.gen), uint64(tt.seq)}, fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []struct {
		ts       uint64
		gen, seq uint32
	}{{MaxTimestamp + 1, 0, 0}, {0, MaxGeneratorID + 1, 0}, {0, 0, MaxSequence + 1}} {
		if _, err := New(bad.ts, bad.gen, bad.seq); err == nil {
			t.Errorf("New(%d, %d, %d) succeeded, want error", bad.ts, bad.gen, bad.seq)
		}
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		id   ID
		f    Format
		want string
	}{
		// RFC 19: "the FLUID 6731191091817518 ... SHALL be represented in
		// F58 as ƒuZZybuNNy".
		{"rfc19 f58", 6731191091817518, F58, "ƒuZZybuNNy"},
		{"rfc19 f58 plain", 6731191091817518, F58Plain, "fuZZybuNNy"},
		// RFC 19: "A FLUID is a 64-bit integer, e.g. 6731191091817518".
		{"rfc19 dec", 6731191091817518, Dec, "6731191091817518"},
		// RFC 19 hex examples: 0x17e9fb8df16c2e, 0xedaf97d000000.
		{"rfc19 hex", 0x17e9fb8df16c2e, Hex, "0x17e9fb8df16c2e"},
		{"rfc19 hex 2", 0xedaf97d000000, Hex, "0xedaf97d000000"},
		// RFC 19 dothex examples: 0017.e9fb.8df1.6c2e, 000e.daf9.7d00.0000.
		{"rfc19 dothex", 0x17e9fb8df16c2e, Dothex, "0017.e9fb.8df1.6c2e"},
		{"rfc19 dothex 2", 0xedaf97d000000, Dothex, "000e.daf9.7d00.0000"},
		// RFC 19 words examples; they are the same two FLUIDs.
		{"rfc19 words", 0x17e9fb8df16c2e, Words, "reform-remote-galileo--heart-package-academy"},
		{"rfc19 words 2", 0xedaf97d000000, Words, "random-idea-yoyo--sugar-printer-academy"},
		// RFC 19 F58 examples: ƒZemgA8Bzf is the second FLUID above.
		{"rfc19 f58 example", 0xedaf97d000000, F58, "ƒZemgA8Bzf"},
		// flux-core libutil/test/fluid.c f58_tests.
		{"flux 0", 0, F58, "ƒ1"},
		{"flux 1", 1, F58, "ƒ2"},
		{"flux 57", 57, F58, "ƒz"},
		{"flux 1234", 1234, F58, "ƒNH"},
		{"flux 1888", 1888, F58, "ƒZZ"},
		{"flux 3363", 3363, F58, "ƒzz"},
		{"flux 3364", 3364, F58, "ƒ211"},
		{"flux 4369", 4369, F58, "ƒ2JL"},
		{"flux 65535", 65535, F58, "ƒLUv"},
		{"flux 4294967295", 4294967295, F58, "ƒ7YXq9G"},
		{"flux 633528662", 633528662, F58, "ƒxyzzy"},
		{"flux max-1", maxID - 1, F58, "ƒjpXCZedGfVP"},
		{"flux max", maxID, F58, "ƒjpXCZedGfVQ"},
		{"flux 0 plain", 0, F58Plain, "f1"},
		{"flux max plain", maxID, F58Plain, "fjpXCZedGfVQ"},
		// Other encodings at the edges.
		{"dec 0", 0, Dec, "0"},
		{"dec max", maxID, Dec, "18446744073709551615"},
		{"hex 0", 0, Hex, "0x0"},
		{"hex max", maxID, Hex, "0xffffffffffffffff"},
		{"dothex 0", 0, Dothex, "0000.0000.0000.0000"},
		{"dothex 1", 1, Dothex, "0000.0000.0000.0001"},
		{"dothex max", maxID, Dothex, "ffff.ffff.ffff.ffff"},
		{"words 0", 0, Words, "academy-academy-academy--academy-academy-academy"},
		{"words max", maxID, Words, "natural-analyze-verbal--natural-analyze-verbal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.id.Encode(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Encode(%d, %v) (-want +got):\n%s", uint64(tt.id), tt.f, diff)
			}
			back, err := Parse(got)
			if err != nil {
				t.Fatalf("Parse(%q): %v", got, err)
			}
			if diff := cmp.Diff(tt.id, back); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", got, diff)
			}
		})
	}
	if _, err := ID(1).Encode(Format(99)); err == nil {
		t.Error("Encode(Format(99)) succeeded, want error")
	}
	if diff := cmp.Diff("ƒuZZybuNNy", ID(6731191091817518).String()); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ID
	}{
		// RFC 19 F58 examples.
		{"rfc19 ƒuZZybuNNy", "ƒuZZybuNNy", 6731191091817518},
		{"rfc19 ƒZemgA8Bzf", "ƒZemgA8Bzf", 0xedaf97d000000},
		{"rfc19 ƒ278oEf7zGf", "ƒ278oEf7zGf", 0x1d2de90a000000},
		// RFC 19: "a FLUID prefixed with an ASCII lowercase f will also be
		// decoded as F58".
		{"rfc19 f fallback", "fuZZybuNNy", 6731191091817518},
		// flux-core f58_alt_tests: leading zero digits are accepted.
		{"flux f111", "f111", 0},
		{"flux f1", "f1", 0},
		{"flux fjpXCZedGfVQ", "fjpXCZedGfVQ", maxID},
		{"twelve digits", "f1jpXCZedGfVQ", maxID},
		// flux-core fluid_parse_tests.
		{"flux dec 1234", "1234", 1234},
		{"flux dec 6731191091817518", "6731191091817518", 6731191091817518},
		{"flux dec max-1", "18446744073709551614", maxID - 1},
		{"flux dec max", "18446744073709551615", maxID},
		{"flux hex 0x0", "0x0", 0},
		{"flux hex 0x39", "0x39", 57},
		{"flux hex 0x4d2", "0x4d2", 1234},
		{"flux hex 0x25c2e156", "0x25c2e156", 633528662},
		{"flux hex 0x17e9fb8df16c2e", "0x17e9fb8df16c2e", 6731191091817518},
		{"flux hex max", "0xffffffffffffffff", maxID},
		{"flux dothex 0.0.0.0", "0.0.0.0", 0},
		{"flux dothex 1", "0000.0000.0000.0001", 1},
		{"flux dothex short groups", "0.0.0.0039", 57},
		{"flux dothex 04d2", "0000.0000.0000.04d2", 1234},
		{"flux dothex 0.0.0.ffff", "0.0.0.ffff", 65535},
		{"flux dothex ffff.ffff", "0000.0000.ffff.ffff", 4294967295},
		{"flux dothex max", "ffff.ffff.ffff.ffff", maxID},
		// RFC 19 words, any case, as mnemonicode lowercases.
		{"rfc19 words", "reform-remote-galileo--heart-package-academy", 6731191091817518},
		{"words upper case", "REFORM-Remote-galileo--heart-package-academy", 6731191091817518},
		{"words single dashes", "reform-remote-galileo-heart-package-academy", 6731191091817518},
		{"hex upper digits", "0xFFFF", 65535},
		{"dec leading zeros", "007", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		// flux-core fluid_parse error cases: "", "boo", "f", "-1".
		{"flux empty", "", `error parsing jobid "": empty string`},
		{"flux boo", "boo", `error parsing jobid "boo": invalid decimal digit 'b'`},
		{"flux f", "f", `error parsing jobid "f": no F58 digits after the prefix`},
		{"flux -1", "-1", `error parsing jobid "-1": must not be negative`},
		// flux-core f58 decode errors: "1234" is decimal here, the rest fail.
		{"flux aaa", "aaa", `error parsing jobid "aaa": invalid decimal digit 'a'`},
		{"flux flux", "flux", `error parsing jobid "flux": invalid F58 digit 'l'`},
		{"flux f1230", "f1230", `error parsing jobid "f1230": invalid F58 digit '0'`},
		{"flux x1", "x1", `error parsing jobid "x1": invalid decimal digit 'x'`},
		{"bare ƒ", "ƒ", `error parsing jobid "ƒ": no F58 digits after the prefix`},
		{"f58 O", "fO", `error parsing jobid "fO": invalid F58 digit 'O'`},
		{"f58 I", "ƒI", `error parsing jobid "ƒI": invalid F58 digit 'I'`},
		{"f58 too long", "f1111111111111", `error parsing jobid "f1111111111111": too many F58 digits (at most 12)`},
		{"f58 overflow", "fjpXCZedGfVR", `error parsing jobid "fjpXCZedGfVR": F58 value exceeds 64 bits`},
		{"f58 twelve overflow", "fzzzzzzzzzzzz", `error parsing jobid "fzzzzzzzzzzzz": F58 value exceeds 64 bits`},
		{"f58 non-ascii", "fé", `error parsing jobid "fé": invalid F58 digit 'é'`},
		{"f58 upper F prefix", "FuZZybuNNy", `error parsing jobid "FuZZybuNNy": invalid decimal digit 'F'`},
		{"only whitespace", " \t\n", `error parsing jobid "": empty string`},
		{"dec overflow", "18446744073709551616", `error parsing jobid "18446744073709551616": value exceeds 64 bits`},
		{"dec plus", "+5", `error parsing jobid "+5": invalid decimal digit '+'`},
		{"hex empty", "0x", `error parsing jobid "0x": no digits after 0x`},
		{"hex bad digit", "0xfg", `error parsing jobid "0xfg": invalid hex digit 'g'`},
		{"hex overflow", "0x10000000000000000", `error parsing jobid "0x10000000000000000": value exceeds 64 bits`},
		{"hex upper prefix", "0X10", `error parsing jobid "0X10": invalid decimal digit 'X'`},
		{"dothex 3 groups", "0.0.0", `error parsing jobid "0.0.0": dotted hex needs 4 groups of 1-4 hex digits`},
		{"dothex 5 groups", "0.0.0.0.0", `error parsing jobid "0.0.0.0.0": dotted hex needs 4 groups of 1-4 hex digits`},
		{"dothex empty group", "0..0.0", `error parsing jobid "0..0.0": dotted hex needs 4 groups of 1-4 hex digits`},
		{"dothex wide group", "1ffff.0.0.0", `error parsing jobid "1ffff.0.0.0": dotted hex needs 4 groups of 1-4 hex digits`},
		{"dothex bad digit", "0.0.0.0g", `error parsing jobid "0.0.0.0g": invalid hex digit 'g'`},
		{"decimal point", "1.5", `error parsing jobid "1.5": dotted hex needs 4 groups of 1-4 hex digits`},
		// flux-core: "a-a-a--a-a-a" fails on unknown words.
		{"flux unknown words", "a-a-a--a-a-a", `error parsing jobid "a-a-a--a-a-a": unknown word "a"`},
		{"words too few", "reform-remote-galileo", `error parsing jobid "reform-remote-galileo": words encoding needs 6 words, got 3`},
		{"words too many", "academy-academy-academy--academy-academy-academy-academy",
			`error parsing jobid "academy-academy-academy--academy-academy-academy-academy": words encoding needs 6 words, got 7`},
		// mnemonicode's seven 3-byte-tail words never belong in a FLUID.
		{"words tail word", "ego-academy-academy--academy-academy-academy", `error parsing jobid "ego-academy-academy--academy-academy-academy": unknown word "ego"`},
		// 1625 + 1625*1626 + 1625*1626^2 is past 2^32.
		{"words past 32 bits", "amen-amen-amen--academy-academy-academy",
			`error parsing jobid "amen-amen-amen--academy-academy-academy": words do not encode a 64-bit value`},
		{"emoji", "😃", `error parsing jobid "😃": emoji encoding is not supported`},
		{"long input is cut", strings.Repeat("9", 100),
			`error parsing jobid "` + strings.Repeat("9", 64) + `"...: value exceeds 64 bits`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %d, want error", tt.in, uint64(got))
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Parse(%q) error (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	type rec struct {
		ID ID `json:"id"`
	}
	for _, id := range []ID{0, 6731191091817518, maxID} {
		b, err := json.Marshal(rec{id})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":` + mustEncode(t, id, Dec) + `}`
		if diff := cmp.Diff(want, string(b)); diff != "" {
			t.Errorf("Marshal (-want +got):\n%s", diff)
		}
		var back rec
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(id, back.ID); diff != "" {
			t.Errorf("Unmarshal (-want +got):\n%s", diff)
		}
	}
	for _, bad := range []string{`{"id":-1}`, `{"id":1.5}`, `{"id":1e3}`, `{"id":"ƒ1"}`, `{"id":18446744073709551616}`} {
		var r rec
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("Unmarshal(%s) = %d, want error", bad, uint64(r.ID))
		}
	}
	r := rec{ID: 7}
	if err := json.Unmarshal([]byte(`{"id":null}`), &r); err != nil || r.ID != 7 {
		t.Errorf("Unmarshal null: id %d, err %v; want 7, nil", uint64(r.ID), err)
	}
}

func mustEncode(t *testing.T, id ID, f Format) string {
	t.Helper()
	s, err := id.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWordList(t *testing.T) {
	if diff := cmp.Diff(mnBase, len(mnWords)); diff != "" {
		t.Fatalf("word count (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(len(mnWords), len(mnIndex)); diff != "" {
		t.Errorf("duplicate words (-want +got):\n%s", diff)
	}
	// Spot checks against mnemonicode's list: first, last, and the words
	// of the RFC 19 examples, whose positions the examples pin down.
	for word, idx := range map[string]uint32{"academy": 0, "acrobat": 1, "amen": 1625, "verbal": 1624} {
		if diff := cmp.Diff(idx, mnIndex[word]); diff != "" {
			t.Errorf("index of %q (-want +got):\n%s", word, diff)
		}
	}
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int64) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }

func TestGenerator(t *testing.T) {
	type step struct {
		now     int64 // ms after the epoch
		wantTS  uint64
		wantSeq uint32
	}
	tests := []struct {
		name  string
		genID uint32
		last  ID
		steps []step
	}{
		{"forward", 3, 0, []step{{0, 0, 0}, {5, 5, 0}, {9, 9, 0}}},
		{"same ms counts up", 3, 0, []step{{7, 7, 0}, {7, 7, 1}, {7, 7, 2}, {8, 8, 0}}},
		{"clock goes backwards", 3, 0, []step{{100, 100, 0}, {50, 100, 1}, {99, 100, 2}, {101, 101, 0}}},
		{"clock before epoch", 3, 0, []step{{-5000, 0, 0}, {-1, 0, 1}, {0, 0, 2}}},
		{"restart after last", 3, ID(500<<24 | 9<<10 | 17), []step{{10, 501, 0}, {10, 501, 1}, {600, 600, 0}}},
		{"restart with clock ahead", 3, ID(500<<24 | 3<<10 | 1023), []step{{900, 900, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewGenerator(epoch, tt.genID, tt.last)
			if err != nil {
				t.Fatal(err)
			}
			prev := tt.last
			for i, s := range tt.steps {
				id, err := g.Next(at(s.now))
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got := []uint64{id.Timestamp(), uint64(id.GeneratorID()), uint64(id.Sequence())}
				want := []uint64{s.wantTS, uint64(tt.genID), uint64(s.wantSeq)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("step %d at %dms (-want +got):\n%s", i, s.now, diff)
				}
				if id <= prev && !(i == 0 && tt.last == 0) {
					t.Errorf("step %d: id %d not above %d", i, uint64(id), uint64(prev))
				}
				prev = id
			}
		})
	}
}

func TestGeneratorSequenceWrap(t *testing.T) {
	g, err := NewGenerator(epoch, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var prev ID
	for i := range 3 * (MaxSequence + 1) {
		id, err := g.Next(at(42)) // the clock stands still
		if err != nil {
			t.Fatal(err)
		}
		// 1024 ids per millisecond, then the next millisecond is borrowed.
		want := []uint64{42 + uint64(i)/(MaxSequence+1), uint64(i) % (MaxSequence + 1)}
		if diff := cmp.Diff(want, []uint64{id.Timestamp(), uint64(id.Sequence())}); diff != "" {
			t.Fatalf("id %d (-want +got):\n%s", i, diff)
		}
		if i > 0 && id <= prev {
			t.Fatalf("id %d: %d not above %d", i, uint64(id), uint64(prev))
		}
		prev = id
	}
	// The borrowed milliseconds count as seen: a clock that then reads 43
	// continues after them rather than reissuing ms 43.
	id, err := g.Next(at(43))
	if err != nil {
		t.Fatal(err)
	}
	if id <= prev {
		t.Errorf("after borrowing: %d not above %d", uint64(id), uint64(prev))
	}
}

// A generator restarted from the last id it issued keeps increasing, across
// every kind of clock step, as flux-core's restart test does with 64K
// restarts.
func TestGeneratorRestart(t *testing.T) {
	steps := []struct {
		name string
		now  int64
		n    int // ids to draw before the restart
	}{
		{"forward", 10, 1},
		{"same ms", 10, 3},
		{"backwards", 2, 2},
		{"before epoch", -100, 1},
		{"sequence wrap", 20, MaxSequence + 5},
		{"far forward", 1 << 30, 1},
		{"backwards again", 1 << 20, 1},
	}
	var last ID
	for round := range 3 {
		for _, s := range steps {
			for _, genID := range []uint32{0, 5, MaxGeneratorID} {
				g, err := NewGenerator(epoch, genID, last)
				if err != nil {
					t.Fatalf("round %d %s: NewGenerator: %v", round, s.name, err)
				}
				for range s.n {
					id, err := g.Next(at(s.now))
					if err != nil {
						t.Fatalf("round %d %s: %v", round, s.name, err)
					}
					if last != 0 && id <= last {
						t.Fatalf("round %d %s gen %d: id %d not above %d", round, s.name, genID, uint64(id), uint64(last))
					}
					last = id
				}
			}
		}
	}
}

func TestGeneratorErrors(t *testing.T) {
	if _, err := NewGenerator(epoch, MaxGeneratorID+1, 0); err == nil {
		t.Error("NewGenerator with id 16384 succeeded, want error")
	}
	last, _ := New(MaxTimestamp, 0, 0)
	if _, err := NewGenerator(epoch, 0, last); err != ErrExhausted {
		t.Errorf("NewGenerator after the last timestamp: %v, want ErrExhausted", err)
	}
	g, err := NewGenerator(epoch, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// RFC 19: 40 bits of milliseconds is about 34.8 years.
	if _, err := g.Next(at(MaxTimestamp)); err != nil {
		t.Fatalf("last millisecond: %v", err)
	}
	if _, err := g.Next(at(MaxTimestamp + 1)); err != ErrExhausted {
		t.Errorf("past the last millisecond: %v, want ErrExhausted", err)
	}
	g2, _ := NewGenerator(epoch, 0, 0)
	if _, err := g2.Next(epoch.AddDate(300, 0, 0)); err != ErrExhausted {
		t.Errorf("centuries later: %v, want ErrExhausted", err)
	}
	// Filling the last millisecond leaves nothing to borrow.
	g3, _ := NewGenerator(epoch, 0, 0)
	for range MaxSequence + 1 {
		if _, err := g3.Next(at(MaxTimestamp)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g3.Next(at(MaxTimestamp)); err != ErrExhausted {
		t.Errorf("sequence wrap in the last millisecond: %v, want ErrExhausted", err)
	}
}

func BenchmarkEncodeF58(b *testing.B) {
	id := ID(6731191091817518)
	for range b.N {
		_, _ = id.Encode(F58)
	}
}

func BenchmarkParseF58(b *testing.B) {
	for range b.N {
		if _, err := Parse("ƒuZZybuNNy"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseWords(b *testing.B) {
	for range b.N {
		if _, err := Parse("reform-remote-galileo--heart-package-academy"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	g, _ := NewGenerator(epoch, 1, 0)
	now := at(1)
	for range b.N {
		if _, err := g.Next(now); err != nil {
			b.Fatal(err)
		}
	}
}
