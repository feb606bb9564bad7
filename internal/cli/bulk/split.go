// Package bulk reads fluxq bulksubmit's command line as flux-bulksubmit(1)
// reads its own: the command template and its input lists (":::",
// ":::+", "::::", "::::+"), the combinations they make, and the
// replacement fields ({}, {0}, {1.%}, {seq}, {.NAME}) that put an input
// into the command and the options. It reads no file itself: the command
// hands it what the lists hold, so every rule here is pure and fuzzed.
package bulk

import (
	"fmt"
	"strconv"
	"strings"
)

// The delimiters, as GNU parallel spells them.
const (
	DelimArgs       = ":::"   // the arguments after it are a list
	DelimArgsLinked = ":::+"  // ... linked to the list before it
	DelimFile       = "::::"  // the lines of a file are a list
	DelimFileLinked = "::::+" // ... linked to the list before it
)

// MaxJobs bounds the combinations of one submission: each is a whole
// jobspec, built and sent in one request (as submit's --cc bound).
const MaxJobs = 1_000_000

// Source is one input list as the command line gives it.
type Source struct {
	Delim  string   // as typed: ":::", ":::+", "::::" or "::::+"
	Args   []string // the inputs of ::: and :::+
	File   string   // the file of :::: and ::::+ ("-" is stdin)
	Linked bool     // :::+ and ::::+: paired with the lists before it, not combined
}

// IsFile reports whether the list is read from a file.
func (s Source) IsFile() bool { return s.File != "" }

// Split cuts argv at the first delimiter: the command template before it,
// and each list after. A list with nothing in it, or a :::: with other
// than one file, is refused in words rather than read as Flux does (an
// empty list there is dropped, and with none left the inputs come from
// stdin, which a script would not expect).
func Split(argv []string) (command []string, sources []Source, err error) {
	i := 0
	for i < len(argv) && !isDelim(argv[i]) {
		i++
	}
	command = argv[:i]
	for i < len(argv) {
		d := argv[i]
		if err := checkDelim(d); err != nil {
			return nil, nil, err
		}
		j := i + 1
		for j < len(argv) && !isDelim(argv[j]) {
			j++
		}
		items := argv[i+1 : j]
		s := Source{Delim: d, Linked: strings.HasSuffix(d, "+")}
		pos := len(sources) + 1
		switch {
		case d == DelimFile || d == DelimFileLinked:
			if len(items) != 1 {
				return nil, nil, fmt.Errorf("%s (input list %d) takes one FILE, not %d arguments", d, pos, len(items))
			}
			if items[0] == "" {
				return nil, nil, fmt.Errorf("%s (input list %d): the file name is empty", d, pos)
			}
			s.File = items[0]
		case len(items) == 0:
			return nil, nil, fmt.Errorf("%s (input list %d) has no inputs", d, pos)
		default:
			s.Args = items
		}
		if s.Linked && len(sources) == 0 {
			return nil, nil, fmt.Errorf("%s links its inputs to the list before it, and there is none (use %s)", d, strings.TrimSuffix(d, "+"))
		}
		sources = append(sources, s)
		i = j
	}
	return command, sources, nil
}

// isDelim reports whether an argument ends a list: as Flux reads the
// command line, any argument that starts with ":::".
func isDelim(s string) bool { return strings.HasPrefix(s, DelimArgs) }

func checkDelim(d string) error {
	switch d {
	case DelimArgs, DelimArgsLinked, DelimFile, DelimFileLinked:
		return nil
	}
	return fmt.Errorf("unknown input delimiter %q (want %s, %s, %s or %s)", d, DelimArgs, DelimArgsLinked, DelimFile, DelimFileLinked)
}

// Inputs splits the text of a file (or stdin) into inputs at sep, as
// flux bulksubmit --sep: "" splits at any run of white space; empty
// inputs are dropped.
func Inputs(text, sep string) []string {
	var parts []string
	if sep == "" {
		parts = strings.Fields(text)
	} else {
		parts = strings.Split(text, sep)
	}
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ParseSep reads --sep: "none" is white space (Inputs' ""), and the
// escapes \n, \t, \r, \0 and \\ stand for their characters, as Flux
// decodes the option.
func ParseSep(s string) (string, error) {
	if strings.EqualFold(s, "none") {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("%q ends in a lone backslash", s)
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("%q: unknown escape \\%c (\\n, \\t, \\r, \\0, \\\\)", s, s[i])
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("the separator is empty (none splits at white space)")
	}
	return b.String(), nil
}

// Combine makes the inputs of each job from the lists, in Flux's order:
// the product of the lists that are not linked, the last varying
// fastest (itertools.product), and each linked list's inputs paired
// with those combinations in turn, cycled when it is the shorter, at its
// own place among the inputs. linked[i] says whether lists[i] is linked;
// the first list never is (Split refuses it).
func Combine(lists [][]string, linked []bool) ([][]string, error) {
	if len(lists) != len(linked) {
		return nil, fmt.Errorf("bulk: %d lists and %d links", len(lists), len(linked))
	}
	total := 1
	for i, l := range lists {
		if len(l) == 0 {
			return nil, fmt.Errorf("input list %d is empty", i+1)
		}
		if linked[i] {
			continue
		}
		if total > MaxJobs/len(l) {
			return nil, fmt.Errorf("the input lists make more than %s jobs", strconv.Itoa(MaxJobs))
		}
		total *= len(l)
	}
	if total > MaxJobs {
		return nil, fmt.Errorf("the input lists make more than %s jobs", strconv.Itoa(MaxJobs))
	}
	out := make([][]string, total)
	flat := make([]string, total*len(lists))
	for k := range out {
		out[k] = flat[k*len(lists) : (k+1)*len(lists) : (k+1)*len(lists)]
	}
	// The product: combination k's index into list i is k divided by the
	// sizes of the unlinked lists after i, modulo list i's size.
	stride := 1
	for i := len(lists) - 1; i >= 0; i-- {
		if linked[i] {
			continue
		}
		n := len(lists[i])
		for k := range out {
			out[k][i] = lists[i][(k/stride)%n]
		}
		stride *= n
	}
	for i, l := range lists {
		if !linked[i] {
			continue
		}
		for k := range out {
			out[k][i] = l[k%len(l)]
		}
	}
	return out, nil
}
