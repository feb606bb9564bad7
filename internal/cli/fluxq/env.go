package fluxq

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// envRules collects --env, --env-remove and --env-file in the order they
// were given, since Flux applies them in command-line order: each kind is
// one flag.Value appending to the same list with its own prefix, as flux
// submit's EnvFilterAction and EnvFileAction do.
type envRules struct {
	rules *[]string
	// prefix marks the kind: "" a rule, "-" a pattern to remove, "^" a file.
	prefix string
}

func (r envRules) Set(v string) error {
	*r.rules = append(*r.rules, r.prefix+v)
	return nil
}

func (r envRules) String() string { return "" }

// jobEnvironment applies Flux's environment rules (flux submit's
// get_filtered_environment) to the submitter's environment, which the job
// gets whole by default:
//   - "-PATTERN" removes the variables whose names match PATTERN, a shell
//     glob, or a regular expression when it starts with "/";
//   - "^FILE" applies the rules in FILE, one a line;
//   - "VAR=VALUE" sets VAR, expanding $NAME and ${NAME} from the job's
//     environment so far, then the submitter's ($$ is a "$");
//   - "PATTERN" adds the submitter's variables matching PATTERN that the
//     job's environment lacks.
func jobEnvironment(environ []string, rules []string) (map[string]string, error) {
	proc := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			proc[k] = v
		}
	}
	env := make(map[string]string, len(proc))
	for k, v := range proc {
		env[k] = v
	}
	if err := applyEnvRules(env, proc, rules, 0); err != nil {
		return nil, err
	}
	return env, nil
}

// maxEnvFileDepth bounds ^FILE rules that include each other.
const maxEnvFileDepth = 10

func applyEnvRules(env, proc map[string]string, rules []string, depth int) error {
	for _, rule := range rules {
		switch {
		case strings.HasPrefix(rule, "-"):
			re, err := envPattern(rule[1:])
			if err != nil {
				return err
			}
			for k := range env {
				if re.MatchString(k) {
					delete(env, k)
				}
			}
		case strings.HasPrefix(rule, "^"):
			if depth >= maxEnvFileDepth {
				return fmt.Errorf("--env-file: %s: files nested too deep", rule[1:])
			}
			b, err := os.ReadFile(expandHome(rule[1:]))
			if err != nil {
				return fmt.Errorf("--env-file: %v", err)
			}
			var lines []string
			for _, l := range strings.Split(string(b), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					lines = append(lines, l)
				}
			}
			if err := applyEnvRules(env, proc, lines, depth+1); err != nil {
				return err
			}
		default:
			name, value, set := strings.Cut(rule, "=")
			if !set {
				re, err := envPattern(name)
				if err != nil {
					return err
				}
				for k, v := range proc {
					if _, ok := env[k]; !ok && re.MatchString(k) {
						env[k] = v
					}
				}
				continue
			}
			if name == "" {
				return fmt.Errorf("--env: no variable name in %q", rule)
			}
			v, err := substitute(value, func(k string) (string, bool) {
				if v, ok := env[k]; ok {
					return v, true
				}
				v, ok := proc[k]
				return v, ok
			})
			if err != nil {
				return fmt.Errorf("--env: %v in %s", err, rule)
			}
			env[name] = v
		}
	}
	return nil
}

// envPattern compiles a variable-name pattern: "/REGEX/" is matched at the
// start of the name (Python's re.match), anything else is a glob matched
// against the whole name (fnmatch).
func envPattern(p string) (*regexp.Regexp, error) {
	if strings.HasPrefix(p, "/") {
		src := strings.TrimRight(p[1:], "/")
		re, err := regexp.Compile("^(?:" + src + ")")
		if err != nil {
			return nil, fmt.Errorf("--env: invalid pattern %q: %v", p, err)
		}
		return re, nil
	}
	return regexp.Compile("^(?s:" + globToRegexp(p) + ")$")
}

// globToRegexp translates a shell glob as Python's fnmatch.translate does:
// * and ? match any characters, [...] a class ([!...] its complement).
func globToRegexp(g string) string {
	var b strings.Builder
	rs := []rune(g)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			class := string(rs[i+1 : j])
			class = strings.ReplaceAll(class, `\`, `\\`)
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			} else if strings.HasPrefix(class, "^") {
				class = `\` + class
			}
			b.WriteString("[" + class + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// substitute expands $NAME, ${NAME} and $$ as Python's string.Template
// does (what flux submit uses for --env=VAR=VALUE): a name is a letter or
// underscore then letters, digits or underscores; an unknown name is an
// error, and so is a "$" followed by anything else.
func substitute(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		var name string
		switch {
		case strings.HasPrefix(rest, "$"):
			b.WriteByte('$')
			i++
			continue
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 || !isIdent(rest[1:end]) {
				return "", fmt.Errorf("invalid placeholder at position %d", i)
			}
			name = rest[1:end]
			i += end + 1
		default:
			n := identLen(rest)
			if n == 0 {
				return "", fmt.Errorf("invalid placeholder at position %d", i)
			}
			name = rest[:n]
			i += n
		}
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("Variable '%s' not found", name)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func identLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		letter := c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
		if !letter && (n == 0 || c < '0' || c > '9') {
			break
		}
		n++
	}
	return n
}

func isIdent(s string) bool { return s != "" && identLen(s) == len(s) }

// expandHome expands a leading "~/" as Python's os.path.expanduser does.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
