// Package hostlist implements the RFC 29 hostlist format: an ordered list
// of host names written compactly as comma-separated expressions of the
// form prefix[idlist]suffix, such as "node[1-3,5],foo,bar[01-10]x".
//
// A Hostlist is stored as runs of hosts that share a prefix, a suffix and
// a zero-padding width and whose numbers ascend by one, so node[0-99999]
// is one run and no operation here except Expand and All grows with the
// number of hosts.
package hostlist

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"
)

// MaxNumber is the largest host number a bracketed idlist may hold. It
// keeps every run below 2^32 hosts, so Count cannot overflow; a bare name
// with a larger trailing number is kept whole, as a name without a number.
const MaxNumber = 1<<32 - 1

// maxDigits bounds the digits (zero padding included) of one number.
const maxDigits = 20

// Hostlist is an ordered list of host names, duplicates kept in order,
// stored compressed as runs of (prefix, numeric range with zero-padding
// width, suffix), so node[0-99999] is one run. The zero value is empty.
type Hostlist struct {
	// Invariants: no run has lo > hi; a run of one host is decomposed as
	// its bare name would be (see nameRun); no two neighbouring runs could
	// merge (see merge). These make String canonical for a run sequence.
	runs []run
	// ends[i] is the number of hosts in runs[0..i], for Nth in O(log runs).
	ends []int
}

// run is the hosts prefix+pad(n, width)+suffix for n in lo..hi ascending,
// or, when !numeric, the one host named prefix.
type run struct {
	prefix, suffix string
	lo, hi         uint64
	// width is 0 when numbers print without padding, else the padded
	// width, always greater than the digits of lo (see normWidth).
	width   int
	numeric bool
}

func (r run) count() int {
	if !r.numeric {
		return 1
	}
	return int(r.hi-r.lo) + 1
}

