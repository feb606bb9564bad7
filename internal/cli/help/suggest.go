package help

import "strings"

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
