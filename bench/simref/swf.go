package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxField bounds every number read from a trace (about 34,000 years in
// seconds), so that sums of times over millions of jobs cannot overflow.
const maxField = 1 << 40

// record is one SWF job line with the fields the simulation uses.
type record struct {
	pos    int // position among the records of the trace, from 0
	line   int // line number in the file, from 1, for messages
	id     int64
	submit int64
	run    int64
	req    int64 // requested time: field 9, else the run time
	cores  int64 // field 8, else field 5
	// memKB is field 10, the requested memory per processor in KB, read
	// only with --memory (else, and when the line has no field 10, 0: none).
	memKB   int64
	skipped bool
}

// swfField names the fields we read, by their 1-based SWF number.
var swfField = map[int]string{
	1:  "job number",
	2:  "submit time",
	4:  "run time",
	5:  "allocated processors",
	8:  "requested processors",
	9:  "requested time",
	10: "requested memory",
}

// parseSWF reads every job record of an SWF trace and applies the input
// rules of docs/simulation.md that depend on one record alone (defaults and
// skipping); denial and time zero need the machine and the whole trace.
//
// With memory, field 10 is read too; without it, it is not looked at (it
// may hold anything, as the other unused fields may).
func parseSWF(r io.Reader, memory bool) ([]record, error) {
	br := bufio.NewReader(r)
	var recs []record
	for lineNo := 1; ; lineNo++ {
		text, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		if text != "" {
			rec, ok, perr := parseLine(text, lineNo, memory)
			if perr != nil {
				return nil, perr
			}
			if ok {
				rec.pos = len(recs)
				recs = append(recs, rec)
			}
		}
		if err != nil {
			return recs, nil
		}
	}
}

// parseLine returns the record on one line, or ok=false for a blank or
// comment line.
func parseLine(text string, lineNo int, memory bool) (rec record, ok bool, err error) {
	if i := strings.IndexByte(text, ';'); i >= 0 {
		text = text[:i]
	}
	f := strings.Fields(text)
	if len(f) == 0 {
		return record{}, false, nil
	}
	if len(f) < 9 {
		return record{}, false, fmt.Errorf("line %d: want at least 9 fields, got %d", lineNo, len(f))
	}
	var v [10]int64
	for _, n := range []int{1, 2, 4, 5, 8, 9} {
		x, err := parseNumber(f[n-1])
		if err != nil {
			return record{}, false, fmt.Errorf("line %d: field %d (%s): %v", lineNo, n, swfField[n], err)
		}
		v[n] = x
	}
	rec = record{line: lineNo, id: v[1], submit: v[2], run: v[4]}
	if memory && len(f) >= 10 {
		x, err := parseMemoryField(f[9])
		if err != nil {
			return record{}, false, fmt.Errorf("line %d: field 10 (%s): %v", lineNo, swfField[10], err)
		}
		rec.memKB = x
	}
	rec.cores = v[8]
	if rec.cores <= 0 {
		rec.cores = v[5]
	}
	rec.req = v[9]
	if rec.req <= 0 {
		rec.req = rec.run
	}
	rec.skipped = rec.cores <= 0 || rec.submit < 0 || rec.run < 0
	return rec, true, nil
}

// parseMemoryField reads field 10 as parseNumber does, but with the whole
// int64 range: a huge request is not an error of the trace but a job that
// asks for more than any machine has (denied).
func parseMemoryField(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(x) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	x = math.Trunc(x)
	if math.IsInf(x, 0) || x >= math.Ldexp(1, 63) || x < -math.Ldexp(1, 63) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return int64(x), nil
}

// parseNumber reads an SWF field as a number truncated toward zero; SWF
// writers emit both integers and decimals ("552.21") in the same column.
func parseNumber(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > maxField || n < -maxField {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return n, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(x) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	x = math.Trunc(x)
	if math.IsInf(x, 0) || x > maxField || x < -maxField {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return int64(x), nil
}
