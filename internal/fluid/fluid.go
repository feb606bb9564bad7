// Package fluid implements Flux Locally Unique IDs (RFC 19,
// flux-framework/rfc spec_19.rst): 64-bit, k-ordered identifiers made of a
// millisecond timestamp, a generator id and a sequence number, used as job
// IDs, and their string encodings (F58, decimal, hex, dotted hex, words).
//
// Behaviour where the RFC is silent follows flux-core's
// src/common/libutil/fluid.c. The package reads no clock: the caller passes
// the time to the Generator.
package fluid

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ID is a FLUID.
type ID uint64

// Bit widths of the three fields, RFC 19: [ timestamp | id | sequence ].
const (
	TimestampBits   = 40
	GeneratorIDBits = 14
	SequenceBits    = 10
)

// Largest value of each field.
const (
	MaxTimestamp   = 1<<TimestampBits - 1
	MaxGeneratorID = 1<<GeneratorIDBits - 1
	MaxSequence    = 1<<SequenceBits - 1
)

const (
	timestampShift = GeneratorIDBits + SequenceBits
	generatorShift = SequenceBits
)

// New assembles an ID from its fields, which must be in range.
func New(timestamp uint64, genID, seq uint32) (ID, error) {
	if timestamp > MaxTimestamp {
		return 0, fmt.Errorf("fluid: timestamp %d out of range (0-%d)", timestamp, uint64(MaxTimestamp))
	}
	if genID > MaxGeneratorID {
		return 0, fmt.Errorf("fluid: generator id %d out of range (0-%d)", genID, MaxGeneratorID)
	}
	if seq > MaxSequence {
		return 0, fmt.Errorf("fluid: sequence %d out of range (0-%d)", seq, MaxSequence)
	}
	return compose(timestamp, genID, seq), nil
}

func compose(ts uint64, genID, seq uint32) ID {
	return ID(ts<<timestampShift | uint64(genID)<<generatorShift | uint64(seq))
}

// Timestamp returns the milliseconds since the generator's epoch.
func (id ID) Timestamp() uint64 { return uint64(id) >> timestampShift }

// GeneratorID returns the id of the generator that issued id.
func (id ID) GeneratorID() uint32 {
	return uint32(uint64(id)>>generatorShift) & MaxGeneratorID
}

// Sequence returns the sequence number within the id's millisecond.
func (id ID) Sequence() uint32 { return uint32(id) & MaxSequence }

// Generator issues increasing FLUIDs for one generator id. It is not safe
// for concurrent use; callers serialise access.
type Generator struct {
	epoch time.Time
	genID uint32
	ts    uint64 // timestamp of the next id, unless the clock is later
	seq   uint32 // next sequence number at ts; MaxSequence+1 when used up
}

// NewGenerator returns a generator whose timestamps count milliseconds from
// epoch. last is the largest id any earlier run issued (0 if none); as in
// flux-core's restart from a saved timestamp, the new run starts in the
// millisecond after last's, so whatever its generator id, every id it
// issues is greater than last even if the clock now reads earlier.
func NewGenerator(epoch time.Time, genID uint32, last ID) (*Generator, error) {
	if genID > MaxGeneratorID {
		return nil, fmt.Errorf("fluid: generator id %d out of range (0-%d)", genID, MaxGeneratorID)
	}
	g := &Generator{epoch: epoch, genID: genID}
	if last != 0 {
		if last.Timestamp() >= MaxTimestamp {
			return nil, ErrExhausted
		}
		g.ts = last.Timestamp() + 1
	}
	return g, nil
}

// ErrExhausted is returned once the 40-bit timestamp field, about 34.8 years
// of milliseconds from the epoch, is used up.
var ErrExhausted = errors.New("fluid: timestamp field exhausted (2^40 ms after the epoch)")

// Next returns an id greater than every id this generator or its
// predecessor issued. A clock that goes backwards, or reads before the
// epoch, does not move the timestamp back: ids keep counting in the latest
// millisecond seen. When a millisecond's 1024 sequence numbers are used up
// the generator takes the next millisecond rather than waiting for the
// clock as flux-core does, since it cannot sleep; that millisecond then
// counts as seen.
func (g *Generator) Next(now time.Time) (ID, error) {
	ts, seq := g.ts, g.seq
	if t := g.elapsed(now); t > ts {
		ts, seq = t, 0
	}
	if seq > MaxSequence {
		ts, seq = ts+1, 0
	}
	if ts > MaxTimestamp {
		return 0, ErrExhausted
	}
	g.ts, g.seq = ts, seq+1
	return compose(ts, g.genID, seq), nil
}

