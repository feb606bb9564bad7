package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// src is a source of three records: 7 follows 5 (field 17), 6 has a
// negative submit time, and the span is 10 - 4 = 6 s over 2 gaps: a
// period of 6 + 3 = 9 s.
const src = `; Version: 2
; MaxJobs: 3
5 4 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1

6 -3 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1
7 10.9 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 5 60
`

func TestWrite(t *testing.T) {
	tests := []struct {
		name string
		jobs int
		want []string
	}{
		{name: "fewer than the source", jobs: 2, want: []string{
			"1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1",
			"2 -3 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1",
		}},
		{name: "copies, shifted and renumbered", jobs: 7, want: []string{
			"1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1",
			"2 -3 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1",
			"3 6 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 1 60",
			"4 9 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1",
			"5 -3 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1",
			"6 15 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 4 60",
			"7 18 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := read(strings.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := write(&b, s, tc.jobs, "src.swf"); err != nil {
				t.Fatal(err)
			}
			var records, comments []string
			for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if strings.HasPrefix(l, ";") {
					comments = append(comments, l)
				} else {
					records = append(records, l)
				}
			}
			if diff := cmp.Diff(tc.want, records); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			copies := (tc.jobs + 2) / 3
			wantComments := []string{
				"; swfrepeat: " + strconv.Itoa(tc.jobs) + " jobs, " + strconv.Itoa(copies) + " copies of src.swf shifted by 9 s each, renumbered from 1",
				"; Version: 2",
				"; MaxJobs: " + strconv.Itoa(tc.jobs),
			}
			if diff := cmp.Diff(wantComments, comments); diff != "" {
				t.Errorf("comments (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name, text, err string
	}{
		{"empty", "; only a comment\n\n", "the trace has no job records"},
		{"one field", "1\n", `line 1: a record needs a job number and a submit time, not "1"`},
		{"job number", "x 0 1\n", `line 1: job number: "x" is not a number of at most 2^40`},
		{"submit time", "1 0 1\n2 NaN 1\n", `line 2: submit time: "NaN" is not a number of at most 2^40`},
		{"huge", "1 1e300 1\n", `line 1: submit time: "1e300" is not a number of at most 2^40`},
		{"all negative", "1 -5 1\n", "no record of the trace has a submit time of 0 or more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := read(strings.NewReader(tc.text))
			if err == nil || err.Error() != tc.err {
				t.Errorf("read = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestRunFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"no trace", []string{"--jobs", "3"}, "needs --trace FILE"},
		{"no jobs", []string{"--trace", "x.swf"}, "--jobs must be from 1 to 1000000000, not 0"},
		{"too many", []string{"--trace", "x.swf", "--jobs", "2000000000"}, "--jobs must be from 1 to 1000000000, not 2000000000"},
		{"argument", []string{"--trace", "x.swf", "--jobs", "3", "more"}, `takes no arguments (got "more")`},
		{"missing file", []string{"--trace", "/nonexistent/x.swf", "--jobs", "3"}, "open /nonexistent/x.swf: no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, &bytes.Buffer{})
			if err == nil || err.Error() != tc.err {
				t.Errorf("run = %v, want %q", err, tc.err)
			}
		})
	}
}

// The bundled Lublin trace, repeated: its first copy is its records with
// time zero taken off the submit times (its jobs are numbered 1..10,000
// already), the output is the same bytes every time, and the count is
// what was asked.
func TestBundledTrace(t *testing.T) {
	const path = "../../testdata/swf/lublin_256.swf"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gen := func() []byte {
		var b bytes.Buffer
		if err := run([]string{"--trace", path, "--jobs", "25000"}, &b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := gen()
	if !bytes.Equal(a, gen()) {
		t.Fatal("two runs made different traces")
	}
	var source [][]string
	zero := int64(-1)
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], ";") {
			source = append(source, f)
			if sub, _ := strconv.ParseInt(f[1], 10, 64); zero < 0 || sub < zero {
				zero = sub
			}
		}
	}
	var got []string
	for _, l := range strings.Split(string(a), "\n") {
		if l != "" && !strings.HasPrefix(l, ";") {
			got = append(got, l)
		}
	}
	if len(got) != 25000 {
		t.Fatalf("%d records, want 25000", len(got))
	}
	for i, f := range source {
		sub, _ := strconv.ParseInt(f[1], 10, 64)
		want := append([]string{f[0], strconv.FormatInt(sub-zero, 10)}, f[2:]...)
		if w := strings.Join(want, " "); got[i] != w {
			t.Fatalf("record %d of the first copy is %q, want %q", i+1, got[i], w)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add(src)
	f.Add("1 0\n")
	f.Add("; c\n1 -1 5\n2 3.7 5\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := read(strings.NewReader(text))
		if err != nil {
			return
		}
		if s.period < 1 || s.zero < 0 {
			t.Fatalf("period %d, zero %d", s.period, s.zero)
		}
		var b bytes.Buffer
		if err := write(&b, s, 2*len(s.records)+1, "f.swf"); err != nil {
			return
		}
		again, err := read(&b)
		if err != nil {
			t.Fatalf("the copy does not read back: %v", err)
		}
		if len(again.records) != 2*len(s.records)+1 {
			t.Fatalf("%d records read back, want %d", len(again.records), 2*len(s.records)+1)
		}
	})
}
