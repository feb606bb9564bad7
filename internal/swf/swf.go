// Package swf reads workload traces in the Standard Workload Format of
// Feitelson's Parallel Workloads Archive
// (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): one job per
// line, 18 whitespace-separated numeric fields, and ';' comment lines of
// which "; Key: value" ones form the header.
//
// The reader returns the numbers exactly as the trace holds them. The
// simulator's rules (which fields stand in for unknown ones, which jobs to
// skip) belong to the simulator; only the two fallbacks it names, Cores and
// Requested, live here so that every caller applies them alike.
//
// Where the archive is silent or traces in the wild stray from it:
//   - A job line needs the first 9 fields, the ones a scheduler simulation
//     uses. Fields 10 to 18 that are missing read as -1, the archive's
//     "unknown". Fields past the 18th are ignored without being read: some
//     published traces carry trailing junk, and refusing a whole trace for a
//     column nobody reads would help no one.
//   - Every field may be written as an integer or a decimal, with a sign and
//     an exponent ("-1", "12", "3.7", "1e3"). It is truncated toward zero
//     exactly, digit by digit rather than through float64, so
//     "2.99999999999999999999" is 2, not 3. A value whose integer part does
//     not fit in an int64 is an error, never a wrapped number.
//   - A header key is the text between ';' and the first ':' when it holds
//     no whitespace; any other comment is skipped. A key given more than
//     once (the archive's Queue and Partition lines) keeps every value,
//     joined with "\n" in file order.
package swf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// NumFields is the number of fields of a job line in the archive's format.
const NumFields = 18

// MinFields is the number of leading fields a job line must have: the ones
// through the requested time, which the simulator reads.
const MinFields = 9

// MaxLineBytes bounds one line, so that a file without newlines cannot make
// the reader buffer all of it; real job lines are under 200 bytes.
const MaxLineBytes = 1 << 20

// chunkJobs is the most jobs Read gathers before starting a new chunk.
const chunkJobs = 1024

// Job is one job line of a trace, with the archive's fields in its order.
type Job struct {
	Line         int   // 1-based line number in the file
	Number       int64 // field 1: job number
	Submit       int64 // field 2: submit time, seconds
	Wait         int64 // field 3: wait time, seconds
	Run          int64 // field 4: run time, seconds
	Procs        int64 // field 5: allocated processors
	CPUTime      int64 // field 6: average CPU time used per processor, seconds
	Memory       int64 // field 7: used memory per processor, KB
	ReqProcs     int64 // field 8: requested processors
	ReqTime      int64 // field 9: requested time, seconds
	ReqMemory    int64 // field 10: requested memory per processor, KB
	Status       int64 // field 11: status (1 completed, 0 failed, 5 cancelled...)
	User         int64 // field 12: user id
	Group        int64 // field 13: group id
	App          int64 // field 14: executable (application) number
	Queue        int64 // field 15: queue number
	Partition    int64 // field 16: partition number
	PrecedingJob int64 // field 17: preceding job number
	ThinkTime    int64 // field 18: think time from the preceding job, seconds
}

// Cores is the number of processors the job asks for: the requested
// processors (field 8) when known (> 0), else the allocated ones (field 5).
func (j Job) Cores() int64 {
	if j.ReqProcs > 0 {
		return j.ReqProcs
	}
	return j.Procs
}

// Requested is the job's time limit in seconds: the requested time
// (field 9) when known (> 0), else the run time (field 4), a perfect
// estimate.
func (j Job) Requested() int64 {
	if j.ReqTime > 0 {
		return j.ReqTime
	}
	return j.Run
}

// KB is the archive's kilobyte, the unit of its memory fields (7 and 10):
// 1024 bytes, as in the sizes jobspecs and Slurm give.
const KB = 1024

// ReqMemoryBytes is the memory the job asks for per processor, in bytes:
// the requested memory (field 10) x KB when known (> 0), else 0, which asks
// for none. A value too large for a uint64 of bytes saturates: no machine
// has that much, and the caller refuses it as it refuses any size too big.
func (j Job) ReqMemoryBytes() uint64 {
	if j.ReqMemory <= 0 {
		return 0
	}
	if uint64(j.ReqMemory) > math.MaxUint64/KB {
		return math.MaxUint64
	}
	return uint64(j.ReqMemory) * KB
}

// Fields returns the job's 18 fields in the archive's order (index 0 is
// field 1), the inverse of what Read parses from a line.
func (j Job) Fields() [NumFields]int64 {
	return [NumFields]int64{
		j.Number, j.Submit, j.Wait, j.Run, j.Procs, j.CPUTime, j.Memory,
		j.ReqProcs, j.ReqTime, j.ReqMemory, j.Status, j.User, j.Group,
		j.App, j.Queue, j.Partition, j.PrecedingJob, j.ThinkTime,
	}
}

// fromFields is the inverse of Fields.
func fromFields(line int, f *[NumFields]int64) Job {
	return Job{
		Line: line, Number: f[0], Submit: f[1], Wait: f[2], Run: f[3],
		Procs: f[4], CPUTime: f[5], Memory: f[6], ReqProcs: f[7],
		ReqTime: f[8], ReqMemory: f[9], Status: f[10], User: f[11],
		Group: f[12], App: f[13], Queue: f[14], Partition: f[15],
		PrecedingJob: f[16], ThinkTime: f[17],
	}
}

// fieldNames name the fields in error messages, index 0 being field 1.
var fieldNames = [NumFields]string{
	"job number", "submit time", "wait time", "run time",
	"allocated processors", "average cpu time", "used memory",
	"requested processors", "requested time", "requested memory", "status",
	"user id", "group id", "executable number", "queue number",
	"partition number", "preceding job number", "think time",
}

