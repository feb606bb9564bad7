// Package rset implements R version 1, the resource set format of RFC 20
// (flux-framework/rfc spec_20.rst): which broker ranks, and which cores,
// GPUs and other child resources on each, a job or an instance holds.
//
// An *R is immutable: every operation returns a new value. It is kept as
// one record per rank, sorted by rank, so set algebra is a merge walk, while
// the idsets inside stay as ranges and never expand. Parse accepts what
// flux-core's rlist_from_json accepts, checked more strictly where RFC 20
// says MUST; MarshalJSON writes the canonical form flux-core's rlist_to_R
// writes (ranks with identical children merged into one R_lite entry, the
// nodelist compressed into one hostlist), with every object's keys sorted so
// that the output is byte-for-byte stable.
//
// Decisions where RFC 20 is silent, following flux-core's librlist:
//   - R_lite children keys other than "core" and "gpu" are accepted and
//     carried (Node.Extra), and take part in set algebra, as rnode.c does;
//     each must be an idset string.
//   - R_lite entry keys other than "rank", "children" and "memory" (such
//     as "slots") and unknown execution keys are ignored, as
//     rlist_from_json ignores them; "nslots" is kept, as flux-core keeps it.
//   - "memory" is fluxq's extension (Flux's R has no memory): integer
//     bytes on each rank of the entry (Node.Memory), 0 to MaxMemory, written
//     only when not 0, so an R without memory is byte-for-byte what it was;
//     Flux's R v1 readers skip it as an unknown entry key. Ranks merge into
//     one entry only when children and memory are both equal. Memory is a
//     quantity, not ids: a rank in several entries sums it, Union sums it,
//     Difference subtracts it (down to 0), Intersection takes the lesser,
//     so r U r holds r's memory twice. Memory rides on a rank's children:
//     a rank with memory but no children holds nothing a job could run on
//     (every slot needs a core), so Parse refuses it, and New and the set
//     operations drop it, whatever memory it had. String leaves memory
//     out, as rlist_dumps does not know it.
//   - "nodelist" is optional (older R has none); when present it must name
//     exactly one host per rank, assigned in rank order.
//   - "starttime" and "expiration" of 0 mean unset and are always written,
//     as flux-core writes them.
//   - "scheduling" is opaque: kept compacted, never interpreted.
//   - A rank that appears in several R_lite entries is merged; the same
//     child id listed twice for one rank is an error (rnode_add's EEXIST).
//   - A rank holding no children (memory alone included) is refused by
//     Parse and dropped by New and the set operations, since flux-core
//     never encodes one.
//   - Parse refuses more than MaxRanks ranks, counted without expanding,
//     and more than MaxRanges child idset ranges summed over all ranks.
//   - Union fails when one rank has two different hostnames; Intersection
//     leaves such a rank out, as flux-core's rlist_intersect does; Difference
//     ignores hostnames. Properties follow their ranks, times come from the
//     receiver, nslots is dropped from derived sets.
package rset
