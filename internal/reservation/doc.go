// Package reservation holds the rules of node reservation and session
// targeting (the PMIx node-reservation and session-targeting
// specification, read as docs/reservations.md decides) as pure functions
// over a State:
// which session an allocation joins, new versus extend, owner sets and
// their growth by spawn, derived children, the four inheritance
// dispositions, the unconditional triggers, the targeting checks and the
// PMIx status of every rejection.
//
// The package does no I/O and reads no clock: callers pass the time, say
// which nodes are idle and which jobs are alive, persist what changed
// (State.Dirty) and act on the returned Change (spare nodes that joined or
// departed, reservations that ended).
//
// Every request validates completely before it changes anything, so a
// rejection leaves the State exactly as it was (conformance item 3).
package reservation