// Header holds the "; Key: value" comment lines of a trace, such as
// MaxNodes, MaxProcs and UnixStartTime.
type Header map[string]string

// Read parses a whole SWF trace from r and returns its job lines in file
// order and its header. On error it returns no jobs and an error naming the
// line and, for a bad value, the field.
func Read(r io.Reader) ([]Job, Header, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxLineBytes)
	var (
		// Jobs gather in fixed-size chunks joined once at the end: append
		// on one slice would copy a large trace about five times over.
		chunks [][]Job
		cur    []Job
		hdr    = Header{}
		fields [NumFields]int64
		lineNo int
	)
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		i := skipSpace(line, 0)
		if i == len(line) {
			continue
		}
		if line[i] == ';' {
			addHeader(hdr, line[i+1:])
			continue
		}
		n, err := parseJobLine(line, &fields)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if n < MinFields {
			return nil, nil, fmt.Errorf("line %d: %d fields, want at least %d", lineNo, n, MinFields)
		}
		for k := n; k < NumFields; k++ {
			fields[k] = -1
		}
		if len(cur) == cap(cur) {
			if cur != nil {
				chunks = append(chunks, cur)
			}
			// Small traces stay small: chunks double up to chunkJobs.
			cur = make([]Job, 0, min(max(2*cap(cur), 16), chunkJobs))
		}
		cur = append(cur, fromFields(lineNo, &fields))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("line %d: longer than %d bytes", lineNo+1, MaxLineBytes)
		}
		return nil, nil, fmt.Errorf("line %d: read: %w", lineNo+1, err)
	}
	if len(chunks) == 0 {
		return cur, hdr, nil
	}
	total := len(cur)
	for _, c := range chunks {
		total += len(c)
	}
	jobs := make([]Job, 0, total)
	for _, c := range chunks {
		jobs = append(jobs, c...)
	}
	return append(jobs, cur...), hdr, nil
}

// parseJobLine stores up to NumFields leading fields of line in f and
// returns how many it found.
func parseJobLine(line []byte, f *[NumFields]int64) (int, error) {
	n := 0
	for i := skipSpace(line, 0); i < len(line) && n < NumFields; i = skipSpace(line, i) {
		start := i
		for i < len(line) && !isSpace(line[i]) {
			i++
		}
		tok := line[start:i]
		v, err := parseNumber(tok)
		if err != nil {
			return 0, fmt.Errorf("field %d (%s): %w: %s", n+1, fieldNames[n], err, quote(tok))
		}
		f[n] = v
		n++
	}
	return n, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// quote shows a bad token in an error, shortened so that one absurd field
// cannot flood the message.
func quote(tok []byte) string {
	const maxShown = 40
	if len(tok) > maxShown {
		return fmt.Sprintf("%q...", tok[:maxShown])
	}
	return fmt.Sprintf("%q", tok)
}

// addHeader records a comment's "Key: value" in h if it has that shape.
func addHeader(h Header, comment []byte) {
	c := strings.TrimSpace(string(comment))
	key, value, ok := strings.Cut(c, ":")
	if !ok || key == "" || strings.ContainsAny(key, " \t\r\v\f") {
		return
	}
	value = strings.TrimSpace(value)
	if old, seen := h[key]; seen {
		value = old + "\n" + value
	}
	h[key] = value
}

var (
	errNotNumber  = errors.New("not a number")
	errOutOfRange = errors.New("out of range")
)

// parseNumber reads a decimal number ([+-]digits[.digits][(e|E)[+-]digits],
// at least one mantissa digit) and truncates it toward zero. It works on the
// digits rather than through float64, whose rounding would turn
// "0.99999999999999999999" into 1 and make large values inexact.
func parseNumber(s []byte) (int64, error) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := s[intStart:i]
	if i == len(s) && 0 < len(intDigits) && len(intDigits) <= 18 {
		// Nearly every field of a real trace is a short integer, which
		// cannot overflow: take it without the general path's bookkeeping.
		var v int64
		for _, c := range intDigits {
			v = v*10 + int64(c-'0')
		}
		if neg {
			v = -v
		}
		return v, nil
	}
	var fracDigits []byte
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracDigits = s[fracStart:i]
	}
	if len(intDigits)+len(fracDigits) == 0 {
		return 0, errNotNumber
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		expStart := i
		for i < len(s) && isDigit(s[i]) {
			// Saturate: past any line length, a bigger exponent changes
			// nothing but could overflow int.
			if exp < 1<<30 {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == expStart {
			return 0, errNotNumber
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, errNotNumber
	}

	// The integer part is the first len(intDigits)+exp digits of the
	// mantissa, padded with zeros on the right.
	nDigits := len(intDigits) + len(fracDigits)
	digit := func(k int) uint64 {
		switch {
		case k < len(intDigits):
			return uint64(intDigits[k] - '0')
		case k < nDigits:
			return uint64(fracDigits[k-len(intDigits)] - '0')
		}
		return 0
	}
	limit := uint64(1<<63 - 1)
	if neg {
		limit = 1 << 63
	}
	intLen := len(intDigits) + exp
	var v uint64
	for k := 0; k < intLen; k++ {
		if k >= nDigits && v == 0 {
			// Only zeros remain: the value is 0 however long the padding,
			// so "0e999999999" does not loop a billion times.
			break
		}
		d := digit(k)
		if v > (limit-d)/10 {
			return 0, errOutOfRange
		}
		v = v*10 + d
	}
	if neg {
		return int64(-v), nil // -(1<<63) wraps to itself, which is MinInt64
	}
	return int64(v), nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
