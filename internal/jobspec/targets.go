package jobspec

import "slices"

// TargetsKey is the attributes.system key naming the sessions a job may be
// mapped onto: fluxq's form of the node-reservation specification's
// PMIX_SPAWN_TARGET.
const TargetsKey = "targets"

// DefaultSession is the target naming the default session, every node of
// the instance that no reservation holds: the specification's "invalid
// namespace" entry of PMIX_SPAWN_TARGET. Allocation ids are never
// "default", so the name cannot clash with a reservation.
const DefaultSession = "default"

// Targets returns attributes.system.targets, the sessions the job may be
// mapped onto, in the order given: allocation ids ("r1") and DefaultSession.
// Without the key it returns nil, which means the default session only, the
// specification's unchanged pre-reservation behaviour.
//
// The key is not checked by Validate, since RFC 14 leaves extra system keys
// to the instance; whoever acts on targets calls Targets and refuses the
// job with its error.
func (js *Jobspec) Targets() ([]string, error) {
	if js == nil {
		return nil, nil
	}
	v, ok := js.Attributes.System.Extra[TargetsKey]
	if !ok {
		return nil, nil
	}
	var list []any
	switch x := v.(type) {
	case []any:
		list = x
	case []string:
		// A jobspec built in Go rather than parsed may hold a []string.
		list = make([]any, len(x))
		for i, s := range x {
			list[i] = s
		}
	}
	if len(list) == 0 {
		return nil, errorf("", "attributes.system.targets must be a non-empty array of allocation ids")
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok || !isID(s) {
			return nil, errorf("", "attributes.system.targets[%d] must be a non-empty string of printable characters without spaces", i)
		}
		// A repeated target would be harmless for placement, but it is
		// almost certainly a typo for another id, so say so.
		if slices.Contains(out, s) {
			return nil, errorf("", "attributes.system.targets names %q twice", s)
		}
		out = append(out, s)
	}
	return out, nil
}

// isID reports whether s is non-empty printable ASCII without spaces: a
// target is shown to users in one-line reasons ("target r3 has 2 nodes,
// needs 3"), which a newline or a control character would break.
func isID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
