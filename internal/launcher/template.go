package launcher

import (
	"errors"
	"fmt"
	"strings"
)

// Template is the command launcher's template ([exec] command): the argv
// that runs a command on a host, with {host}, {address} and {command} in
// it, e.g. `srun --nodes=1 --ntasks=1 --overlap -w {host} {command}`.
//
// Words are split at blanks, as a shell splits them, with '...' and
// "..." quoting and \ escaping one character outside single quotes; no
// shell runs it. {command} is the agent's command line (`fluxsched agent
// --attach ...`): as a word of its own it is that many words (srun's,
// pdsh's, kubectl's argv); inside a longer word it is one shell-quoted
// string (`sh -c 'cd / && {command}'`). {{ and }} are a brace.
type Template struct {
	words [][]part
	src   string
}

// part is a literal, or a placeholder (name set).
type part struct {
	lit  string
	name string
}

// Placeholders of a template.
const (
	phHost    = "host"
	phAddress = "address"
	phCommand = "command"
)

// ParseTemplate reads a command template; the error says what is wrong
// in the template's own words.
func ParseTemplate(s string) (Template, error) {
	t := Template{src: s}
	var (
		word    []part
		lit     strings.Builder
		inWord  bool
		quote   byte // the open quote, or 0
		command int
	)
	flushLit := func() {
		if lit.Len() > 0 {
			word = append(word, part{lit: lit.String()})
			lit.Reset()
		}
	}
	endWord := func() {
		flushLit()
		if inWord {
			t.words = append(t.words, word)
		}
		word, inWord = nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'' && c != '\'':
			lit.WriteByte(c)
			continue
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			endWord()
			continue
		}
		inWord = true
		switch c {
		case '\'', '"':
			switch quote {
			case 0:
				quote = c
			case c:
				quote = 0
			default:
				lit.WriteByte(c) // the other quote, inside one
			}
		case '\\':
			if i+1 == len(s) {
				return Template{}, errors.New("the template ends with a lone \\")
			}
			i++
			lit.WriteByte(s[i])
		case '}':
			if i+1 < len(s) && s[i+1] == '}' {
				i++
			}
			lit.WriteByte('}')
		case '{':
			if i+1 < len(s) && s[i+1] == '{' {
				i++
				lit.WriteByte('{')
				continue
			}
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return Template{}, fmt.Errorf("the template has a { without its }: %q", s[i:])
			}
			name := s[i+1 : i+end]
			switch name {
			case phHost, phAddress:
			case phCommand:
				command++
			default:
				return Template{}, fmt.Errorf("the template names %q: want {host}, {address} or {command}", "{"+name+"}")
			}
			flushLit()
			word = append(word, part{name: name})
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	if quote != 0 {
		return Template{}, fmt.Errorf("the template's %c quote is not closed", quote)
	}
	endWord()
	switch {
	case len(t.words) == 0:
		return Template{}, errors.New("the template is empty")
	case command == 0:
		return Template{}, errors.New("the template has no {command}: where does the agent's command go?")
	case command > 1:
		return Template{}, fmt.Errorf("the template names {command} %d times: want once", command)
	case len(t.words[0]) == 1 && t.words[0][0].name == phCommand:
		return Template{}, errors.New("the template begins with {command}: name the program that reaches the host first")
	}
	return t, nil
}

// String is the template as written.
func (t Template) String() string { return t.src }

// Expand is the argv that runs command on host.
func (t Template) Expand(host, address string, command []string) []string {
	var argv []string
	for _, w := range t.words {
		if len(w) == 1 && w[0].name == phCommand {
			argv = append(argv, command...)
			continue
		}
		var b strings.Builder
		for _, p := range w {
			switch p.name {
			case "":
				b.WriteString(p.lit)
			case phHost:
				b.WriteString(host)
			case phAddress:
				b.WriteString(address)
			case phCommand:
				b.WriteString(ShellQuote(command))
			}
		}
		argv = append(argv, b.String())
	}
	return argv
}

// ShellQuote joins words into one line a POSIX shell splits back into
// them: what ssh hands the remote user's shell.
func ShellQuote(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
