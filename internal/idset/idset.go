// Package idset implements the RFC 22 idset string representation: sets of
// non-negative integer ids written as comma-separated ids and ranges, such
// as "1-3,5" or "[1-3,5]".
//
// A Set is kept as sorted, disjoint, non-adjacent inclusive ranges, so the
// cost of a set grows with the number of ranges, never with the number of
// ids: 0-4294967294 is one range.
package idset

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// MaxID is the largest id a Set accepts; flux-core stores ids as unsigned
// int and reserves UINT_MAX as IDSET_INVALID_ID, so MaxID is UINT_MAX-1.
const MaxID uint = math.MaxUint32 - 1

// Range is an inclusive run of ids First..Last.
type Range struct{ First, Last uint }

// Set is an immutable set of non-negative integer ids kept as sorted,
// disjoint, non-adjacent inclusive ranges. The zero value is the empty set.
type Set struct {
	// Invariant: rs[i].First <= rs[i].Last, rs[i].Last+1 < rs[i+1].First,
	// and every id <= MaxID. Methods never mutate rs after construction,
	// so sets may share backing arrays.
	rs []Range
}

// Of returns the set holding ids; ids above MaxID are dropped because no
// Set may hold them.
func Of(ids ...uint) Set {
	rs := make([]Range, 0, len(ids))
	for _, id := range ids {
		if id <= MaxID {
			rs = append(rs, Range{id, id})
		}
	}
	return FromRanges(rs)
}

// FromRange returns the set first..last, empty if first > last; last is
// clamped to MaxID.
func FromRange(first, last uint) Set {
	if last > MaxID {
		last = MaxID
	}
	if first > last {
		return Set{}
	}
	return Set{rs: []Range{{first, last}}}
}

// FromRanges returns the set covering rs, in any order and overlapping;
// ranges with First > Last are ignored and ids above MaxID are dropped.
func FromRanges(rs []Range) Set {
	out := make([]Range, 0, len(rs))
	for _, r := range rs {
		if r.Last > MaxID {
			r.Last = MaxID
		}
		if r.First <= r.Last {
			out = append(out, r)
		}
	}
	if !slices.IsSortedFunc(out, cmpRange) {
		slices.SortFunc(out, cmpRange)
	}
	return Set{rs: coalesce(out)}
}

// FromSortedRanges is FromRanges for ranges already sorted, disjoint and
// non-adjacent, each First <= Last <= MaxID, as a set's own ranges are:
// rs is kept as the set's storage, not copied, so the caller must not
// change it afterwards. Ranges that are not so are put right as
// FromRanges would.
func FromSortedRanges(rs []Range) Set {
	for i, r := range rs {
		if r.First > r.Last || r.Last > MaxID || (i > 0 && rs[i-1].Last+1 >= r.First) {
			return FromRanges(rs)
		}
	}
	if len(rs) == 0 {
		return Set{}
	}
	return Set{rs: rs}
}

// FirstN returns the set of the n smallest ids of s, all of s when it
// has n or fewer, none when n <= 0.
func (s Set) FirstN(n int) Set {
	if n <= 0 {
		return Set{}
	}
	for i, r := range s.rs {
		size := int(r.Last-r.First) + 1
		if size < n {
			n -= size
			continue
		}
		if size == n && i == len(s.rs)-1 {
			return s // all of it: s is never changed, so it is shared
		}
		out := make([]Range, i+1)
		copy(out, s.rs[:i])
		out[i] = Range{First: r.First, Last: r.First + uint(n) - 1}
		return Set{rs: out}
	}
	return s
}

func cmpRange(a, b Range) int {
	switch {
	case a.First < b.First:
		return -1
	case a.First > b.First:
		return 1
	}
	return 0
}

// coalesce merges overlapping and adjacent ranges of a slice sorted by
// First, in place. Ids never exceed MaxID, so Last+1 cannot overflow.
func coalesce(rs []Range) []Range {
	if len(rs) == 0 {
		return nil
	}
	w := 0
	for _, r := range rs[1:] {
		if r.First <= rs[w].Last+1 {
			rs[w].Last = max(rs[w].Last, r.Last)
			continue
		}
		w++
		rs[w] = r
	}
	return rs[:w+1]
}

// MustParse is Parse for constants and tests: it panics on a bad string.
func MustParse(s string) Set {
	set, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return set
}