// elapsed returns whole milliseconds from the epoch to now, 0 before it.
func (g *Generator) elapsed(now time.Time) uint64 {
	d := now.Sub(g.epoch) // saturates, so a far-off clock cannot wrap
	if d <= 0 {
		return 0
	}
	return uint64(d / time.Millisecond)
}

// Format selects a string encoding of an ID.
type Format int

// The RFC 19 encodings. Emoji, which the RFC makes optional, is not offered.
const (
	F58      Format = iota // base58 with the "ƒ" prefix: ƒuZZybuNNy
	F58Plain               // base58 with an ASCII "f" prefix: fuZZybuNNy
	Dec                    // decimal: 6731191091817518
	Hex                    // "0x" and lower-case hex: 0x17e9fb8df16c2e
	Dothex                 // four dotted groups of four hex digits: 0017.e9fb.8df1.6c2e
	Words                  // mnemonicode: reform-remote-galileo--heart-package-academy
)

var formatNames = [...]string{"f58", "f58plain", "dec", "hex", "dothex", "words"}

// String names the format as flux job id's --to option does where it can.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// f58Digits is the RFC 19 base58 alphabet: no 0, O, I or l.
const f58Digits = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

const (
	f58Prefix      = "ƒ" // U+0192
	f58PlainPrefix = "f"
	// flux-core refuses F58 strings longer than this; 11 digits cover 2^64-1
	// and the twelfth leaves room for a leading zero digit.
	maxF58Digits = 12
)

// f58Value maps a byte to its base58 digit value, or -1.
var f58Value = func() (m [256]int8) {
	for i := range m {
		m[i] = -1
	}
	for i := range len(f58Digits) {
		m[f58Digits[i]] = int8(i)
	}
	return m
}()

// Encode renders id in format f.
func (id ID) Encode(f Format) (string, error) {
	switch f {
	case F58:
		return f58Prefix + base58(uint64(id)), nil
	case F58Plain:
		return f58PlainPrefix + base58(uint64(id)), nil
	case Dec:
		return strconv.FormatUint(uint64(id), 10), nil
	case Hex:
		return "0x" + strconv.FormatUint(uint64(id), 16), nil
	case Dothex:
		return dothex(uint64(id)), nil
	case Words:
		return words(uint64(id)), nil
	}
	return "", fmt.Errorf("fluid: unknown encoding %v", f)
}

// String returns the F58 encoding with the "ƒ" prefix, as Flux prints job IDs.
func (id ID) String() string { return f58Prefix + base58(uint64(id)) }

func base58(v uint64) string {
	var buf [11]byte // 58^11 > 2^64
	i := len(buf)
	for {
		i--
		buf[i] = f58Digits[v%58]
		v /= 58
		if v == 0 {
			break
		}
	}
	return string(buf[i:])
}

func dothex(v uint64) string {
	const hexDigits = "0123456789abcdef"
	var buf [19]byte
	j := len(buf)
	for i := range 16 {
		if i > 0 && i%4 == 0 {
			j--
			buf[j] = '.'
		}
		j--
		buf[j] = hexDigits[v&0xf]
		v >>= 4
	}
	return string(buf[:])
}

// words encodes the 8 bytes of v, least significant first as flux-core lays
// them out on its little-endian hosts, as two groups of three mnemonicode
// words: each 32-bit group is three base-1626 digits, lowest first.
func words(v uint64) string {
	var b strings.Builder
	for g := range 2 {
		x := uint32(v >> (32 * g))
		if g > 0 {
			b.WriteString("--")
		}
		for w := range 3 {
			if w > 0 {
				b.WriteByte('-')
			}
			b.WriteString(mnWords[x%mnBase])
			x /= mnBase
		}
	}
	return b.String()
}

// maxQuoted bounds how much of a bad input an error message repeats.
const maxQuoted = 64

func parseError(s, why string) error {
	q := s
	if len(q) > maxQuoted {
		q = q[:maxQuoted]
	}
	q = strconv.Quote(q)
	if len(s) > maxQuoted {
		q += "..."
	}
	return fmt.Errorf("error parsing jobid %s: %s", q, why)
}

