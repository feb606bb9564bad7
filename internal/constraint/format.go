package constraint

import (
	"strings"
)

// Queries for constant results: no target both has and lacks "x" (flux
// counts the hostname as a property, which changes nothing here).
const (
	falseQuery = "x,^x"
	trueQuery  = "-x,^x"
)

// String returns c in the query syntax of ParseQuery. For every tree
// ParseQuery builds, ParseQuery(c.String()) rebuilds exactly c. Trees only
// JSON can write (empty operand lists, one-element "or", several hostlists
// in one object, ...) come back as an equivalent query rather than the same
// tree; the empty constraint is "", which ParseQuery rejects as flux does.
// Only JSON can name a property containing ',' or a hostlist or idset
// holding both quote characters and no ':'; those have no faithful form.
func (c Constraint) String() string {
	if c.IsEmpty() {
		return ""
	}
	return format(c.root)
}

// format writes n as a complete expression.
func format(n *node) string {
	if t, ok := term(n); ok {
		return t
	}
	switch n.op {
	case opHostlist, opRanks:
		if len(n.values) == 0 {
			return falseQuery
		}
		parts := make([]string, len(n.values))
		for i, v := range n.values {
			if v == "" {
				parts[i] = falseQuery // an empty list holds nothing
			} else {
				parts[i] = opTerm(shortOp(n.op), v)
			}
		}
		return strings.Join(parts, "|")
	case opNot:
		switch len(n.kids) {
		case 0:
			return falseQuery
		case 1:
			if t, ok := term(n.kids[0]); ok {
				return "-" + t
			}
			return "not (" + format(n.kids[0]) + ")"
		}
		return "not (" + formatAnd(n.kids) + ")"
	case opOr:
		switch len(n.kids) {
		case 0:
			return trueQuery
		case 1:
			return format(n.kids[0])
		}
		parts := make([]string, len(n.kids))
		for i, k := range n.kids {
			if _, ok := term(k); ok || k.op == opNot {
				// OR binds loosest among the operators, so "-a|b" and
				// "not (a)|b" need no parentheses.
				parts[i] = format(k)
			} else {
				parts[i] = "(" + format(k) + ")"
			}
		}
		return strings.Join(parts, "|")
	case opAnd:
		switch len(n.kids) {
		case 0:
			return trueQuery
		case 1:
			return format(n.kids[0])
		}
		return formatAnd(n.kids)
	}
	return trueQuery // {} nested, or properties: []
}

// formatAnd writes operands joined by juxtaposition. A '-' or "not" binds
// to its right when it follows two operands ("a b -c" is "a (b -c)") or a
// "not (...)" ("not (a) -b" is "not (a -b)"), so only the first operand,
// or the second after a plain one, may be a bare negation. Compound
// operands are always parenthesized, so a left-hand "and" is never
// extended by accident.
func formatAnd(kids []*node) string {
	parts := make([]string, len(kids))
	for i, k := range kids {
		if t, ok := term(k); ok {
			parts[i] = t
		} else if k.op == opNot && (i == 0 || (i == 1 && !strings.HasPrefix(parts[0], "not "))) {
			parts[i] = format(k)
		} else {
			parts[i] = "(" + format(k) + ")"
		}
	}
	return strings.Join(parts, " ")
}

func shortOp(op string) string {
	switch op {
	case opHostlist:
		return "host"
	case opRanks:
		return "rank"
	}
	return op
}

// term writes a leaf as one lexer term, if it can be one.
func term(n *node) (string, bool) {
	switch n.op {
	case opProperties:
		if len(n.values) == 0 {
			return "", false
		}
		s := strings.Join(n.values, ",")
		if s == "" {
			s = "," // [""] means the same as ["", ""]
		}
		if bareProperties(s) {
			return s, true
		}
		return opTerm(opProperties, s), true
	case opHostlist, opRanks:
		if len(n.values) != 1 || n.values[0] == "" {
			return "", false
		}
		return opTerm(shortOp(n.op), n.values[0]), true
	}
	return "", false
}

// bareProperties reports whether s reads back as one term of the default
// operator: no ':' (it would name an operator), no leading '-' or keyword.
func bareProperties(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") || strings.Contains(s, ":") || !allTermRunes(s) {
		return false
	}
	l := &lexer{src: []rune(s)}
	return !l.keyword("not") && !l.keyword("and") && !l.keyword("or")
}

func allTermRunes(s string) bool {
	for _, r := range s {
		if !isTermRune(r) {
			return false
		}
	}
	return true
}

// opTerm writes "op:v" as one term, quoting v when needed. A value ending
// in ':' must be quoted, or the lexer would hold the term back for the
// next one.
func opTerm(op, v string) string {
	if allTermRunes(v) && !strings.HasSuffix(v, ":") {
		return op + ":" + v
	}
	if q, ok := quote(v); ok {
		return op + ":" + q
	}
	// Both quote characters: the lexer glues a quoted "op:A:" to the
	// quoted term after it, so split the value after one of its colons.
	for i := 0; i < len(v)-1; i++ {
		if v[i] != ':' {
			continue
		}
		qa, ok1 := quote(op + ":" + v[:i+1])
		qb, ok2 := quote(v[i+1:])
		if ok1 && ok2 {
			return qa + qb
		}
	}
	return op + ":'" + v + "'" // no query form; only JSON can say this
}

func quote(s string) (string, bool) {
	switch {
	case !strings.Contains(s, "'"):
		return "'" + s + "'", true
	case !strings.Contains(s, `"`):
		return `"` + s + `"`, true
	}
	return "", false
}
