package swf

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// format writes jobs and header back as an SWF trace: header lines first
// (one per value of a repeated key), then one 18-field line per job.
func format(jobs []Job, hdr Header) string {
	var b strings.Builder
	for k, v := range hdr {
		for part := range strings.SplitSeq(v, "\n") {
			fmt.Fprintf(&b, "; %s: %s\n", k, part)
		}
	}
	for _, j := range jobs {
		for i, f := range j.Fields() {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprint(&b, f)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"", "\n", ";\n", "; Key: value\n", "; MaxNodes: 240\n; Partition: 1\n; Partition: 2\n",
		"1 0 5 100 4 90 1024 8 3600 2048 1 7 3 12 1 1 -1 -1\n",
		"3 10 -1 20 2 -1 -1 4 60", "1 2 3 4 5 6 7 8\n",
		"+1 3.7 -2.9 1e3 552.21 .5 7. -0 1.5e1\n",
		"9223372036854775807.9 -9223372036854775808 1e18 1e19 0e999 5e-1 1E+2 2 3\r\n",
		"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 junk\n",
		"1 2 3 abc 5 6 7 8 9\n", "0x10 inf NaN - . 1e 8s 9;x 1\n",
		// Field 10, requested memory per processor in KB: known, unknown,
		// decimal, huge and not a number.
		"1 0 -1 10 2 -1 -1 2 10 921600\n2 0 -1 10 2 -1 -1 2 10 -1\n3 0 -1 10 2 -1 -1 2 10 0.5\n",
		"1 0 -1 10 2 -1 -1 2 10 9223372036854775807\n", "1 0 -1 10 2 -1 -1 2 10 4G\n",
	} {
		f.Add(s)
	}
	for _, name := range []string{"../../testdata/swf/hpc2n-excerpt.swf", "../../testdata/swf/lublin_256.swf"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data[:2000]))
	}
	f.Fuzz(func(t *testing.T, in string) {
		jobs, hdr, err := Read(strings.NewReader(in))
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q is not one line starting with its line", err)
			}
			if jobs != nil || hdr != nil {
				t.Fatalf("data returned with error %v", err)
			}
			return
		}
		if hdr == nil {
			t.Fatal("nil header without error")
		}
		for _, j := range jobs {
			// Field 10 in bytes: none unless known, else KB x 1024
			// exactly or saturated, never wrapped.
			b := j.ReqMemoryBytes()
			switch {
			case j.ReqMemory <= 0 && b != 0:
				t.Fatalf("field 10 = %d asks for %d bytes, want none", j.ReqMemory, b)
			case j.ReqMemory > 0 && b/KB < uint64(j.ReqMemory) && b != math.MaxUint64:
				t.Fatalf("field 10 = %d KB gives %d bytes", j.ReqMemory, b)
			case j.ReqMemory > 0 && b != math.MaxUint64 && b != uint64(j.ReqMemory)*KB:
				t.Fatalf("field 10 = %d KB gives %d bytes", j.ReqMemory, b)
			}
		}
		out := format(jobs, hdr)
		again, hdr2, err := Read(strings.NewReader(out))
		if err != nil {
			t.Fatalf("re-formatted trace fails: %v\n%s", err, out)
		}
		// Line numbers change when the trace is re-formatted; nothing else may.
		ignoreLine := cmpopts.IgnoreFields(Job{}, "Line")
		if diff := cmp.Diff(jobs, again, ignoreLine, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("jobs after a round trip (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(hdr, hdr2); diff != "" {
			t.Fatalf("header after a round trip (-first +second):\n%s", diff)
		}
	})
}