// Parse decodes an RFC 22 idset string such as "1-3,5" or "[1-3,5]"; the
// empty string and "[]" are the empty set. Like flux-core's idset_decode it
// is strict: ids are plain decimal without leading zeros, elements must
// ascend without overlap, a range must have last > first, and only one
// outer pair of brackets is allowed. Empty elements ("1,,2") are skipped,
// as flux-core's tokenizer does.
func Parse(s string) (Set, error) {
	body := s
	if len(body) >= 2 && body[0] == '[' && body[len(body)-1] == ']' {
		body = body[1 : len(body)-1]
	}
	if strings.ContainsAny(body, "[]") {
		return Set{}, errors.New("mismatched or nested brackets")
	}
	if body == "" {
		return Set{}, nil
	}
	rs := make([]Range, 0, strings.Count(body, ",")+1)
	for tok := range strings.SplitSeq(body, ",") {
		if tok == "" {
			continue
		}
		r, err := parseRange(tok)
		if err != nil {
			return Set{}, fmt.Errorf("error parsing range %s: %w", quote(tok), err)
		}
		if n := len(rs); n > 0 && r.First <= rs[n-1].Last {
			return Set{}, fmt.Errorf("range %s is out of order", quote(tok))
		}
		rs = append(rs, r)
	}
	// Ascending elements may still be adjacent ("1,2"), so merge them.
	return Set{rs: coalesce(rs)}, nil
}

// quote shows a token in an error as Go-quoted text, shortened when long,
// so an error stays one readable line whatever the input holds.
func quote(tok string) string {
	const limit = 40
	if len(tok) > limit {
		return strconv.Quote(tok[:limit]) + "..."
	}
	return strconv.Quote(tok)
}

// parseRange decodes one "N" or "N-M" element.
func parseRange(tok string) (Range, error) {
	lo, hi, isRange := strings.Cut(tok, "-")
	first, err := parseID(lo)
	if err != nil {
		return Range{}, err
	}
	if !isRange {
		return Range{first, first}, nil
	}
	last, err := parseID(hi)
	if err != nil {
		return Range{}, err
	}
	if last <= first {
		return Range{}, errors.New("range end must be greater than its start")
	}
	return Range{first, last}, nil
}

// parseID accepts only plain decimal digits: no sign, space or base prefix,
// and no leading zero (RFC 22).
func parseID(s string) (uint, error) {
	if s == "" {
		return 0, errors.New("missing id")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("unexpected character %q", s[i:i+1])
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, errors.New("leading zero")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > uint64(MaxID) {
		return 0, fmt.Errorf("id exceeds the maximum %d", MaxID)
	}
	return uint(n), nil
}

// String returns the canonical RFC 22 encoding with ranges and without
// brackets, such as "0-3,5"; the empty set is "".
func (s Set) String() string {
	var b strings.Builder
	b.Grow(len(s.rs) * 12)
	s.appendTo(&b)
	return b.String()
}

func (s Set) appendTo(b *strings.Builder) {
	var num [20]byte
	for i, r := range s.rs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(strconv.AppendUint(num[:0], uint64(r.First), 10))
		if r.Last != r.First {
			b.WriteByte('-')
			b.Write(strconv.AppendUint(num[:0], uint64(r.Last), 10))
		}
	}
}

// Bracketed is String with surrounding brackets when the set holds more
// than one id, as hostlists want: "[0-3,5]", but "7" and "".
func (s Set) Bracketed() string {
	var b strings.Builder
	b.Grow(len(s.rs)*12 + 2)
	writeBracketed(&b, s.rs)
	return b.String()
}

// WriteBracketed writes Bracketed's text to b.
func (s Set) WriteBracketed(b *strings.Builder) { writeBracketed(b, s.rs) }

// WriteRangesBracketed writes to b what FromRanges(rs).Bracketed() would
// return, without making the set, for ranges already as a Set holds them:
// ascending, none empty, none overlapping or adjacent.
func WriteRangesBracketed(b *strings.Builder, rs []Range) { writeBracketed(b, rs) }

func writeBracketed(b *strings.Builder, rs []Range) {
	s := Set{rs: rs}
	if len(rs) == 0 || (len(rs) == 1 && rs[0].First == rs[0].Last) {
		s.appendTo(b)
		return
	}
	b.WriteByte('[')
	s.appendTo(b)
	b.WriteByte(']')
}

