// Package constraint implements RFC 31 job constraints: a JSON tree of
// operators ("properties", "hostlist", "ranks", "and", "or", "not") that
// says which execution targets a job may use, and the RFC 35 constraint
// query syntax that flux's --requires option compiles into that tree.
//
// Behaviour follows flux-core where the RFCs are silent: validation and
// matching as in src/common/librlist/match.c, and query parsing exactly as
// flux's ConstraintParser (PLY grammar, precedence and term combining) with
// the operator map of flux submit --requires.
package constraint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
)

// MaxDepth is the deepest nesting of constraint objects accepted, so that
// no input can make the recursive walks here exhaust memory or stack;
// flux itself sets no limit, and real constraints nest a few levels.
const MaxDepth = 64

// Operator names of RFC 31.
const (
	opProperties = "properties"
	opHostlist   = "hostlist"
	opRanks      = "ranks"
	opAnd        = "and"
	opOr         = "or"
	opNot        = "not"
)

// Constraint is a validated RFC 31 constraint tree. It is immutable; the
// zero value is the empty object {}, which matches every target.
type Constraint struct {
	root *node // nil for {}
}

// Node is the part of an execution target a constraint can see.
type Node struct {
	Rank       uint
	Hostname   string
	Properties []string
}

// node is one constraint object. Only one operator per object: flux-core
// rejects objects with more than one key.
type node struct {
	op     string   // "" for the empty object {}
	values []string // operands of properties, hostlist, ranks, as written
	kids   []*node  // operands of and, or, not
	hosts  []hostlist.Hostlist
	ranks  []idset.Set
	depth  int // 1 for a node without children
}

func (n *node) isLeaf() bool {
	return n.op != opAnd && n.op != opOr && n.op != opNot
}

// IsEmpty reports whether c is the empty constraint {}.
func (c Constraint) IsEmpty() bool { return c.root == nil || c.root.op == "" }

// Equal reports whether c and o are the same tree, operands compared as
// written (so "host[0-1]" and "host0,host1" differ).
func (c Constraint) Equal(o Constraint) bool {
	if c.IsEmpty() || o.IsEmpty() {
		return c.IsEmpty() == o.IsEmpty()
	}
	return equalNode(c.root, o.root)
}

func equalNode(a, b *node) bool {
	if a.op != b.op || !slices.Equal(a.values, b.values) || len(a.kids) != len(b.kids) {
		return false
	}
	for i := range a.kids {
		if !equalNode(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

// Match reports whether target n satisfies c, as flux's rnode match does;
// as there, a target's hostname also counts as one of its properties.
func (c Constraint) Match(n Node) bool {
	if c.root == nil {
		return true
	}
	return c.root.match(&n)
}

func (n *node) match(t *Node) bool {
	switch n.op {
	case opProperties:
		for _, p := range n.values {
			if !hasProperty(t, p) {
				return false
			}
		}
		return true
	case opHostlist:
		for _, h := range n.hosts {
			if h.Contains(t.Hostname) {
				return true
			}
		}
		return false
	case opRanks:
		for _, s := range n.ranks {
			if s.Contains(t.Rank) {
				return true
			}
		}
		return false
	case opAnd:
		return allMatch(n.kids, t)
	case opOr:
		// RFC 31: {"or": []} matches anything.
		if len(n.kids) == 0 {
			return true
		}
		for _, k := range n.kids {
			if k.match(t) {
				return true
			}
		}
		return false
	case opNot:
		// flux negates the "and" of the operands, so {"not": []} matches
		// nothing, as RFC 31 requires.
		return !allMatch(n.kids, t)
	}
	return true // the empty object
}

func allMatch(kids []*node, t *Node) bool {
	for _, k := range kids {
		if !k.match(t) {
			return false
		}
	}
	return true
}

// hasProperty follows flux: a target's hostname counts as one of its
// properties, and a leading '^' negates.
func hasProperty(t *Node, p string) bool {
	negate := false
	if strings.HasPrefix(p, "^") {
		p, negate = p[1:], true
	}
	has := t.Hostname == p || slices.Contains(t.Properties, p)
	return has != negate
}

// Properties returns the property names c mentions, without a leading '^',
// sorted and without duplicates. A name no target has makes a constraint
// unsatisfiable only where it is required, not negated or one choice of an
// "or"; Match over all targets is the real test.
func (c Constraint) Properties() []string {
	var out []string
	var walk func(n *node)
	walk = func(n *node) {
		if n.op == opProperties {
			for _, p := range n.values {
				out = append(out, strings.TrimPrefix(p, "^"))
			}
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	if c.root != nil {
		walk(c.root)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// invalidPropertyChars are the characters RFC 20 forbids in property
// names; flux allows '^' because it is the negation shorthand.
const invalidPropertyChars = "!&'\"`|()"

func checkProperty(v string) error {
	if i := strings.IndexAny(v, invalidPropertyChars); i >= 0 {
		return fmt.Errorf("invalid character '%c' in property \"%s\"", v[i], printable(v))
	}
	return nil
}

// checkLeaf validates the operands of a leaf and parses hostlists and
// idsets once, so Match does not; messages are flux's.
func checkLeaf(n *node) error {
	switch n.op {
	case opProperties:
		for _, v := range n.values {
			if err := checkProperty(v); err != nil {
				return err
			}
		}
	case opHostlist:
		n.hosts = make([]hostlist.Hostlist, 0, len(n.values))
		for _, v := range n.values {
			h, err := hostlist.Parse(v)
			if err != nil {
				return fmt.Errorf("invalid hostlist '%s' in %s", printable(v), dumpStrings(n.values))
			}
			n.hosts = append(n.hosts, h)
		}
	case opRanks:
		n.ranks = make([]idset.Set, 0, len(n.values))
		for _, v := range n.values {
			s, err := idset.Parse(v)
			if err != nil {
				return fmt.Errorf("invalid idset '%s' in %s", printable(v), dumpStrings(n.values))
			}
			n.ranks = append(n.ranks, s)
		}
	}
	return nil
}

// dumpStrings renders an array of strings the way flux's error messages
// show it (jansson's default, non-compact encoding).
func dumpStrings(vs []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteJSON(v))
	}
	b.WriteByte(']')
	return b.String()
}

// printable escapes what would break an error message's single line, such
// as newlines and invisible spaces, and leaves the rest as typed.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
