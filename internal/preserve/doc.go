// Package preserve is the only code that changes a request or a response for
// continuity: it harvests structured plan state, hands decision-bearing deltas
// to the background extractor, joins it at a bounded barrier when a
// compaction needs the result, adds the capsule block to the compaction
// request, merges exactly one current block into the summary that goes back
// to the client, and reinjects the block on post-compaction turns whose
// history lacks it.
//
// It reuses the detection path's classification (compaction.Ruleset via the
// exchange) and never re-implements a signature. Every step fails open: an
// error or a panic leaves the request or response as the client sent or the
// provider returned it, and is counted.
package preserve
