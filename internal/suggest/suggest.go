// Package suggest finds the names closest to a word a person mistyped:
// the one idea behind every "Did you mean" of the commands (a command, a
// flag, a help topic, a format field) and of the config (a key).
package suggest

import (
	"slices"
	"strings"
)

// Distance is the Damerau–Levenshtein distance between a and b in its
// optimal-string-alignment form: the fewest insertions, deletions,
// substitutions and swaps of two adjacent characters that turn a into b,
// counted in runes. A swap is one edit because it is the typo people make
// most ("sumbit").
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// Three rows suffice: the swap looks two rows back.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// maxDistance is how far a typo may be from a name and still be taken for
// it: short words allow less, so that "ls" does not suggest every
// two-letter name, and one letter allows nothing.
func maxDistance(typed string) int {
	switch n := len([]rune(typed)); {
	case n <= 1:
		return 0
	case n <= 3:
		return 1
	default:
		return 2
	}
}

// Names returns the names in candidates closest to typed: those at the
// smallest Damerau–Levenshtein distance within reach (none for one letter,
// 1 for two or three, else 2), or when none is, those typed is a prefix of
// (at least two letters typed). Case is ignored, so a name in the wrong
// case is suggested first. The result keeps candidates' order, without
// duplicates; nil means no suggestion.
func Names(typed string, candidates []string) []string {
	t := strings.ToLower(typed)
	if t == "" {
		return nil
	}
	limit := maxDistance(t)
	best, bestDist := []string(nil), limit+1
	for _, c := range candidates {
		if c == typed {
			continue // the name itself: nothing to suggest instead
		}
		// "SUBMIT" is at distance 0 from "submit", the best suggestion.
		d := Distance(t, strings.ToLower(c))
		switch {
		case d > limit:
		case d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist && !slices.Contains(best, c):
			best = append(best, c)
		}
	}
	if best != nil || len([]rune(t)) < 2 {
		return best
	}
	for _, c := range candidates {
		if c != typed && strings.HasPrefix(strings.ToLower(c), t) && !slices.Contains(best, c) {
			best = append(best, c)
		}
	}
	return best
}
