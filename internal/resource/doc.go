// Package resource implements the RFC 16 resource scheduling methods over
// RFC 20 resource sets: Load (FromConfig, Discover), Find, Allocate,
// Release, Allocated and Available, plus the placement a scheduler needs
// (Feasible, FitsTargets, Usable, Match) with flux-core's first-fit,
// worst-fit and best-fit policies, each one walk of the same chain of
// feasibility filters and one ranker (chain.go).
//
// It is a domain package: no I/O, except that Discover reads the files it is
// given through an fs.FS, so tests can hand it a fake /sys and /proc.
//
// Behaviour follows flux-core's librlist (rlist_from_config, rlist_alloc)
// where the RFCs are silent:
//   - A [[resource.config]] host listed in several entries accumulates what
//     each entry gives it, as flux-config-resource(5) says; giving the same
//     core or GPU twice is an error, as rnode_add's EEXIST is.
//   - The unit of allocation is the core and the GPU (RFC 16 "size" units);
//     other R children are carried in the inventory but never allocated.
//   - A slot is cores and GPUs on one node. Without a node count, slots are
//     packed: nodes are ordered once by the policy and each takes as many
//     slots as fit before the next is tried (rlist_alloc_first_fit). With a
//     node count N, exactly N nodes each take nslots/N slots; unlike
//     flux-core, which always picks those nodes by worst fit, the policy
//     orders them here too, so first-fit really does prefer low ranks.
//   - Exclusive means whole nodes (every core and GPU), idle ones only, and
//     needs a node count (flux-core: "exclusive allocation only supported
//     with nnodes").
//   - Feasibility ignores allocations and down ranks: a request denied as
//     infeasible could never run on the configured inventory, while one
//     that only waits for drained nodes is merely pending.
//
// Node reservations (the node-reservation specification, see SetSessions)
// partition the instance into sessions: the default one and one per
// reservation. Match places a request only on the union of the sessions it
// targets (Request.Targets, nil for the default session alone) and never on
// a node outside the instance (a spare node). Feasible still looks at the
// whole inventory, outside nodes included, since sessions change and spare
// nodes join; FitsTargets says whether the targeted sessions alone could
// ever hold the request, so a scheduler can tell a user why a job waits.
// When nothing is reserved or outside, an untargeted request pays nothing
// for the filter.
//
// Match scales with what it places, not with the pool: a request needing
// more cores or GPUs than are free on up nodes in the instance is refused
// at once (FreeCores), and the common request (no node count, exclusivity
// or constraint) is placed from an index of nodes by free cores, walked in
// the policy's order, with the answer the full filter and sort would give.
package resource
