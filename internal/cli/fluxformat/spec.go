package fluxformat

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format formats v by the spec as Python's format() does, with two
// leniencies: a whole number and a fraction are both numbers to every
// numeric type (the JSON behind a field does not keep Python's int and
// float apart), and no value prints empty under any type.
func (sp Spec) Format(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return sp.text("")
	case string:
		return sp.text(x)
	case IntText:
		if stringType(sp.Type) {
			return sp.text(x.Text)
		}
		return sp.Format(x.N)
	case bool:
		if stringType(sp.Type) {
			return sp.text(Text(x))
		}
		if x {
			return sp.integer(1)
		}
		return sp.integer(0)
	case int64:
		return sp.integer(x)
	case int:
		return sp.integer(int64(x))
	case uint64:
		if x > math.MaxInt64 {
			return sp.float(float64(x))
		}
		return sp.integer(int64(x))
	}
	if f, ok := number(v); ok {
		return sp.float(f)
	}
	return sp.text(Text(v))
}

// text formats a string: cut to the precision (ending in "+" when cut,
// with Flux's + suffix), padded to the width, left aligned by default.
func (sp Spec) text(s string) (string, error) {
	if !stringType(sp.Type) && s != "" && s != "-" {
		return "", fmt.Errorf("format spec type %q is for numbers, and %q is text", string(sp.Type), clip(s))
	}
	if sp.Sign != 0 {
		return "", fmt.Errorf("a sign (%c) is for numbers, and %q is text", sp.Sign, clip(s))
	}
	if sp.Precision >= 0 && utf8.RuneCountInString(s) > sp.Precision {
		r := []rune(s)[:sp.Precision]
		if sp.Mark && len(r) > 0 {
			r[len(r)-1] = '+'
		}
		s = string(r)
	}
	return pad(s, sp, '<'), nil
}

// integer formats a whole number.
func (sp Spec) integer(n int64) (string, error) {
	var digits, prefix string
	switch sp.Type {
	case 0, 'd', 'n':
		if sp.Precision >= 0 && sp.Type == 0 {
			return sp.float(float64(n)) // Python refuses; a float reads it
		}
		digits = strconv.FormatUint(abs(n), 10)
	case 'b', 'o', 'x', 'X':
		base := map[byte]int{'b': 2, 'o': 8, 'x': 16, 'X': 16}[sp.Type]
		digits = strconv.FormatUint(abs(n), base)
		if sp.Type == 'X' {
			digits = strings.ToUpper(digits)
		}
		if sp.Alt {
			prefix = "0" + string(sp.Type)
		}
	case 'c':
		if n < 0 || n > utf8.MaxRune {
			return "", fmt.Errorf("%d is not a character", n)
		}
		return pad(string(rune(n)), sp, '<'), nil
	case 's':
		return sp.text(strconv.FormatInt(n, 10))
	default:
		return sp.float(float64(n))
	}
	digits = group(digits, sp.Grouping, sp.Type)
	return sp.number(n < 0, prefix, digits), nil
}

