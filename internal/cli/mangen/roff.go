package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// roff accumulates a man page in the man(7) macro language. Every piece of
// text goes through escape, so that what a command's help says can never be
// read as a request or an escape by groff.
type roff struct {
	b strings.Builder
}

// String is the page so far.
func (r *roff) String() string { return r.b.String() }

// macro writes one request line. Its arguments are roff already (text in
// them must have gone through escape); those with spaces are quoted.
func (r *roff) macro(name string, args ...string) {
	r.b.WriteString("." + name)
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"") {
			a = `"` + strings.ReplaceAll(a, `"`, `\(dq`) + `"`
		}
		r.b.WriteString(" " + a)
	}
	r.b.WriteByte('\n')
}

// raw writes an already formatted line (text with font escapes built from
// escaped pieces), guarding a leading control character.
func (r *roff) raw(line string) {
	if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
		line = `\&` + line
	}
	if line == "" {
		line = `\&` // a blank input line is a blank output line; say so
	}
	r.b.WriteString(line + "\n")
}

// text writes plain text, one input line per line of s.
func (r *roff) text(s string) {
	for _, line := range strings.Split(s, "\n") {
		r.raw(escape(line))
	}
}

// literal writes lines as they are, unfilled and indented: usage blocks,
// examples, lists that were laid out by hand. Lines starting with "$ " are
// commands to type, set in bold.
func (r *roff) literal(lines []string) {
	lines = dedent(lines)
	r.macro("RS", "4")
	r.macro("nf")
	for _, l := range lines {
		if strings.HasPrefix(l, "$ ") {
			r.raw(bold(l))
			continue
		}
		r.raw(escape(l))
	}
	r.macro("fi")
	r.macro("RE")
}

// prose renders a Description: blank lines separate paragraphs, indented
// lines are kept as laid out, "- " lines are bullets, and a line such as
// "NOTES:" is a bold run-in heading. Everything else is filled text.
func (r *roff) prose(s string) {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	needPara := false
	inBullet := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(expandTabs(lines[i]), " ")
		switch {
		case l == "":
			needPara = true
		case laidOut(l):
			j := i
			var block []string
			for ; j < len(lines); j++ {
				lj := strings.TrimRight(expandTabs(lines[j]), " ")
				if lj != "" && !laidOut(lj) {
					break
				}
				block = append(block, lj)
			}
			// Trailing blank lines belong to the paragraph break, not the block.
			for len(block) > 0 && block[len(block)-1] == "" {
				block = block[:len(block)-1]
				j--
			}
			if inBullet {
				r.macro("IP", "", "2")
			} else if needPara {
				r.macro("PP")
			}
			r.literal(block)
			needPara, inBullet = false, false
			i = j - 1
		case strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* "):
			r.macro("IP", `\(bu`, "2")
			r.text(strings.TrimSpace(l[2:]))
			needPara, inBullet = false, true
		case isHeading(l):
			r.macro("PP")
			r.raw(bold(l))
			r.macro("br")
			needPara, inBullet = false, false
		default:
			if needPara {
				r.macro("PP")
				inBullet = false
			}
			r.text(l)
			needPara = false
		}
	}
}

// laidOut reports a line whose spacing matters: indented, in columns (a
// run of spaces inside it), or a command line or comment of an example.
func laidOut(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(l, " ") || strings.Contains(t, "  ") ||
		strings.HasPrefix(t, "$ ") || strings.HasPrefix(t, "# ")
}

// isHeading reports a line like "EXAMPLES:" or "SEE ALSO:", the way help
// texts title their parts.
func isHeading(l string) bool {
	if !strings.HasSuffix(l, ":") || len(l) < 3 {
		return false
	}
	for _, c := range l[:len(l)-1] {
		if !(c >= 'A' && c <= 'Z' || c == ' ' || c == '-') {
			return false
		}
	}
	return true
}

// bold is s escaped and set in bold.
func bold(s string) string { return `\fB` + escape(s) + `\fR` }

// italic is s escaped and set in italics.
func italic(s string) string { return `\fI` + escape(s) + `\fR` }

// escape makes s safe as roff text: backslashes print as themselves,
// "-" is the ASCII minus a user types in an option (not a hyphen), and any
// non-ASCII character is named by its code point, so that groff needs no
// input-encoding guess (preconv) to print ƒ, ✔ or an em dash.
func escape(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\\':
			b.WriteString(`\e`)
		case c == '-':
			b.WriteString(`\-`)
		case c == '\t':
			b.WriteString("    ")
		case c == utf8.RuneError:
			b.WriteString("?")
		case c < ' ' || c == 0x7f:
			// Control characters have no place on a page.
		case c > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// escapeNonASCII names every non-ASCII character of an already rendered
// page by its code point (the md2man output for section 5).
func escapeNonASCII(page string) string {
	var b strings.Builder
	for _, c := range page {
		if c > 0x7e {
			fmt.Fprintf(&b, `\[u%04X]`, c)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// asciiFallback is what a character prints as where the output device lacks
// it (man in the C locale formats for -Tascii); the rest print as "?".
var asciiFallback = map[rune]string{
	'\u0192': "f", // ƒ, the F58 job ID prefix
	'\u2714': "y", // ✔ and ✗: enabled/started or not
	'\u2717': "n",
	'\u2014': "--", '\u2013': "-", '\u2026': "...", '\u2192': "->", '\u2190': "<-",
	'\u00D7': "x", '\u2018': "'", '\u2019': "'", '\u201C': `\(dq`, '\u201D': `\(dq`,
	'\u03C4': "tau", '\u2264': "<=", '\u2265': ">=", '\u2260': "!=", '\u2022': "*",
	'\u00B7': ".", '\u00A0': `\ `, '\u00B0': "deg",
}

// codePoint finds the characters escape and escapeNonASCII named.
var codePoint = regexp.MustCompile(`\\\[u([0-9A-F]{4,6})\]`)

// fallbacks defines, for each non-ASCII character page uses, what it prints
// as on a device without it; a device that has it is left alone (.if !c).
func fallbacks(page string) string {
	seen := map[string]bool{}
	var b strings.Builder
	for _, m := range codePoint.FindAllStringSubmatch(page, -1) {
		if seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		n, err := strconv.ParseUint(m[1], 16, 32)
		if err != nil {
			continue
		}
		fb, ok := asciiFallback[rune(n)]
		if !ok {
			fb = "?"
		}
		fmt.Fprintf(&b, ".if !c \\[u%s] .char \\[u%s] %s\n", m[1], m[1], fb)
	}
	return b.String()
}

// dedent removes the indentation every non-blank line shares.
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		l = expandTabs(l)
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		l = strings.TrimRight(expandTabs(l), " ")
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[i] = l
	}
	return out
}

// expandTabs replaces tabs with spaces to the next multiple of 8.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, c := range s {
		if c == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(c)
		col++
	}
	return b.String()
}
