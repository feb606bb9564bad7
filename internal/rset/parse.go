package rset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
)

// invalidPropertyChars are the characters RFC 20 forbids in a property
// name; flux-core's rlist.c omits '!', the RFC lists it.
const invalidPropertyChars = "!&'\"^`|()"

// Parse decodes an RFC 20 version 1 R document. It is strict: version must
// be the integer 1, every R_lite entry needs a rank idset and a children
// object of idset strings, a nodelist must name one host per rank, and
// properties must name known ranks.
func Parse(data []byte) (*R, error) {
	if r, ok := parseFast(data); ok {
		return r, nil
	}
	return parseFull(data)
}

// parseFull is Parse for any input: it decodes level by level, so that
// every defect is reported where it is.
func parseFull(data []byte) (*R, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("R: expected object, got %s", kindOf(data))
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if top == nil {
		return nil, errors.New("R: expected object, got null")
	}
	if err := parseVersion(top); err != nil {
		return nil, err
	}
	execRaw, ok := top["execution"]
	if !ok {
		return nil, errors.New("object item not found: execution")
	}
	exec, err := object(execRaw, "execution")
	if err != nil {
		return nil, err
	}
	r := &R{}
	if r.scheduling, err = compactScheduling(top["scheduling"]); err != nil {
		return nil, err
	}
	if r.nodes, err = parseRLite(exec); err != nil {
		return nil, err
	}
	r.ranks = ranksOf(r.nodes)
	if err := parseNodelist(exec, r.nodes); err != nil {
		return nil, err
	}
	if r.props, err = parseProperties(exec, r.ranks); err != nil {
		return nil, err
	}
	if r.start, err = parseTime(exec, "starttime"); err != nil {
		return nil, err
	}
	if r.expiration, err = parseTime(exec, "expiration"); err != nil {
		return nil, err
	}
	if err := checkTimes(r.start, r.expiration); err != nil {
		return nil, err
	}
	if r.nslots, err = parseNSlots(exec); err != nil {
		return nil, err
	}
	return r, nil
}

// UnmarshalJSON decodes an R document with Parse, so an R can sit inside
// other JSON messages (RFC 27's alloc response carries one).
func (r *R) UnmarshalJSON(data []byte) error {
	v, err := Parse(data)
	if err != nil {
		return err
	}
	*r = *v
	return nil
}

func parseVersion(top map[string]json.RawMessage) error {
	raw, ok := top["version"]
	if !ok {
		return errors.New("object item not found: version")
	}
	if k := kindOf(raw); k != "integer" {
		return fmt.Errorf("version: expected integer, got %s", k)
	}
	if v, err := strconv.ParseInt(string(raw), 10, 64); err != nil || v != 1 {
		return fmt.Errorf("invalid version=%s", raw)
	}
	return nil
}

// entry is one decoded R_lite element.
type entry struct {
	ranks  idset.Set
	kids   []child
	ranges int    // idset ranges in kids
	mem    uint64 // the "memory" key, 0 when absent
}

func parseRLite(exec map[string]json.RawMessage) ([]node, error) {
	raw, ok := exec["R_lite"]
	if !ok {
		return nil, errors.New("execution: object item not found: R_lite")
	}
	elems, err := array(raw, "execution.R_lite")
	if err != nil {
		return nil, err
	}
	es := entries{list: make([]entry, 0, len(elems))}
	for i, e := range elems {
		where := fmt.Sprintf("execution.R_lite[%d]", i)
		en, err := parseEntry(e, where)
		if err != nil {
			return nil, err
		}
		if err := es.add(en); err != nil {
			return nil, err
		}
	}
	return es.nodes()
}

// entries gathers decoded R_lite elements, bounding their size as they come.
type entries struct {
	list          []entry
	total, ranges int
}

