// Package compaction is Tether's single authority for recognising context
// compaction on the wire.
//
// The rules live in an embedded, versioned YAML file (rules.yaml): which
// requests are compaction requests (and whether their summary is produced
// in-band, out-of-band or opaquely), which turns follow a compaction, which
// requests only ask for a title, which tool calls carry plan state (read by
// package harvest), which text in a user-role message the agent wrote on
// the user's behalf: harness tags and summary openings (read by package
// extract), and how an out-of-band summarisation request quotes the history
// it summarises (read by package session). Supporting a new agent version
// means editing that file and adding a fixture; no code changes.
//
// Classify is stateless and metadata-driven: it reads headers, the path, the
// system prompt, the last user text and the tail of the history, never the
// whole parsed history. Two more kinds of rule read beyond the request:
// rules on the provider's answer (WatchAnswer: a compaction block or item,
// applied context edits, in a body or stream events) and rules on lineage
// counts (ClassifyLineage: a history that shrank with no summarisation
// request), for the session layer, which remembers the previous count.
// ContextEdits returns the context edits a request asks the provider for.
//
// Detection is observation only: Event carries ids, rule metadata, counts and
// timings, never prompt or response text, and an Observer returns nothing.
// Mutating a request or a response for preservation is another package's job;
// it calls the same Classify at the pre-open seam.
package compaction
