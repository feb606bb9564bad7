package constraint

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseQuery compiles an RFC 35 constraint query, as given to flux submit
// --requires, into the same tree flux's parser produces, then validates it
// as ParseJSON does. Terms without an operator are properties ("a,b" is two
// of them), host: and hosts: mean hostlist:, rank: means ranks:. Syntax
// errors carry flux's wording and a position counted in characters.
func ParseQuery(q string) (Constraint, error) {
	n, err := requiresDialect.parse(q)
	if err != nil {
		return Constraint{}, err
	}
	if n.depth > MaxDepth {
		return Constraint{}, fmt.Errorf("constraint nesting exceeds %d levels", MaxDepth)
	}
	if err := validate(n); err != nil {
		return Constraint{}, err
	}
	return Constraint{root: n}, nil
}

// validate checks a parsed tree in document order, as flux checks the JSON
// the parser hands it.
func validate(n *node) error {
	switch n.op {
	case opProperties, opHostlist, opRanks:
		return checkLeaf(n)
	case opAnd, opOr, opNot:
		for _, k := range n.kids {
			if err := validate(k); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown constraint operator: %s", printable(n.op))
}

// dialect is the configuration of flux's ConstraintParser class; flux
// submit uses requiresDialect, and tests use others to replay flux's own
// parser tests.
type dialect struct {
	defaultOp string            // operator of a term without ':'; "" requires one
	opMap     map[string]string // shorthand operator names
	split     map[string]string // operators whose operand splits into values
	combine   map[string]bool   // operators whose values merge under "and"
}

// requiresDialect is flux's MiniConstraintParser.
var requiresDialect = &dialect{
	defaultOp: opProperties,
	opMap:     map[string]string{"host": opHostlist, "hosts": opHostlist, "rank": opRanks},
	split:     map[string]string{opProperties: ","},
	combine:   map[string]bool{opProperties: true},
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tNot
	tAnd
	tOr
	tNeg
	tLParen
	tRParen
	tTerm
)

type token struct {
	kind tokKind
	val  string
	pos  int // in characters, as Python counts
}

// lexer reproduces flux's PLY lexer, including its quirks: a term ending
// in ':' is held back and glued to the next term, even across whitespace
// or parentheses, which is how op:'quoted value' works.
type lexer struct {
	src      []rune
	pos      int
	parens   int // depth after the tokens read so far
	lastL    int // position of the last '(' read
	lastR    int // position of the last ')' read
	pending  *token
	quoteErr error // input ended inside a quote; reported at EOF
}

// isIgnored is PLY's t_ignore set; other Unicode space is illegal.
func isIgnored(r rune) bool {
	switch r {
	case ' ', '\t', '\r', '\n', '\f', '\v':
		return true
	}
	return false
}

// isPySpace is Python's \s for str patterns: Go's unicode.IsSpace plus the
// ASCII information separators.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// isWord is Python's \w for str patterns.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isTermRune is the class [^()|&\s"'] of flux's TOKEN rule.
func isTermRune(r rune) bool {
	switch r {
	case '(', ')', '|', '&', '"', '\'':
		return false
	}
	return !isPySpace(r)
}

// keyword reports whether w starts at the current position and ends at a
// word boundary, as the regex `w\b` does.
func (l *lexer) keyword(w string) bool {
	end := l.pos + len(w) // keywords are ASCII
	if end > len(l.src) || string(l.src[l.pos:end]) != w {
		return false
	}
	return end == len(l.src) || !isWord(l.src[end])
}

func (l *lexer) next() (token, error) {
	for {
		for l.pos < len(l.src) && isIgnored(l.src[l.pos]) {
			l.pos++
		}
		if l.pos >= len(l.src) {
			if l.quoteErr != nil {
				return token{}, l.quoteErr
			}
			if l.pending != nil {
				return token{}, fmt.Errorf("missing argument to token '%s'", printable(l.pending.val))
			}
			return token{kind: tEOF, pos: l.pos}, nil
		}
		start := l.pos
		r := l.src[start]
		// The order of the cases is the order of flux's token rules.
		switch {
		case r == '-':
			l.pos++
			return token{tNeg, "-", start}, nil
		case r == 'n' && l.keyword("not"):
			l.pos += 3
			return token{tNot, "not", start}, nil
		case r == '&':
			return l.repeat(tAnd, '&', start), nil
		case r == 'a' && l.keyword("and"):
			l.pos += 3
			return token{tAnd, "and", start}, nil
		case r == '|':
			return l.repeat(tOr, '|', start), nil
		case r == 'o' && l.keyword("or"):
			l.pos += 2
			return token{tOr, "or", start}, nil
		case r == '(':
			l.pos++
			l.parens++
			l.lastL = start
			return token{tLParen, "(", start}, nil
		case r == ')':
			l.pos++
			l.parens--
			l.lastR = start
			return token{tRParen, ")", start}, nil
		case isTermRune(r):
			for l.pos < len(l.src) && isTermRune(l.src[l.pos]) {
				l.pos++
			}
			if t, ok := l.term(string(l.src[start:l.pos]), start); ok {
				return t, nil
			}
		case r == '\'' || r == '"':
			from := start + 1
			end := from
			for end < len(l.src) && l.src[end] != r {
				end++
			}
			l.pos = end + 1
			if end == len(l.src) {
				l.pos = end
				other := '"'
				if r == '"' {
					other = '\''
				}
				l.quoteErr = fmt.Errorf("unclosed quote %c%c%c at position %d", other, r, other, from)
			}
			if end > from {
				if t, ok := l.term(string(l.src[from:end]), from); ok {
					return t, nil
				}
			}
		default:
			return token{}, fmt.Errorf("illegal character '%s' at position %d", printable(string(r)), start)
		}
	}
}

// repeat reads one or two of an operator character: "&&&" is "&&", "&".
func (l *lexer) repeat(kind tokKind, c rune, start int) token {
	l.pos++
	if l.pos < len(l.src) && l.src[l.pos] == c {
		l.pos++
	}
	return token{kind, string(l.src[start:l.pos]), start}
}

// term applies flux's rule for a term: glue it to a held-back "op:",
// or hold it back if it ends in ':'.
func (l *lexer) term(val string, pos int) (token, bool) {
	if l.pending != nil {
		val = l.pending.val + val
		l.pending = nil
		return token{tTerm, val, pos}, true
	}
	if strings.HasSuffix(val, ":") {
		l.pending = &token{tTerm, val, pos}
		return token{}, false
	}
	return token{tTerm, val, pos}, true
}

type symKind uint8

const (
	sExpr symKind = iota
	sAnd
	sOr
	sNot
	sNeg
	sLParen
	sRParen
	sTerm
)

var symOf = [...]symKind{
	tNot: sNot, tAnd: sAnd, tOr: sOr, tNeg: sNeg,
	tLParen: sLParen, tRParen: sRParen, tTerm: sTerm,
}

type sym struct {
	kind symKind
	n    *node
	tok  token
}

// Precedence levels of flux's grammar; a token without one is level 0.
func tokenLevel(k tokKind) int {
	switch k {
	case tOr:
		return 1
	case tAnd:
		return 2
	case tNot:
		return 3
	case tNeg:
		return 4
	}
	return 0
}

func startsExpr(k tokKind) bool {
	return k == tTerm || k == tLParen || k == tNot || k == tNeg
}

// parse is a shift-reduce parser that takes the same decisions as the
// LALR table PLY builds for flux's grammar
//
//	expr : expr expr %prec AND | expr AND expr | expr OR expr
//	     | NOT expr | NEGATE token | '(' expr ')' | token
//
// with precedence OR < AND < NOT (right) < NEGATE (right). A shift/reduce
// conflict goes to the shift only when the lookahead binds tighter than
// the rule (or as tight, for a right-associative rule); tokens without a
// precedence (terms, '(') bind loosest. So juxtaposition is left
// associative, "a|b c" is "(a|b) c", and a following '-' or "not" binds to
// its right: "a b -c" is "a (b -c)". Those shapes show in the JSON, as in
// flux. Parsing keeps an explicit stack, so nesting cannot overflow.
func (d *dialect) parse(q string) (*node, error) {
	for i, r := range q {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(q[i:]); size == 1 {
				return nil, fmt.Errorf("invalid UTF-8 at byte %d", i)
			}
		}
	}
	l := &lexer{src: []rune(q)}
	syntaxErr := func(la token) error {
		if la.kind == tEOF {
			if l.parens > 0 {
				return fmt.Errorf("unclosed parenthesis in position %d", l.lastL)
			}
			return fmt.Errorf("unexpected end of input in '%s'", printable(q))
		}
		if l.parens < 0 {
			return fmt.Errorf("mismatched parentheses starting at position %d", l.lastR)
		}
		return fmt.Errorf("invalid token '%s' at position %d", printable(la.val), la.pos)
	}
	var st []sym
	la, err := l.next()
	if err != nil {
		return nil, err
	}
	for {
		top := len(st) - 1
		shift := false
		switch {
		case top < 0:
			if !startsExpr(la.kind) {
				return nil, syntaxErr(la)
			}
			shift = true
		case st[top].kind == sTerm:
			n, err := d.term(st[top].tok.val)
			if err != nil {
				return nil, err
			}
			if top > 0 && st[top-1].kind == sNeg {
				st = st[:top]
				st[top-1] = sym{kind: sExpr, n: notNode(n)}
			} else {
				st[top] = sym{kind: sExpr, n: n}
			}
		case st[top].kind == sRParen:
			// Only shifted onto '(' expr.
			e := st[top-1]
			st = st[:top-1]
			st[top-2] = e
		case st[top].kind == sNeg:
			if la.kind != tTerm {
				return nil, syntaxErr(la)
			}
			shift = true
		case st[top].kind != sExpr:
			// After an operator or '(' an expression must start.
			if !startsExpr(la.kind) {
				return nil, syntaxErr(la)
			}
			shift = true
		case top == 0:
			switch la.kind {
			case tEOF:
				return st[0].n, nil
			case tRParen:
				return nil, syntaxErr(la)
			}
			shift = true
		case st[top-1].kind == sLParen:
			if la.kind == tEOF {
				return nil, syntaxErr(la)
			}
			shift = true
		default:
			// expr on expr, AND, OR or NOT: a rule can be reduced.
			below := st[top-1].kind
			level, right := 2, false // expr expr %prec AND, expr AND expr
			switch below {
			case sOr:
				level = 1
			case sNot:
				level, right = 3, true
			}
			if la.kind != tEOF && la.kind != tRParen {
				tl := tokenLevel(la.kind)
				shift = tl > level || (tl == level && right)
			}
			if !shift {
				b := st[top].n
				switch below {
				case sExpr:
					st = st[:top]
					st[top-1].n = d.and(st[top-1].n, b)
				case sAnd:
					st = st[:top-1]
					st[top-2].n = d.and(st[top-2].n, b)
				case sOr:
					st = st[:top-1]
					st[top-2].n = orNode(st[top-2].n, b)
				case sNot:
					st = st[:top]
					st[top-1] = sym{kind: sExpr, n: notNode(b)}
				}
			}
		}
		if shift {
			st = append(st, sym{kind: symOf[la.kind], tok: la})
			if la, err = l.next(); err != nil {
				return nil, err
			}
		}
	}
}

// term turns "[op:]operand" into a leaf, as flux's parser does; the
// operator is checked here, the operand later by validate.
func (d *dialect) term(s string) (*node, error) {
	op, val, found := strings.Cut(s, ":")
	if !found {
		if d.defaultOp == "" {
			return nil, fmt.Errorf("missing required operator in \"%s\"", printable(s))
		}
		op, val = d.defaultOp, s
	} else if m, ok := d.opMap[op]; ok {
		op = m
	}
	for _, r := range op {
		if !isWord(r) && !strings.ContainsRune(".+@-", r) {
			return nil, fmt.Errorf("invalid character '%s' in operator '%s:'", printable(string(r)), printable(op))
		}
	}
	n := &node{op: op, depth: 1}
	if sep, ok := d.split[op]; ok {
		n.values = strings.Split(val, sep)
	} else {
		n.values = []string{val}
	}
	return n, nil
}

// and joins two expressions as flux's combine_like_terms does: an "and"
// on the left absorbs the right operand; otherwise two terms of one
// combinable operator merge their values; otherwise a new "and".
func (d *dialect) and(a, b *node) *node {
	if a.op == opAnd {
		a.kids = append(a.kids, b)
		a.depth = max(a.depth, b.depth+1)
		return a
	}
	if a.op == b.op && d.combine[a.op] {
		a.values = append(a.values, b.values...)
		return a
	}
	return &node{op: opAnd, kids: []*node{a, b}, depth: max(a.depth, b.depth) + 1}
}

// orNode joins with "or", extending an "or" on the left.
func orNode(a, b *node) *node {
	if a.op == opOr {
		a.kids = append(a.kids, b)
		a.depth = max(a.depth, b.depth+1)
		return a
	}
	return &node{op: opOr, kids: []*node{a, b}, depth: max(a.depth, b.depth) + 1}
}

func notNode(n *node) *node {
	return &node{op: opNot, kids: []*node{n}, depth: n.depth + 1}
}