// float formats a number with a fraction.
func (sp Spec) float(f float64) (string, error) {
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
	var s string
	switch {
	case math.IsInf(a, 1) || math.IsNaN(a):
		s = "inf"
		if math.IsNaN(a) {
			s = "nan"
		}
		if sp.Type == 'E' || sp.Type == 'F' || sp.Type == 'G' {
			s = strings.ToUpper(s)
		}
		if sp.Type == '%' {
			s += "%"
		}
		return sp.number(neg, "", s), nil
	}
	prec := sp.Precision
	switch sp.Type {
	case 0:
		if prec < 0 {
			s = pyRepr(a)
		} else {
			s = pyNoType(a, max(prec, 1))
		}
	case 'f', 'F':
		s = strconv.FormatFloat(a, 'f', orDefault(prec), 64)
	case 'e', 'E':
		s = strconv.FormatFloat(a, 'e', orDefault(prec), 64)
	case 'g', 'G', 'n':
		p := orDefault(prec)
		s = pyG(a, max(p, 1))
		if sp.Alt && !strings.Contains(s, ".") {
			s += "."
		}
	case '%':
		s = strconv.FormatFloat(a*100, 'f', orDefault(prec), 64) + "%"
	case 'd', 'b', 'o', 'x', 'X', 'c':
		whole := math.Trunc(f)
		if whole < math.MinInt64 || whole > math.MaxInt64 {
			return sp.number(neg, "", strconv.FormatFloat(math.Abs(whole), 'f', 0, 64)), nil
		}
		return sp.integer(int64(whole))
	case 's':
		return sp.text(pyRepr(f))
	}
	if sp.Type == 'E' || sp.Type == 'G' || sp.Type == 'F' {
		s = strings.ToUpper(s)
	}
	if sp.Grouping != 0 {
		intPart, frac := s, ""
		if i := strings.IndexAny(s, ".e%"); i >= 0 {
			intPart, frac = s[:i], s[i:]
		}
		s = group(intPart, sp.Grouping, 'd') + frac
	}
	return sp.number(neg, "", s), nil
}

func orDefault(prec int) int {
	if prec < 0 {
		return 6
	}
	return prec
}

// pyG is Python's "g" at precision p: Go's 'g' is the same rule (an
// exponent below -4 or at p and beyond), trailing zeros dropped.
func pyG(f float64, p int) string {
	return strconv.FormatFloat(f, 'g', p, 64)
}

// pyNoType is Python's float format with a precision p and no type: as
// "g", but an exponent from p-1 on, and ".0" on a whole fixed number.
func pyNoType(f float64, p int) string {
	e := strconv.FormatFloat(f, 'e', p-1, 64)
	i := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= p-1 {
		mant := e[:i]
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		return mant + e[i:]
	}
	s := strconv.FormatFloat(f, 'g', p, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func abs(n int64) uint64 {
	if n < 0 {
		return uint64(-(n + 1)) + 1
	}
	return uint64(n)
}

// group puts sep between groups of digits: threes in decimal, fours in
// binary, octal and hex (Python's "_").
func group(digits string, sep byte, typ byte) string {
	if sep == 0 {
		return digits
	}
	n := 3
	if typ == 'b' || typ == 'o' || typ == 'x' || typ == 'X' {
		n = 4
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%n == 0 {
			b.WriteByte(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// number adds the sign and prefix to digits and pads: right aligned by
// default, and with '=' (or a 0 before the width) the padding goes
// between the sign and the digits.
func (sp Spec) number(neg bool, prefix, digits string) string {
	sign := ""
	switch {
	case neg:
		sign = "-"
	case sp.Sign == '+':
		sign = "+"
	case sp.Sign == ' ':
		sign = " "
	}
	align, fill := sp.Align, sp.Fill
	if sp.Zero && align == 0 {
		align = '='
		if fill == 0 {
			fill = '0'
		}
	}
	if align == '=' {
		head := sign + prefix
		n := sp.Width - utf8.RuneCountInString(head) - utf8.RuneCountInString(digits)
		if n <= 0 {
			return head + digits
		}
		if fill == 0 {
			fill = ' '
		}
		return head + strings.Repeat(string(fill), n) + digits
	}
	return pad(sign+prefix+digits, Spec{Fill: fill, Align: align, Width: sp.Width}, '>')
}

// pad pads s to the spec's width with its fill, aligned as the spec says
// or by def.
func pad(s string, sp Spec, def byte) string {
	n := sp.Width - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	fill := " "
	if sp.Fill != 0 {
		fill = string(sp.Fill)
	} else if sp.Zero {
		fill = "0"
	}
	align := sp.Align
	if align == 0 || align == '=' {
		align = def
	}
	switch align {
	case '>':
		return strings.Repeat(fill, n) + s
	case '^':
		return strings.Repeat(fill, n/2) + s + strings.Repeat(fill, n-n/2)
	}
	return s + strings.Repeat(fill, n)
}