func (es *entries) add(en entry) error {
	// Count never expands the set, so a huge idset is refused cheaply.
	n := en.ranks.Count()
	es.total += n
	if es.total > MaxRanks {
		return fmt.Errorf("execution.R_lite: more than %d ranks", MaxRanks)
	}
	// Each rank holds its own view of the children, so bound the ranges
	// that a short document can make every later operation walk.
	es.ranges += n * en.ranges
	if es.ranges > MaxRanges {
		return fmt.Errorf("execution.R_lite: more than %d child idset ranges over all ranks", MaxRanges)
	}
	es.list = append(es.list, en)
	return nil
}

// nodes expands the entries into one node per rank, merging ranks listed
// more than once.
func (es *entries) nodes() ([]node, error) {
	nodes := make([]node, 0, es.total)
	var bare idset.Set // ranks of entries with no resources
	for _, en := range es.list {
		if len(en.kids) == 0 && en.mem == 0 {
			bare = bare.Union(en.ranks)
			continue
		}
		for rank := range en.ranks.All() {
			nodes = append(nodes, node{rank: rank, kids: en.kids, mem: en.mem})
		}
	}
	byRank := func(a, b node) int { return cmpUint(a.rank, b.rank) }
	if !slices.IsSortedFunc(nodes, byRank) {
		slices.SortStableFunc(nodes, byRank)
	}
	out := nodes[:0]
	for _, n := range nodes {
		if k := len(out) - 1; k >= 0 && out[k].rank == n.rank {
			if name, dup := overlap(out[k].kids, n.kids); name != "" {
				return nil, fmt.Errorf("execution.R_lite: rank %d lists %s %s more than once", n.rank, name, dup)
			}
			out[k].kids = unionKids(out[k].kids, n.kids)
			if out[k].mem = addMem(out[k].mem, n.mem); out[k].mem > MaxMemory {
				return nil, fmt.Errorf("execution.R_lite: rank %d: memory summed over its entries is more than %d bytes", n.rank, uint64(MaxMemory))
			}
			continue
		}
		out = append(out, n)
	}
	for _, n := range out {
		if n.empty() { // memory alone, which no job can use
			bare = bare.Union(idset.Of(n.rank))
		}
	}
	if rank, ok := bare.Difference(ranksOf(slices.DeleteFunc(slices.Clone(out), node.empty))).First(); ok {
		return nil, fmt.Errorf("execution.R_lite: rank %d has no resources", rank)
	}
	return out, nil
}

func parseEntry(raw json.RawMessage, where string) (entry, error) {
	m, err := object(raw, where)
	if err != nil {
		return entry{}, err
	}
	rankRaw, ok := m["rank"]
	if !ok {
		return entry{}, fmt.Errorf("%s: object item not found: rank", where)
	}
	s, err := str(rankRaw, where+".rank")
	if err != nil {
		return entry{}, err
	}
	ranks, err := idset.Parse(s)
	if err != nil {
		return entry{}, fmt.Errorf("%s.rank: invalid idset %q: %v", where, s, err)
	}
	kidsRaw, ok := m["children"]
	if !ok {
		return entry{}, fmt.Errorf("%s: object item not found: children", where)
	}
	km, err := object(kidsRaw, where+".children")
	if err != nil {
		return entry{}, err
	}
	names := make([]string, 0, len(km))
	for name := range km {
		names = append(names, name)
	}
	slices.Sort(names) // report the same error whatever the map order
	kids := make([]child, 0, len(km))
	ranges := 0
	for _, name := range names {
		v := km[name]
		at := keyPath(where+".children", name)
		if name == "" {
			return entry{}, fmt.Errorf("%s: empty resource name", at)
		}
		s, err := str(v, at)
		if err != nil {
			return entry{}, err
		}
		ids, err := idset.Parse(s)
		if err != nil {
			return entry{}, fmt.Errorf("%s: invalid idset %q: %v", at, s, err)
		}
		if !ids.IsEmpty() {
			kids = append(kids, child{name, ids})
			ranges += ids.RangeCount()
		}
	}
	mem, err := parseMemory(m, where)
	if err != nil {
		return entry{}, err
	}
	return entry{ranks: ranks, kids: kids, ranges: ranges, mem: mem}, nil
}