func digits(n uint64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// normWidth drops padding that lo's own digits already fill, so the same
// names always have the same width: "[10-12]" written as 10-12 or as
// width 2 is one run.
func normWidth(lo uint64, width int) int {
	if width <= digits(lo) {
		return 0
	}
	return width
}

// appendNum appends n zero-padded to width.
func appendNum(b []byte, n uint64, width int) []byte {
	for pad := width - digits(n); pad > 0; pad-- {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, n, 10)
}

// appendHost appends the host at value n of r.
func (r run) appendHost(b []byte, n uint64) []byte {
	b = append(b, r.prefix...)
	if r.numeric {
		b = appendNum(b, n, r.width)
		b = append(b, r.suffix...)
	}
	return b
}

func (r run) name(n uint64) string { return string(r.appendHost(nil, n)) }

// hasHost reports whether name is prefix+pad(n, width)+suffix.
func (r run) hasHost(name string, n uint64) bool {
	if !r.numeric {
		return name == r.prefix
	}
	if !strings.HasPrefix(name, r.prefix) || !strings.HasSuffix(name[len(r.prefix):], r.suffix) {
		return false
	}
	var buf [maxDigits + 4]byte
	num := appendNum(buf[:0], n, r.width)
	return name[len(r.prefix):len(name)-len(r.suffix)] == string(num)
}

// index returns the offset of name within r, or -1.
func (r run) index(name string) int {
	if !r.numeric {
		if name == r.prefix {
			return 0
		}
		return -1
	}
	if len(name) < len(r.prefix)+len(r.suffix) || !strings.HasPrefix(name, r.prefix) ||
		!strings.HasSuffix(name, r.suffix) {
		return -1
	}
	mid := name[len(r.prefix) : len(name)-len(r.suffix)]
	n, ok := parseDigits(mid)
	if !ok || n < r.lo || n > r.hi || !r.hasHost(name, n) {
		return -1
	}
	return int(n - r.lo)
}

// parseDigits decodes a non-empty all-digit string no longer than
// maxDigits whose value is at most MaxNumber.
func parseDigits(s string) (uint64, bool) {
	if s == "" || len(s) > maxDigits {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
		if n > MaxNumber {
			return 0, false
		}
	}
	return n, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// nameRun decomposes one host name as flux-core does: its trailing
// digits, if any, are its number and their leading zeros its width.
func nameRun(name string) run {
	i := len(name)
	for i > 0 && isDigit(name[i-1]) {
		i--
	}
	n, ok := parseDigits(name[i:])
	if !ok {
		return run{prefix: name}
	}
	return run{prefix: name[:i], lo: n, hi: n, width: normWidth(n, len(name)-i), numeric: true}
}

// canonical re-decomposes a one-host run as its bare name would be, so a
// one-host run printed as a bare name parses back to the same run. Only a
// suffix or a prefix ending in a digit makes the two differ.
func canonical(r run) run {
	if r.numeric && r.lo == r.hi &&
		(r.suffix != "" || (r.prefix != "" && isDigit(r.prefix[len(r.prefix)-1]))) {
		return nameRun(r.name(r.lo))
	}
	return r
}

// widthJoins reports whether numbers from b.lo up print the same under
// a's width as under b's, so b may extend a.
func widthJoins(a, b run) bool {
	return a.width == b.width || (b.width == 0 && a.width <= digits(b.lo))
}

// merge returns a run holding a's hosts followed by b's when that is one
// run, trying other decompositions of one-host runs so that a list built
// from expanded names compresses as its bracketed form does.
func merge(a, b run) (run, bool) {
	if a.numeric && b.numeric && a.prefix == b.prefix && a.suffix == b.suffix &&
		a.hi+1 == b.lo && widthJoins(a, b) {
		a.hi = b.hi
		return a, true
	}
	if b.count() == 1 && a.numeric && a.hi < MaxNumber {
		if name := b.name(b.lo); a.hasHost(name, a.hi+1) {
			a.hi++
			return a, true
		}
	}
	if a.count() == 1 && b.numeric && b.lo > 0 {
		if name := a.name(a.lo); b.hasHost(name, b.lo-1) {
			b.lo--
			return b, true
		}
	}
	if a.count() == 1 && b.count() == 1 {
		return mergeNames(a.name(a.lo), b.name(b.lo))
	}
	return run{}, false
}

// mergeNames makes a two-host run of names that differ only in one digit
// group, where y's number follows x's: "foo0-eth2","foo1-eth2" is
// foo[0-1]-eth2.
func mergeNames(x, y string) (run, bool) {
	// Skip the common head, then back up to the start of its digit group.
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	for i > 0 && isDigit(x[i-1]) {
		i--
	}
	ex, ey := i, i
	for ex < len(x) && isDigit(x[ex]) {
		ex++
	}
	for ey < len(y) && isDigit(y[ey]) {
		ey++
	}
	if ex == i || ey == i || x[ex:] != y[ey:] {
		return run{}, false
	}
	lo, ok1 := parseDigits(x[i:ex])
	hi, ok2 := parseDigits(y[i:ey])
	if !ok1 || !ok2 || hi != lo+1 {
		return run{}, false
	}
	r := run{prefix: x[:i], suffix: x[ex:], lo: lo, hi: hi, numeric: true}
	if ex-i > 1 && x[i] == '0' {
		r.width = normWidth(lo, ex-i)
	}
	if !r.hasHost(x, lo) || !r.hasHost(y, hi) {
		return run{}, false
	}
	return r, true
}

// appendRun adds r to rs, merging it into its neighbours while they form
// one run, which keeps the no-mergeable-neighbours invariant.
func appendRun(rs []run, r run) []run {
	rs = append(rs, canonical(r))
	for n := len(rs); n >= 2; n = len(rs) {
		m, ok := merge(rs[n-2], rs[n-1])
		if !ok {
			break
		}
		rs[n-2] = m
		rs = rs[:n-1]
	}
	return rs
}

// build finishes a Hostlist from runs that satisfy its invariants.
func build(rs []run) Hostlist {
	if len(rs) == 0 {
		return Hostlist{}
	}
	ends := make([]int, len(rs))
	total := 0
	for i, r := range rs {
		total += r.count()
		ends[i] = total
	}
	return Hostlist{runs: rs, ends: ends}
}

// MustParse is Parse for constants and tests: it panics on a bad string.
func MustParse(s string) Hostlist {
	h, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return h
}

// isSep reports whether c separates hostlist expressions; flux-core
// accepts spaces and tabs as well as the RFC's commas.
func isSep(c byte) bool { return c == ',' || c == ' ' || c == '\t' }

// Parse decodes an RFC 29 hostlist string such as "node[1-3,5],foo".
// Within one idlist the first element's leading zeros pad every id
// (RFC 29: "005,4,11-13" is 005,004,011,012,013), and an element with its
// own leading zeros keeps its own width. Empty expressions are skipped, as
// flux-core's hostlist_decode skips them.
func Parse(s string) (Hostlist, error) {
	var rs []run
	for i := 0; i < len(s); {
		if isSep(s[i]) {
			i++
			continue
		}
		start, depth := i, 0
		for i < len(s) && (depth > 0 || !isSep(s[i])) {
			switch s[i] {
			case '[':
				depth++
			case ']':
				depth--
			}
			i++
		}
		var err error
		if rs, err = parseExpr(rs, s[start:i]); err != nil {
			return Hostlist{}, fmt.Errorf("invalid hostlist expression %s at offset %d: %w", quote(s[start:i]), start, err)
		}
	}
	return build(rs), nil
}

// quote shows input in an error as Go-quoted text, shortened when long,
// so an error stays one readable line whatever the input holds.
func quote(s string) string {
	const limit = 60
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "..."
	}
	return strconv.Quote(s)
}

// checkName rejects characters RFC 29 excludes from prefixes and suffixes.
func checkName(s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ',' || c == '[' || c == ']' {
			return fmt.Errorf("invalid character %q", s[i:i+1])
		}
	}
	return nil
}

