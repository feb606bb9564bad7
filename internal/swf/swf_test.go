package swf

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// job builds the Job a line of the given fields reads as, with missing
// fields 10 to 18 at -1 as Read fills them.
func job(line int, f ...int64) Job {
	var all [NumFields]int64
	for i := range all {
		all[i] = -1
	}
	copy(all[:], f)
	return fromFields(line, &all)
}

func TestRead(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []Job
		wantHdr  Header
		wantErrs string // substring of the error; "" means success
	}{
		{name: "empty", in: "", want: nil, wantHdr: Header{}},
		{name: "blank and comment lines only", in: "\n   \n\t\r\n;\n  ; just words\n", wantHdr: Header{}},
		{
			name: "full 18-field line",
			in:   "1 0 5 100 4 90 1024 8 3600 2048 1 7 3 12 1 1 -1 -1\n",
			want: []Job{{
				Line: 1, Number: 1, Submit: 0, Wait: 5, Run: 100, Procs: 4,
				CPUTime: 90, Memory: 1024, ReqProcs: 8, ReqTime: 3600,
				ReqMemory: 2048, Status: 1, User: 7, Group: 3, App: 12,
				Queue: 1, Partition: 1, PrecedingJob: -1, ThinkTime: -1,
			}},
			wantHdr: Header{},
		},
		{
			name:    "nine fields: the rest are unknown",
			in:      "3 10 -1 20 2 -1 -1 4 60",
			want:    []Job{job(1, 3, 10, -1, 20, 2, -1, -1, 4, 60)},
			wantHdr: Header{},
		},
		{
			name:    "fields past 18 are ignored, even non-numbers",
			in:      "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 junk 1e999\n",
			want:    []Job{job(1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)},
			wantHdr: Header{},
		},
		{
			name:    "tabs, CRLF and leading space",
			in:      "\t 1\t2  3 4\t\t5 6 7 8 9\r\n",
			want:    []Job{job(1, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
			wantHdr: Header{},
		},
		{
			name:    "decimals, signs and exponents truncate toward zero",
			in:      "+1 3.7 -2.9 1e3 552.21 .5 7. -0 1.5e1\n",
			want:    []Job{job(1, 1, 3, -2, 1000, 552, 0, 7, 0, 15)},
			wantHdr: Header{},
		},
		{
			name:    "truncation is exact, not through float64",
			in:      "2.99999999999999999999 -0.99999999999999999999 9223372036854775807.9 -9223372036854775808.9 12345e-2 0e999999999 1E+2 5e-1 -5e-1\n",
			want:    []Job{job(1, 2, 0, math.MaxInt64, math.MinInt64, 123, 0, 100, 0, 0)},
			wantHdr: Header{},
		},
		{
			name: "header, comments and line numbers",
			in: "; Version: 2.2\n" +
				"; Computer: Linux cluster (Seth)\n" +
				";MaxNodes:240\n" +
				"   ;   MaxProcs:   240   \n" +
				"; a comment: with a colon but spaces in the key\n" +
				"; Note:\n" +
				"; Partition:  1 DEFAULT \n" +
				"; Partition:  2 ALL     \n" +
				";\n" +
				"\n" +
				"1 0 1 2 3 4 5 6 7\n" +
				"; UnixStartTime: 1027839845\n" +
				"2 1 1 2 3 4 5 6 7\n",
			want: []Job{job(11, 1, 0, 1, 2, 3, 4, 5, 6, 7), job(13, 2, 1, 1, 2, 3, 4, 5, 6, 7)},
			wantHdr: Header{
				"Version": "2.2", "Computer": "Linux cluster (Seth)",
				"MaxNodes": "240", "MaxProcs": "240", "Note": "",
				"Partition": "1 DEFAULT\n2 ALL", "UnixStartTime": "1027839845",
			},
		},
		// Field 10, the requested memory per processor (KB), as the
		// simulator reads it with --memory.
		{
			name:    "field 10: requested memory, decimals truncated",
			in:      "1 0 -1 10 2 -1 -1 2 10 1048576.9 1\n2 0 -1 10 2 -1 -1 2 10 -1\n3 0 -1 10 2 -1 -1 2 10 0\n",
			want:    []Job{job(1, 1, 0, -1, 10, 2, -1, -1, 2, 10, 1048576, 1), job(2, 2, 0, -1, 10, 2, -1, -1, 2, 10, -1), job(3, 3, 0, -1, 10, 2, -1, -1, 2, 10, 0)},
			wantHdr: Header{},
		},
		{name: "field 10 not a number", in: "1 0 -1 10 2 -1 -1 2 10 4G\n", wantErrs: `line 1: field 10 (requested memory): not a number: "4G"`},
		{name: "field 10 beyond int64", in: "1 0 -1 10 2 -1 -1 2 10 1e20\n", wantErrs: `line 1: field 10 (requested memory): out of range: "1e20"`},
		{name: "too few fields", in: "; x\n1 2 3 4 5 6 7 8\n", wantErrs: "line 2: 8 fields, want at least 9"},
		{name: "not a number", in: "\n\n\n\n\n\n\n\n\n\n\n1 2 3 abc 5 6 7 8 9\n", wantErrs: `line 12: field 4 (run time): not a number: "abc"`},
		{name: "not a number in an optional field", in: "1 2 3 4 5 6 7 8 9 10 x\n", wantErrs: `line 1: field 11 (status): not a number: "x"`},
		{name: "hex is not a number", in: "0x10 2 3 4 5 6 7 8 9\n", wantErrs: `line 1: field 1 (job number): not a number: "0x10"`},
		{name: "inf is not a number", in: "1 inf 3 4 5 6 7 8 9\n", wantErrs: `field 2 (submit time): not a number: "inf"`},
		{name: "nan is not a number", in: "1 2 NaN 4 5 6 7 8 9\n", wantErrs: `field 3 (wait time): not a number: "NaN"`},
		{name: "lone sign", in: "1 2 3 4 - 6 7 8 9\n", wantErrs: `field 5 (allocated processors): not a number: "-"`},
		{name: "lone dot", in: "1 2 3 4 5 . 7 8 9\n", wantErrs: `field 6 (average cpu time): not a number: "."`},
		{name: "exponent without digits", in: "1 2 3 4 5 6 1e 8 9\n", wantErrs: `field 7 (used memory): not a number: "1e"`},
		{name: "trailing garbage", in: "1 2 3 4 5 6 7 8s 9\n", wantErrs: `field 8 (requested processors): not a number: "8s"`},
		{name: "inline comment", in: "1 2 3 4 5 6 7 8 9;x\n", wantErrs: `field 9 (requested time): not a number: "9;x"`},
		{name: "integer beyond int64", in: "9223372036854775808 2 3 4 5 6 7 8 9\n", wantErrs: `line 1: field 1 (job number): out of range: "9223372036854775808"`},
		{name: "negative beyond int64", in: "1 -9223372036854775809 3 4 5 6 7 8 9\n", wantErrs: `field 2 (submit time): out of range`},
		{name: "exponent beyond int64", in: "1 2 3 1e19 5 6 7 8 9\n", wantErrs: `line 1: field 4 (run time): out of range: "1e19"`},
		{name: "huge exponent", in: "1 2 3 4 5 6 7 8 1e999999999999\n", wantErrs: `field 9 (requested time): out of range`},
		{name: "long token is shortened", in: "1 2 3 " + strings.Repeat("z", 100) + " 5 6 7 8 9\n", wantErrs: `"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"...`},
		{name: "line too long", in: "; ok\n1 " + strings.Repeat(" ", MaxLineBytes) + "\n", wantErrs: "line 2: longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, hdr, err := Read(strings.NewReader(tt.in))
			if tt.wantErrs != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrs) {
					t.Fatalf("Read error = %v, want it to contain %q", err, tt.wantErrs)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is more than one line", err)
				}
				if got != nil || hdr != nil {
					t.Errorf("Read returned data with an error: %v, %v", got, hdr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHdr, hdr); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	r := iotest.DataErrReader(iotest.ErrReader(boom))
	_, _, err := Read(r)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "line 1: read: ") {
		t.Errorf("Read error = %v, want line 1 wrapping %v", err, boom)
	}
}

func TestCoresRequested(t *testing.T) {
	tests := []struct {
		name          string
		job           Job
		wantCores     int64
		wantRequested int64
	}{
		{"requested fields known", Job{Procs: 4, ReqProcs: 8, Run: 100, ReqTime: 3600}, 8, 3600},
		{"requested fields -1 fall back", Job{Procs: 4, ReqProcs: -1, Run: 100, ReqTime: -1}, 4, 100},
		{"requested fields 0 fall back", Job{Procs: 4, ReqProcs: 0, Run: 100, ReqTime: 0}, 4, 100},
		{"fallbacks returned as they are", Job{Procs: -1, ReqProcs: -1, Run: -1, ReqTime: -1}, -1, -1},
		{"requested 1 is known", Job{Procs: 16, ReqProcs: 1, Run: 50, ReqTime: 1}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := [2]int64{tt.job.Cores(), tt.job.Requested()}
			if diff := cmp.Diff([2]int64{tt.wantCores, tt.wantRequested}, got); diff != "" {
				t.Errorf("[Cores Requested] (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReqMemoryBytes(t *testing.T) {
	tests := []struct {
		name string
		kb   int64
		want uint64
	}{
		{"unknown", -1, 0},
		{"zero asks for none", 0, 0},
		{"negative asks for none", -7, 0},
		{"one KB", 1, 1024},
		{"900 MB per processor (HPC2N)", 921600, 921600 << 10},
		{"1E exactly", 1 << 50, 1 << 60},
		{"largest exact", math.MaxUint64 / 1024, math.MaxUint64 / 1024 * 1024},
		{"saturates", math.MaxInt64, math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Job{ReqMemory: tt.kb}).ReqMemoryBytes(); got != tt.want {
				t.Errorf("ReqMemoryBytes(%d KB) = %d, want %d", tt.kb, got, tt.want)
			}
		})
	}
}

func TestFieldsRoundTrip(t *testing.T) {
	var f [NumFields]int64
	for i := range f {
		f[i] = int64(i+1) * 11
	}
	j := fromFields(7, &f)
	if diff := cmp.Diff(f, j.Fields()); diff != "" {
		t.Errorf("Fields (-want +got):\n%s", diff)
	}
}

// The two real traces: job line counts come from
//
//	awk '!/^[[:space:]]*;/ && NF>0' FILE | wc -l
func TestRealTraces(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		wantJobs  int
		wantHdr   map[string]string // a few keys that must be there
		wantFirst Job
	}{
		{
			name:     "hpc2n excerpt",
			file:     "../../testdata/swf/hpc2n-excerpt.swf",
			wantJobs: 3170,
			wantHdr:  map[string]string{"MaxNodes": "240", "MaxProcs": "240", "UnixStartTime": "1027839845", "Version": "2.2"},
			wantFirst: Job{
				Line: 24, Number: 1, Submit: 0, Wait: 308434, Run: 31405, Procs: 30,
				CPUTime: 31405, Memory: -1, ReqProcs: 30, ReqTime: 37980, ReqMemory: -1,
				Status: 1, User: 1, Group: 1, App: -1, Queue: -1, Partition: 1,
				PrecedingJob: -1, ThinkTime: -1,
			},
		},
		{
			name:     "lublin 256",
			file:     "../../testdata/swf/lublin_256.swf",
			wantJobs: 10000,
			wantHdr:  map[string]string{"MaxNodes": "256", "MaxJobs": "10000", "MaxRuntime": "162754"},
			wantFirst: Job{
				Line: 8, Number: 1, Submit: 5094, Wait: -1, Run: 12072, Procs: 16,
				CPUTime: -1, Memory: -1, ReqProcs: -1, ReqTime: -1, ReqMemory: -1,
				Status: 1, User: -1, Group: -1, App: -1, Queue: 0, Partition: -1,
				PrecedingJob: -1, ThinkTime: -1,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			jobs, hdr, err := Read(f)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if diff := cmp.Diff(tt.wantJobs, len(jobs)); diff != "" {
				t.Fatalf("job count (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFirst, jobs[0]); diff != "" {
				t.Errorf("first job (-want +got):\n%s", diff)
			}
			for k, want := range tt.wantHdr {
				if diff := cmp.Diff(want, hdr[k]); diff != "" {
					t.Errorf("header %s (-want +got):\n%s", k, diff)
				}
			}
			for i := 1; i < len(jobs); i++ {
				if jobs[i].Line <= jobs[i-1].Line {
					t.Fatalf("job %d at line %d follows line %d", i, jobs[i].Line, jobs[i-1].Line)
				}
			}
		})
	}
}
