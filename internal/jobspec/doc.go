// Package jobspec implements jobspec version 1: the RFC 25 restriction of
// the RFC 14 canonical job specification, as flux-core accepts it.
//
// A V1 jobspec asks for one program: exactly one top-level resource, either
// node>slot>(core[,gpu]) or slot>(core[,gpu]) with fixed integer counts, and
// exactly one task whose count is per_slot (which RFC 25 pins to 1) or total.
// attributes.system.duration is required.
//
// Parse reads JSON or YAML and validates; MarshalJSON writes the canonical
// form (compact, object keys sorted, numbers as flux-core's Python tools
// write them), so Parse(Marshal(j)) is j and marshals to the same bytes.
// FromOptions builds the jobspec `flux submit` would build from its -n, -c,
// -g, -N and -x options.
//
// Where the RFCs are silent, flux-core is the reference: the V1 checker in
// src/common/libjob/jobspec1.c, the Python JobspecV1 class and flux submit,
// whose messages are reused here. As in flux-core, a gpu count may be 0 and
// the task's slot name is not matched against the slot's label. Beyond
// flux-core, and as RFC 25 says, per_slot must be 1 and total must be at
// least the node count; and, so that a defect shows at submission rather
// than at exec time, cwd must be absolute and environment names must be
// non-empty without '=' or NUL.
//
// Inputs are bounded (MaxSize, MaxYAMLSize, MaxDepth, MaxNodes, MaxCount):
// no document, YAML aliases included, makes Parse use memory beyond a
// small multiple of those limits.
package jobspec
