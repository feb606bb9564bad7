package jobmgr

import (
	"encoding/json"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Exception is one exception event a turn posted, as the instance's log
// reports it once the turn is committed.
type Exception struct {
	ID       fluid.ID
	Type     string
	Severity int
	Note     string
}

// exceptionOf reads an exception event's context (RFC 21: type, severity,
// note), whoever raised it: the job manager's own numbers are ints, those
// an exec service sent are JSON numbers.
func exceptionOf(id fluid.ID, ctx map[string]any) Exception {
	x := Exception{ID: id}
	x.Type, _ = ctx["type"].(string)
	x.Note, _ = ctx["note"].(string)
	switch v := ctx["severity"].(type) {
	case int:
		x.Severity = v
	case float64:
		x.Severity = int(v)
	case json.Number:
		n, _ := v.Int64()
		x.Severity = int(n)
	}
	return x
}
