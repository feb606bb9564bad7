package jobspec

import (
	"encoding/json"
	"strconv"
)

// RetryKey is the attributes.system key fluxq reads as how many times a
// job that ends FAILED is run again (fluxq submit --retry N; HTCondor's
// max_retries). RFC 14 leaves extra system keys to the instance.
const RetryKey = "retry"

// MaxRetry bounds RetryKey: past it, a failing job is a loop, not a
// retry (Slurm caps a job's requeues too).
const MaxRetry = 100

// Retries returns attributes.system.retry: 0 when absent, an error when
// it is not a whole number from 0 to MaxRetry. Validate does not check
// the key (an extra system key); the submission refuses a bad one.
func (js *Jobspec) Retries() (int, error) {
	if js == nil {
		return 0, nil
	}
	v, ok := js.Attributes.System.Extra[RetryKey]
	if !ok {
		return 0, nil
	}
	var n int64
	var err error
	switch x := v.(type) {
	case json.Number:
		n, err = strconv.ParseInt(string(x), 10, 64)
	case float64:
		n = int64(x)
		if float64(n) != x {
			err = strconv.ErrSyntax
		}
	case int:
		n = int64(x)
	default:
		err = strconv.ErrSyntax
	}
	if err != nil || n < 0 || n > MaxRetry {
		return 0, errorf("", "attributes.system.retry must be a whole number from 0 to %d", MaxRetry)
	}
	return int(n), nil
}