// parseMemory reads an entry's "memory" key, fluxq's extension of R_lite:
// bytes on each rank of the entry, an integer from 0 to MaxMemory; absent
// is 0. Flux's R readers ignore entry keys they do not know.
func parseMemory(m map[string]json.RawMessage, where string) (uint64, error) {
	raw, ok := m["memory"]
	if !ok {
		return 0, nil
	}
	at := where + ".memory"
	if k := kindOf(raw); k != "integer" {
		return 0, fmt.Errorf("%s: expected integer, got %s", at, k)
	}
	n, err := memoryValue(string(bytes.TrimSpace(raw)))
	if err != nil {
		return 0, fmt.Errorf("%s: %s", at, err)
	}
	return n, nil
}

// memoryValue reads the text of a JSON integer as a memory size in bytes.
func memoryValue(lit string) (uint64, error) {
	n, err := strconv.ParseUint(lit, 10, 64)
	if err != nil || n > MaxMemory {
		return 0, fmt.Errorf("invalid value %s: memory is bytes from 0 to %d", lit, uint64(MaxMemory))
	}
	return n, nil
}

// overlap returns the first child name, with its ids, that a and b share.
func overlap(a, b []child) (string, string) {
	for _, x := range a {
		for _, y := range b {
			if x.name == y.name {
				if both := x.ids.Intersection(y.ids); !both.IsEmpty() {
					return x.name, both.String()
				}
			}
		}
	}
	return "", ""
}

func parseNodelist(exec map[string]json.RawMessage, nodes []node) error {
	raw, ok := exec["nodelist"]
	if !ok {
		return nil
	}
	elems, err := array(raw, "execution.nodelist")
	if err != nil {
		return err
	}
	var hl hostlist.Hostlist
	for i, e := range elems {
		where := fmt.Sprintf("execution.nodelist[%d]", i)
		s, err := str(e, where)
		if err != nil {
			return err
		}
		h, err := hostlist.Parse(s)
		if err != nil {
			return fmt.Errorf("%s: invalid hostlist %q: %v", where, s, err)
		}
		hl = hl.Append(h)
	}
	return assignHosts(hl, nodes)
}

// assignHosts names nodes, in rank order, after the hosts of hl.
func assignHosts(hl hostlist.Hostlist, nodes []node) error {
	// Count never expands, so node[0-9999999999] is refused here cheaply.
	if n := hl.Count(); n != len(nodes) {
		return fmt.Errorf("execution.nodelist: %d hosts for %d ranks", n, len(nodes))
	}
	i := 0
	for _, host := range hl.All() {
		if i >= len(nodes) {
			break
		}
		if host == "" {
			return fmt.Errorf("execution.nodelist: empty hostname for rank %d", nodes[i].rank)
		}
		nodes[i].host = host
		i++
	}
	return nil
}

func parseProperties(exec map[string]json.RawMessage, ranks idset.Set) (map[string]idset.Set, error) {
	raw, ok := exec["properties"]
	if !ok {
		return nil, nil
	}
	if kindOf(raw) != "object" {
		return nil, errors.New("properties must be an object")
	}
	m, err := object(raw, "execution.properties")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	// Every property is checked before any rank is, as flux-core does, so
	// the first error reported does not depend on which ranks exist.
	sets := make([]idset.Set, len(names))
	for i, name := range names {
		v := m[name]
		if kindOf(v) != "string" {
			var b bytes.Buffer
			_ = json.Compact(&b, v) // v is valid JSON: it was decoded above
			return nil, fmt.Errorf("properties value '%s' not a string", b.String())
		}
		if err := checkPropertyName(name); err != nil {
			return nil, err
		}
		s, err := str(v, "")
		if err != nil {
			return nil, err
		}
		if sets[i], err = idset.Parse(s); err != nil {
			return nil, fmt.Errorf("invalid idset %s specified for property %q", quoteFlux(s), name)
		}
	}
	return propsOf(names, sets, ranks)
}

