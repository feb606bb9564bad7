package jobspec

import (
	"strings"
	"testing"
)

func TestParseMemory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  string
	}{
		{"512M", 512 << 20, ""},
		{"4G", 4 << 30, ""},
		{"1.5T", 3 << 39, ""},
		{"4g", 4 << 30, ""},
		{"4GB", 4 << 30, ""},
		{"4GiB", 4 << 30, ""},
		{"2048", 2048 << 20, ""}, // Slurm: a bare number is megabytes
		{"64K", 64 << 10, ""},
		{"1P", 1 << 50, ""},
		{"", 0, "invalid memory size"},
		{"G", 0, "invalid memory size"},
		{"-1G", 0, "invalid memory size"},
		{"4X", 0, "invalid memory size"},
		{"0", 0, "must be more than 0"},
		{"2E", 0, "invalid memory size"},
		{"2000P", 0, "over the largest allowed, 1E"},
		{"1e400G", 0, "invalid memory size"},
	} {
		got, err := ParseMemory(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseMemory(%q) = %d, %v; want error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// A Fluxion jobspec asks for memory inside the slot; it is read unchanged
// and its size lands in Counts.
func TestMemoryVertex(t *testing.T) {
	const fluxion = `{"version":1,"resources":[{"type":"node","count":1,"with":[{"type":"slot","count":2,"label":"task","with":[{"type":"core","count":1},{"type":"memory","count":4,"unit":"GB"}]}]}],"tasks":[{"command":["app"],"slot":"task","count":{"per_slot":1}}],"attributes":{"system":{"duration":0}}}`
	for _, tc := range []struct {
		name, in string
		mem      uint64
		err      string
	}{
		{"fluxion", fluxion, 4 << 30, ""},
		{"no unit is GB", strings.Replace(fluxion, `,"unit":"GB"`, ``, 1), 4 << 30, ""},
		{"MB", strings.Replace(fluxion, `"count":4,"unit":"GB"`, `"count":1536,"unit":"MB"`, 1), 1536 << 20, ""},
		{"bad unit", strings.Replace(fluxion, `"unit":"GB"`, `"unit":"parsecs"`, 1), 0, `slot memory unit "parsecs" is not one of`},
		{"zero", strings.Replace(fluxion, `"count":4,`, `"count":0,`, 1), 0, "slot memory count must be >= 1"},
		{"too much", strings.Replace(fluxion, `"count":4,"unit":"GB"`, `"count":2000000,"unit":"PB"`, 1), 0, "slot memory must be at most 1E"},
		{"twice", strings.Replace(fluxion, `{"type":"core","count":1}`, `{"type":"memory","count":1}`, 1), 0, "slot with must list memory only once"},
		{"no core", strings.Replace(fluxion, `{"type":"core","count":1},`, ``, 1), 0, "requires a core in each slot"},
		{"total over 1E", strings.Replace(strings.Replace(fluxion, `"count":4,"unit":"GB"`, `"count":1,"unit":"PB"`, 1), `"count":2,"label"`, `"count":2000,"label"`, 1), 0, "total memory must be at most 1E"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js, err := Parse([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse: %v; want error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := js.Counts().MemPerSlot; got != tc.mem {
				t.Errorf("MemPerSlot = %d, want %d", got, tc.mem)
			}
		})
	}
}

// FromOptions writes --mem in the largest unit that holds it exactly, and
// the jobspec reads back to the same size.
func TestFromOptionsMemory(t *testing.T) {
	for _, tc := range []struct {
		mem  uint64
		want string
	}{
		{4 << 30, `{"count":4,"type":"memory","unit":"GB"}`},
		{1536 << 20, `{"count":1536,"type":"memory","unit":"MB"}`},
		{1 << 40, `{"count":1,"type":"memory","unit":"TB"}`},
		{1000, `{"count":1000,"type":"memory","unit":"B"}`},
		// Not whole in any unit that can count it: rounded up, never less.
		{1<<60 - 1, `{"count":1073741824,"type":"memory","unit":"GB"}`},
	} {
		js, err := FromOptions(Options{Command: []string{"true"}, MemPerSlot: tc.mem})
		if err != nil {
			t.Fatal(err)
		}
		b, err := js.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("FromOptions(mem %d) = %s; want it to hold %s", tc.mem, b, tc.want)
		}
		back, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := back.Counts().MemPerSlot; got < tc.mem || got-tc.mem >= 1<<30 {
			t.Errorf("read back %d, want %d", got, tc.mem)
		}
	}
}

func TestParseMemoryOrZero(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{{"0", 0, true}, {" 0 ", 0, true}, {"4G", 4 << 30, true}, {"0G", 0, false}, {"-1", 0, false}} {
		got, err := ParseMemoryOrZero(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseMemoryOrZero(%q) = %d, %v; want %d, ok %t", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormatMemory(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "0B"}, {1000, "1000B"}, {1 << 10, "1K"}, {12 << 30, "12G"}, {512 << 20, "512M"},
		{6<<30 + 330<<20, "6.3G"}, {3 << 39, "1.5T"}, {1<<30 + 1, "1G"}, {2<<30 - 1, "1.9G"},
	} {
		if got := FormatMemory(tc.n); got != tc.want {
			t.Errorf("FormatMemory(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func FuzzParseMemory(f *testing.F) {
	for _, s := range []string{"512M", "4G", "1.5T", "2048", "1e3k", "", "G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseMemory(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("two-line error %q", err)
			}
			return
		}
		if n == 0 || n > MaxMemory {
			t.Fatalf("ParseMemory(%q) = %d: out of range", s, n)
		}
	})
}