// parseExpr appends the hosts of one prefix[idlist]suffix expression.
func parseExpr(rs []run, expr string) ([]run, error) {
	open := strings.IndexByte(expr, '[')
	if open < 0 {
		if strings.IndexByte(expr, ']') >= 0 {
			return nil, errors.New("unmatched ']'")
		}
		if err := checkName(expr); err != nil {
			return nil, err
		}
		return appendRun(rs, nameRun(expr)), nil
	}
	prefix, rest := expr[:open], expr[open+1:]
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return nil, errors.New("unmatched '['")
	}
	idlist, suffix := rest[:end], rest[end+1:]
	if strings.IndexByte(idlist, '[') >= 0 || strings.ContainsAny(suffix, "[]") {
		return nil, errors.New("nested or repeated brackets")
	}
	if strings.IndexByte(prefix, ']') >= 0 {
		return nil, errors.New("unmatched ']'")
	}
	if err := checkName(prefix); err != nil {
		return nil, err
	}
	if err := checkName(suffix); err != nil {
		return nil, err
	}
	if idlist == "" {
		return nil, errors.New("empty brackets")
	}
	width0 := 0
	for k, elem := range strings.Split(idlist, ",") {
		r, w, err := parseElem(elem)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			width0 = w
		}
		if w == 0 {
			w = width0
		}
		rs = appendRun(rs, run{prefix: prefix, suffix: suffix, lo: r.lo, hi: r.hi,
			width: normWidth(r.lo, w), numeric: true})
	}
	return rs, nil
}

// parseElem decodes an idlist element "N" or "N-M"; w is the width N's
// leading zeros ask for, or 0 when N has none.
func parseElem(elem string) (r run, w int, err error) {
	los, his, isRange := strings.Cut(elem, "-")
	lo, ok := parseDigits(los)
	if !ok {
		return run{}, 0, badElem(elem, los)
	}
	hi := lo
	if isRange {
		if hi, ok = parseDigits(his); !ok {
			return run{}, 0, badElem(elem, his)
		}
		if hi < lo {
			return run{}, 0, fmt.Errorf("invalid range %s: end is less than start", quote(elem))
		}
	}
	if len(los) > 1 && los[0] == '0' {
		w = len(los)
	}
	return run{lo: lo, hi: hi}, w, nil
}

func badElem(elem, num string) error {
	if num == "" {
		return fmt.Errorf("invalid range %s: missing number", quote(elem))
	}
	for i := 0; i < len(num); i++ {
		if !isDigit(num[i]) {
			return fmt.Errorf("invalid range %s: unexpected character %q", quote(elem), num[i:i+1])
		}
	}
	return fmt.Errorf("invalid range %s: number exceeds the maximum %d", quote(elem), MaxNumber)
}

// New returns the hostlist of the expanded names hosts, in order. Names
// that are not valid RFC 29 host names (empty, or holding whitespace,
// commas, brackets or non-printable characters) are dropped, as
// flux-core's hostlist_append drops them; FromNames reports them instead.
func New(hosts ...string) Hostlist {
	var rs []run
	for _, name := range hosts {
		if name == "" || checkName(name) != nil {
			continue
		}
		rs = appendRun(rs, nameRun(name))
	}
	return build(rs)
}

// FromNames is New that fails on the first name that is not a valid RFC 29
// host name instead of dropping it.
func FromNames(hosts ...string) (Hostlist, error) {
	for i, name := range hosts {
		if name == "" {
			return Hostlist{}, fmt.Errorf("host name %d is empty", i)
		}
		if err := checkName(name); err != nil {
			return Hostlist{}, fmt.Errorf("host name %s: %w", quote(name), err)
		}
	}
	return New(hosts...), nil
}

// String returns the RFC 29 compressed encoding in order, grouping
// neighbouring runs that share a prefix and suffix in one bracket, as
// flux-core's hostlist_encode does ("foo[1-3,5],bar"). Unlike flux-core,
// which expands them, runs with a suffix stay compressed ("foo[0-4]-eth2").
func (h Hostlist) String() string {
	var b []byte
	for i := 0; i < len(h.runs); {
		if i > 0 {
			b = append(b, ',')
		}
		first := h.runs[i]
		if !first.numeric {
			b = append(b, first.prefix...)
			i++
			continue
		}
		j := i + 1
		for j < len(h.runs) && joinsGroup(first, h.runs[j]) {
			j++
		}
		if j == i+1 && first.lo == first.hi {
			b = first.appendHost(b, first.lo)
			i = j
			continue
		}
		b = append(b, first.prefix...)
		b = append(b, '[')
		for k := i; k < j; k++ {
			r := h.runs[k]
			if k > i {
				b = append(b, ',')
			}
			b = appendNum(b, r.lo, r.width)
			if r.hi != r.lo {
				b = append(b, '-')
				b = appendNum(b, r.hi, r.width)
			}
		}
		b = append(b, ']')
		b = append(b, first.suffix...)
		i = j
	}
	return string(b)
}