// Parse decodes a FLUID in any supported encoding, chosen by RFC 19's rules:
// a "." means dotted hex, a "-" means words, a leading "ƒ" or "f" means F58,
// a leading emoji byte sequence means emoji (refused here), "0x" means hex,
// and anything else is decimal. Surrounding whitespace is ignored, as
// RFC 19 asks of a decoder.
func Parse(s string) (ID, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, parseError(s, "empty string")
	}
	switch {
	case strings.HasPrefix(s, "-"):
		return 0, parseError(s, "must not be negative")
	case strings.Contains(s, "."):
		return parseDothex(s)
	case strings.Contains(s, "-"):
		return parseWords(s)
	case strings.HasPrefix(s, f58Prefix):
		return parseF58(s, s[len(f58Prefix):])
	case strings.HasPrefix(s, f58PlainPrefix):
		return parseF58(s, s[len(f58PlainPrefix):])
	case strings.HasPrefix(s, "\xf0\x9f"):
		return 0, parseError(s, "emoji encoding is not supported")
	case strings.HasPrefix(s, "0x"):
		return parseInt(s, s[2:], 16, "hex")
	}
	return parseInt(s, s, 10, "decimal")
}

func parseF58(s, digits string) (ID, error) {
	if digits == "" {
		return 0, parseError(s, "no F58 digits after the prefix")
	}
	if len(digits) > maxF58Digits {
		return 0, parseError(s, fmt.Sprintf("too many F58 digits (at most %d)", maxF58Digits))
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		d := f58Value[digits[i]]
		if d < 0 {
			r, _ := utf8.DecodeRuneInString(digits[i:])
			return 0, parseError(s, fmt.Sprintf("invalid F58 digit %q", r))
		}
		hi, lo := bits.Mul64(v, 58)
		lo, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			return 0, parseError(s, "F58 value exceeds 64 bits")
		}
		v = lo
	}
	return ID(v), nil
}

func parseInt(s, digits string, base int, name string) (ID, error) {
	if digits == "" {
		return 0, parseError(s, "no digits after 0x")
	}
	for i := 0; i < len(digits); i++ {
		if digitValue(digits[i]) >= base {
			r, _ := utf8.DecodeRuneInString(digits[i:])
			return 0, parseError(s, fmt.Sprintf("invalid %s digit %q", name, r))
		}
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, parseError(s, "value exceeds 64 bits")
	}
	return ID(v), nil
}

// digitValue returns the value of a hex digit, or 99 for anything else.
func digitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// parseDothex accepts four groups of one to four hex digits. flux-core's
// strtoul-based decoder also takes signs, spaces and oversized groups that
// spill into their neighbours; those are refused here.
func parseDothex(s string) (ID, error) {
	const want = "dotted hex needs 4 groups of 1-4 hex digits"
	groups := strings.SplitN(s, ".", 5)
	if len(groups) != 4 {
		return 0, parseError(s, want)
	}
	var v uint64
	for _, g := range groups {
		if g == "" || len(g) > 4 {
			return 0, parseError(s, want)
		}
		var x uint64
		for i := 0; i < len(g); i++ {
			d := digitValue(g[i])
			if d >= 16 {
				r, _ := utf8.DecodeRuneInString(g[i:])
				return 0, parseError(s, fmt.Sprintf("invalid hex digit %q", r))
			}
			x = x<<4 | uint64(d)
		}
		v = v<<16 | x
	}
	return ID(v), nil
}

// parseWords decodes six mnemonicode words separated by runs of "-". Case is
// ignored, as mnemonicode does.
func parseWords(s string) (ID, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '-' })
	if len(fields) != 6 {
		return 0, parseError(s, fmt.Sprintf("words encoding needs 6 words, got %d", len(fields)))
	}
	var v uint64
	for g := range 2 {
		var x uint64
		scale := uint64(1)
		for w := range 3 {
			word := fields[3*g+w]
			i, ok := mnIndex[strings.ToLower(word)]
			if !ok {
				return 0, parseError(s, fmt.Sprintf("unknown word %s", strconv.Quote(truncate(word))))
			}
			x += uint64(i) * scale
			scale *= mnBase
		}
		// 1626^3 exceeds 2^32 by a little; mnemonicode never produces the
		// few word triples above that.
		if x > 0xffffffff {
			return 0, parseError(s, "words do not encode a 64-bit value")
		}
		v |= x << (32 * g)
	}
	return ID(v), nil
}

func truncate(s string) string {
	if len(s) > maxQuoted {
		return s[:maxQuoted]
	}
	return s
}

// MarshalJSON encodes id as a JSON integer, as Flux's messages carry job IDs.
func (id ID) MarshalJSON() ([]byte, error) {
	return strconv.AppendUint(nil, uint64(id), 10), nil
}

// UnmarshalJSON decodes a JSON integer in the uint64 range; null leaves id
// unchanged, as encoding/json does for plain integers.
func (id *ID) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if s == "" {
		return errors.New("fluid: json: want an integer, got nothing")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return fmt.Errorf("fluid: json: want a non-negative integer, got %s", truncate(s))
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("fluid: json: %s exceeds 64 bits", truncate(s))
	}
	*id = ID(v)
	return nil
}