// Count returns the number of ids in the set.
func (s Set) Count() int {
	n := 0
	for _, r := range s.rs {
		n += int(r.Last-r.First) + 1
	}
	return n
}

// IsEmpty reports whether the set holds no ids.
func (s Set) IsEmpty() bool { return len(s.rs) == 0 }

// Contains reports whether id is in the set, in O(log ranges).
func (s Set) Contains(id uint) bool {
	i := sort.Search(len(s.rs), func(i int) bool { return s.rs[i].Last >= id })
	return i < len(s.rs) && s.rs[i].First <= id
}

// Union returns the ids in s or o.
func (s Set) Union(o Set) Set {
	if len(o.rs) == 0 {
		return s
	}
	if len(s.rs) == 0 {
		return o
	}
	out := make([]Range, 0, len(s.rs)+len(o.rs))
	i, j := 0, 0
	for i < len(s.rs) || j < len(o.rs) {
		var r Range
		if j >= len(o.rs) || (i < len(s.rs) && s.rs[i].First <= o.rs[j].First) {
			r = s.rs[i]
			i++
		} else {
			r = o.rs[j]
			j++
		}
		if n := len(out); n > 0 && r.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return Set{rs: out}
}

// Intersection returns the ids in both s and o.
func (s Set) Intersection(o Set) Set {
	var out []Range
	i, j := 0, 0
	for i < len(s.rs) && j < len(o.rs) {
		a, b := s.rs[i], o.rs[j]
		lo, hi := max(a.First, b.First), min(a.Last, b.Last)
		if lo <= hi {
			out = append(out, Range{lo, hi})
		}
		if a.Last < b.Last {
			i++
		} else {
			j++
		}
	}
	return Set{rs: out}
}

// Difference returns the ids in s that are not in o.
func (s Set) Difference(o Set) Set {
	if len(s.rs) == 0 || len(o.rs) == 0 {
		return s
	}
	var out []Range
	j := 0
	for _, r := range s.rs {
		cur := r
		live := true
		for j < len(o.rs) && o.rs[j].Last < cur.First {
			j++
		}
		for k := j; live && k < len(o.rs) && o.rs[k].First <= cur.Last; k++ {
			cut := o.rs[k]
			if cut.First > cur.First {
				out = append(out, Range{cur.First, cut.First - 1})
			}
			if cut.Last >= cur.Last {
				live = false
			} else {
				cur.First = cut.Last + 1
			}
		}
		if live {
			out = append(out, cur)
		}
	}
	return Set{rs: out}
}

// Equal reports whether s and o hold the same ids.
func (s Set) Equal(o Set) bool { return slices.Equal(s.rs, o.rs) }

// First returns the smallest id, or false for the empty set.
func (s Set) First() (uint, bool) {
	if len(s.rs) == 0 {
		return 0, false
	}
	return s.rs[0].First, true
}

// Last returns the largest id, or false for the empty set.
func (s Set) Last() (uint, bool) {
	if len(s.rs) == 0 {
		return 0, false
	}
	return s.rs[len(s.rs)-1].Last, true
}

// Nth returns the i-th smallest id (from 0), or false when i is out of range.
func (s Set) Nth(i int) (uint, bool) {
	if i < 0 {
		return 0, false
	}
	n := uint(i)
	for _, r := range s.rs {
		size := r.Last - r.First + 1
		if n < size {
			return r.First + n, true
		}
		n -= size
	}
	return 0, false
}

// All yields the ids in ascending order.
func (s Set) All() iter.Seq[uint] {
	return func(yield func(uint) bool) {
		for _, r := range s.rs {
			for id := r.First; ; id++ {
				if !yield(id) {
					return
				}
				if id == r.Last {
					break
				}
			}
		}
	}
}

// Ranges returns a copy of the set's sorted, disjoint, non-adjacent ranges.
func (s Set) Ranges() []Range { return slices.Clone(s.rs) }

// RangeCount returns the number of ranges, the size of the set's storage.
func (s Set) RangeCount() int { return len(s.rs) }

// MarshalJSON encodes the set as a JSON string of String().
func (s Set) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON decodes a JSON string with Parse.
func (s *Set) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("idset: expected a JSON string: %w", err)
	}
	set, err := Parse(str)
	if err != nil {
		return err
	}
	*s = set
	return nil
}
