package help

import (
	"strings"

	"github.com/fluxq/fluxq/internal/suggest"
)

// Distance is suggest.Distance: the Damerau–Levenshtein distance.
func Distance(a, b string) int { return suggest.Distance(a, b) }

// Suggest returns the names in candidates closest to typed (suggest.Names).
func Suggest(typed string, candidates []string) []string { return suggest.Names(typed, candidates) }

// DidYouMean phrases suggestions as one sentence, each passed through
// quote: "Did you mean 'submit'?", "Did you mean 'start' or 'stop'?". It
// is "" when there are none.
func DidYouMean(suggestions []string, quote func(string) string) string {
	if len(suggestions) == 0 {
		return ""
	}
	q := make([]string, len(suggestions))
	for i, s := range suggestions {
		q[i] = quote(s)
	}
	list := q[0]
	if n := len(q); n > 1 {
		list = strings.Join(q[:n-1], ", ") + " or " + q[n-1]
	}
	return didYouMean + list + "?"
}
