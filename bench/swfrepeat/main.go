// Command swfrepeat makes a large workload trace from a small one: copies
// of a Standard Workload Format trace, one after another in time, its jobs
// renumbered, until it has the number of jobs asked for. bench/simbig.sh
// replays such a trace of a million jobs under every policy (issue 28).
//
//	go run ./bench/swfrepeat --trace FILE.swf --jobs N [--out FILE]
//
// Copy k (from 0) is the source shifted by k periods: every record's
// submit time (field 2) has the source's time zero (its smallest submit
// time that is not negative) taken off and k x period added, where the
// period is the source's span (last submit less time zero) plus its mean
// gap between submissions, so that copies follow each other as the
// source's own jobs do. Record i (from 0) of copy k is job k x R + i + 1
// (R records in the source), and a preceding job number (field 17) that
// names a job of the source names that job's number in the same copy
// (else -1). Every other field is copied as written. A negative submit
// time (a record docs/simulation.md skips) is kept as it is, so the copy
// skips what the source does. The source's comment lines come first,
// after one saying what was made, so that its credit travels with it
// (MaxJobs and MaxRecords say the copy's count).
//
// The shape of the workload is the source's: sizes, run times, estimates
// and arrival pattern, repeated. Its load on a machine is the source's
// too (the sum of cores x run time over the period): a machine that the
// source overloads (lublin_256.swf on 256 cores, offered 1.06 of them)
// queues jobs without bound over many copies, so choose the machine from
// the source's load (bench/simbig.sh prints it). Nothing is random: the
// same source and --jobs make the same bytes.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// maxField bounds the numbers read (about 34,000 years in seconds), so
// that a million copies' shifts cannot overflow.
const maxField = 1 << 40

// maxJobs bounds --jobs: a billion records is tens of gigabytes of trace.
const maxJobs = 1_000_000_000

// source is a trace read for copying.
type source struct {
	comments []string   // its comment lines, as written
	records  [][]string // its job lines, split into fields
	submit   []int64    // each record's submit time, truncated
	zero     int64      // the smallest submit time >= 0
	period   int64      // how far one copy is shifted from the last
	index    map[int64]int
}

// read reads an SWF trace: ";" lines are comments, blank lines nothing,
// and every other line a record of at least 2 fields (job number and
// submit time are what a copy changes). A record needs a number in
// fields 1 and 2.
func read(r io.Reader) (*source, error) {
	s := &source{zero: -1, index: map[int64]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	last := int64(-1)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "":
			continue
		case strings.HasPrefix(text, ";"):
			s.comments = append(s.comments, text)
			continue
		}
		f := strings.Fields(text)
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: a record needs a job number and a submit time, not %q", line, text)
		}
		number, err := readNumber(f[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: job number: %v", line, err)
		}
		submit, err := readNumber(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: submit time: %v", line, err)
		}
		if _, dup := s.index[number]; !dup {
			s.index[number] = len(s.records)
		}
		s.records = append(s.records, f)
		s.submit = append(s.submit, submit)
		if submit >= 0 {
			if s.zero < 0 || submit < s.zero {
				s.zero = submit
			}
			last = max(last, submit)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(s.records) == 0 {
		return nil, errors.New("the trace has no job records")
	}
	if s.zero < 0 {
		return nil, errors.New("no record of the trace has a submit time of 0 or more")
	}
	// The span, and one mean gap after it: with one record (or one
	// instant), copies come a second apart.
	span := last - s.zero
	gap := int64(1)
	if n := int64(len(s.records)); n > 1 {
		gap = max(1, int64(math.Round(float64(span)/float64(n-1))))
	}
	s.period = span + gap
	return s, nil
}

// readNumber reads a field as docs/simulation.md does: a number, truncated
// toward zero.
func readNumber(field string) (int64, error) {
	if n, err := strconv.ParseInt(field, 10, 64); err == nil && n >= -maxField && n <= maxField {
		return n, nil
	}
	v, err := strconv.ParseFloat(field, 64)
	if err != nil || math.IsNaN(v) || math.Abs(v) > maxField {
		return 0, fmt.Errorf("%q is not a number of at most 2^40", field)
	}
	return int64(v), nil
}

// write writes jobs records: copies of s, as the package comment says.
func write(w io.Writer, s *source, jobs int, name string) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	r := len(s.records)
	copies := (jobs + r - 1) / r
	if int64(copies-1)*s.period > maxField {
		return fmt.Errorf("%d copies of a %d s period would pass 2^40 s", copies, s.period)
	}
	fmt.Fprintf(bw, "; swfrepeat: %d jobs, %d copies of %s shifted by %d s each, renumbered from 1\n", jobs, copies, name, s.period)
	for _, c := range s.comments {
		// The header's counts are the source's: say the copy's.
		for _, key := range []string{"MaxJobs:", "MaxRecords:"} {
			if rest, ok := strings.CutPrefix(c, ";"); ok && strings.HasPrefix(strings.TrimSpace(rest), key) {
				c = fmt.Sprintf("; %s %d", key, jobs)
			}
		}
		fmt.Fprintln(bw, c)
	}
	fields := make([]string, 0, 18)
	for n := 0; n < jobs; n++ {
		k, i := n/r, n%r
		fields = append(fields[:0], s.records[i]...)
		fields[0] = strconv.Itoa(n + 1)
		if sub := s.submit[i]; sub >= 0 {
			fields[1] = strconv.FormatInt(sub-s.zero+int64(k)*s.period, 10)
		}
		if len(fields) >= 17 {
			fields[16] = "-1"
			if prev, err := readNumber(s.records[i][16]); err == nil && prev > 0 {
				if j, ok := s.index[prev]; ok {
					fields[16] = strconv.Itoa(k*r + j + 1)
				}
			}
		}
		bw.WriteString(strings.Join(fields, " "))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "swfrepeat:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("swfrepeat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	trace := fs.String("trace", "", "the source trace")
	jobs := fs.Int("jobs", 0, "job records to write")
	out := fs.String("out", "", "the file to write (default standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("takes no arguments (got %q)", fs.Arg(0))
	case *trace == "":
		return errors.New("needs --trace FILE")
	case *jobs < 1 || *jobs > maxJobs:
		return fmt.Errorf("--jobs must be from 1 to %d, not %d", maxJobs, *jobs)
	}
	f, err := os.Open(*trace)
	if err != nil {
		return err
	}
	s, err := read(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *trace, err)
	}
	name := *trace
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if *out == "" {
		return write(stdout, s, *jobs, name)
	}
	o, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := write(o, s, *jobs, name); err != nil {
		o.Close()
		return fmt.Errorf("%s: %w", *out, err)
	}
	return o.Close()
}