// joinsGroup reports whether r can be written in the bracket that first
// opens and parse back unchanged: an unpadded id in that bracket is padded
// to the first element's width (RFC 29), so it must be at least as long.
func joinsGroup(first, r run) bool {
	return r.numeric && r.prefix == first.prefix && r.suffix == first.suffix &&
		(r.width > 0 || first.width <= digits(r.lo))
}

// Count returns the number of hosts, duplicates included.
func (h Hostlist) Count() int {
	if len(h.ends) == 0 {
		return 0
	}
	return h.ends[len(h.ends)-1]
}

// IsEmpty reports whether the list holds no hosts.
func (h Hostlist) IsEmpty() bool { return len(h.runs) == 0 }

// Nth returns the i-th host (from 0) without expanding the list.
func (h Hostlist) Nth(i int) (string, bool) {
	if i < 0 || i >= h.Count() {
		return "", false
	}
	k := sort.SearchInts(h.ends, i+1)
	start := 0
	if k > 0 {
		start = h.ends[k-1]
	}
	r := h.runs[k]
	return r.name(r.lo + uint64(i-start)), true
}

// Find returns the index of the first occurrence of host, or -1, in
// O(runs) without expanding the list.
func (h Hostlist) Find(host string) int {
	start := 0
	for k, r := range h.runs {
		if off := r.index(host); off >= 0 {
			return start + off
		}
		start = h.ends[k]
	}
	return -1
}

// Contains reports whether host is in the list.
func (h Hostlist) Contains(host string) bool { return h.Find(host) >= 0 }

// All yields each host with its index, in order.
func (h Hostlist) All() iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		i := 0
		var buf []byte
		for _, r := range h.runs {
			for n := r.lo; ; n++ {
				buf = r.appendHost(buf[:0], n)
				if !yield(i, string(buf)) {
					return
				}
				i++
				if !r.numeric || n == r.hi {
					break
				}
			}
		}
	}
}

// Expand returns every host name; it allocates Count() strings, so use it
// only on lists known to be small.
func (h Hostlist) Expand() []string {
	out := make([]string, 0, h.Count())
	for _, name := range h.All() {
		out = append(out, name)
	}
	return out
}

// Append returns h followed by o.
func (h Hostlist) Append(o Hostlist) Hostlist {
	if len(o.runs) == 0 {
		return h
	}
	if len(h.runs) == 0 {
		return o
	}
	rs := make([]run, len(h.runs), len(h.runs)+len(o.runs))
	copy(rs, h.runs)
	for _, r := range o.runs {
		rs = appendRun(rs, r)
	}
	return build(rs)
}

// Equal reports whether h and o hold the same names in the same order.
// Lists with the same runs compare in O(runs); the same names spelled
// by differently split runs (a1[0-9] and a[10-19]) are compared name by
// name without allocating.
func (h Hostlist) Equal(o Hostlist) bool {
	if h.Count() != o.Count() {
		return false
	}
	var bufA, bufB []byte
	i, j := 0, 0
	var x, y uint64 // offsets into h.runs[i] and o.runs[j]
	for i < len(h.runs) && j < len(o.runs) {
		a, b := h.runs[i], o.runs[j]
		restA, restB := uint64(a.count())-x, uint64(b.count())-y
		step := uint64(1)
		if a.numeric == b.numeric && a.prefix == b.prefix && a.suffix == b.suffix &&
			a.width == b.width && a.lo+x == b.lo+y {
			step = min(restA, restB)
		} else {
			bufA = a.appendHost(bufA[:0], a.lo+x)
			bufB = b.appendHost(bufB[:0], b.lo+y)
			if string(bufA) != string(bufB) {
				return false
			}
		}
		if x += step; x == uint64(a.count()) {
			i, x = i+1, 0
		}
		if y += step; y == uint64(b.count()) {
			j, y = j+1, 0
		}
	}
	return true
}

// MarshalJSON encodes the list as a JSON string of String().
func (h Hostlist) MarshalJSON() ([]byte, error) { return json.Marshal(h.String()) }

// UnmarshalJSON decodes a JSON string with Parse.
func (h *Hostlist) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hostlist: expected a JSON string: %w", err)
	}
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*h = v
	return nil
}