// propsOf maps each property of names, sorted, to its ranks sets[i], which
// must be within ranks; properties naming no rank are dropped.
func propsOf(names []string, sets []idset.Set, ranks idset.Set) (map[string]idset.Set, error) {
	var props map[string]idset.Set
	for i, name := range names {
		if unknown := sets[i].Difference(ranks); !unknown.IsEmpty() {
			word := "ranks"
			if unknown.Count() == 1 {
				word = "rank"
			}
			return nil, fmt.Errorf("%s %s not found in target resource list", word, unknown)
		}
		if sets[i].IsEmpty() {
			continue
		}
		if props == nil {
			props = map[string]idset.Set{}
		}
		props[name] = sets[i]
	}
	return props, nil
}

func checkPropertyName(name string) error {
	if name == "" {
		return errors.New("empty property name")
	}
	if i := strings.IndexAny(name, invalidPropertyChars); i >= 0 {
		return fmt.Errorf("invalid character '%c' in property %q", name[i], name)
	}
	return nil
}

func parseTime(exec map[string]json.RawMessage, key string) (float64, error) {
	raw, ok := exec[key]
	if !ok {
		return 0, nil
	}
	where := "execution." + key
	if k := kindOf(raw); k != "integer" && k != "real" {
		return 0, fmt.Errorf("%s: expected number, got %s", where, k)
	}
	var t float64
	if err := json.Unmarshal(raw, &t); err != nil {
		return 0, fmt.Errorf("%s: number %s out of range", where, raw)
	}
	if err := checkTime(t, where); err != nil {
		return 0, err
	}
	return t + 0, nil // -0 reads as 0, so it is written as 0
}

func checkTime(t float64, where string) error {
	if t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
		return fmt.Errorf("%s: %v is not a time since the epoch", where, t)
	}
	return nil
}

// checkTimes applies RFC 20: if both are set, expiration MUST be greater
// than starttime.
func checkTimes(start, expiration float64) error {
	if start > 0 && expiration > 0 && expiration <= start {
		return fmt.Errorf("execution: expiration %v must be greater than starttime %v", expiration, start)
	}
	return nil
}

func parseNSlots(exec map[string]json.RawMessage) (int, error) {
	raw, ok := exec["nslots"]
	if !ok {
		return 0, nil
	}
	if k := kindOf(raw); k != "integer" {
		return 0, fmt.Errorf("execution.nslots: expected integer, got %s", k)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("execution.nslots: invalid value %s", raw)
	}
	return int(n), nil
}

// kindOf names a JSON value's type as jansson's error messages do.
func kindOf(raw []byte) string {
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	if i == len(raw) {
		return "nothing"
	}
	switch raw[i] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	if strings.ContainsAny(string(raw[i:]), ".eE") {
		return "real"
	}
	return "integer"
}

func object(raw json.RawMessage, where string) (map[string]json.RawMessage, error) {
	if k := kindOf(raw); k != "object" {
		return nil, fmt.Errorf("%s: expected object, got %s", where, k)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, wrapf(err, where)
	}
	return m, nil
}

func array(raw json.RawMessage, where string) ([]json.RawMessage, error) {
	if k := kindOf(raw); k != "array" {
		return nil, fmt.Errorf("%s: expected array, got %s", where, k)
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, wrapf(err, where)
	}
	return a, nil
}

func str(raw json.RawMessage, where string) (string, error) {
	if k := kindOf(raw); k != "string" {
		return "", fmt.Errorf("%s: expected string, got %s", where, k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", wrapf(err, where)
	}
	return s, nil
}

func wrapf(err error, where string) error {
	return fmt.Errorf("%s: %v", where, err)
}

// keyPath names a child key in an error, quoting names that are not plain.
func keyPath(prefix, name string) string {
	if name == "" {
		return prefix + `[""]`
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return prefix + "[" + strconv.Quote(name) + "]"
		}
	}
	return prefix + "." + name
}

// quoteFlux quotes s in single quotes as flux-core's messages do, falling
// back to Go quoting when s would not read as one plain line.
func quoteFlux(s string) string {
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c == '\'' || c == '\\' || c == utf8.RuneError || !unicode.IsPrint(c) {
			return strconv.Quote(s)
		}
	}
	return "'" + s + "'"
}
