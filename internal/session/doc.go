// Package session resolves the authoritative lineage of a request: which
// principal-owned session and which A-leg (branch) it continues, which
// compaction epoch it is in, and whether it is a new conversation, a
// continuation, a fork, a reset, the first turn after a compaction, or an
// out-of-band summarisation request.
//
// Lineage is derived from the conversation itself: a rolling digest at every
// message boundary of the normalised history (system and developer prompts
// and volatile fields excluded). After an upstream answered, Commit records
// one small record for the request's full-history digest and moves the
// A-leg's head; the next turn, whose history extends that head, continues
// the A-leg. Client hints (Codex thread id, Claude Code session id, OpenCode
// session id, prompt cache keys) only help inside the caller's own principal
// namespace and are never used as store keys in clear.
//
// Every key written to the store is an HMAC under the resolver's secret;
// records hold ids, digests and counts, never message text.
package session
