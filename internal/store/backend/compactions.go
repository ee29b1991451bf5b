package backend

import (
	"context"
	"fmt"
	"time"
)

// CompactionEvent is one compaction Tether handled on an A-leg: when, which
// rule recognised it, and what the capsule block it added held. It carries
// ids, rule metadata and counts only, never text: the capsule revision it
// names is where the content is.
type CompactionEvent struct {
	Seq         int64 // assigned by AppendCompaction; orders events of one A-leg
	Principal   string
	Session     string
	ALeg        string
	RequestID   string
	At          time.Time
	Agent       string
	RuleID      string
	RuleVersion int
	Kind        string // in_band | out_of_band | opaque (compaction.Kind)
	// Action is what preservation did: augmented (the block went into the
	// summarisation request), empty (nothing to add yet) or reinjected (the
	// block went back into the first turn after a compaction that lost it).
	Action      string
	Revision    int64 // the capsule revision injected; 0 when none
	Tokens      int   // estimated tokens of the injected block
	Decisions   int   // active decisions in it
	Constraints int   // active constraints
	Rejected    int   // rejected alternatives
	Questions   int   // open questions
	Steps       int   // plan steps
}

// CompactionLimit is the number of most recent compaction events kept per
// A-leg; older ones are pruned when a new one is recorded.
const CompactionLimit = 64

// Compactions is the durable compaction timeline of each A-leg. Events go
// with their A-leg: PurgeCapsules removes them with its capsule, and
// DeleteExpired removes events older than the capsule TTL.
type Compactions interface {
	// AppendCompaction records ev (a zero At is set to the current time)
	// and returns its Seq; of an A-leg's events the newest CompactionLimit
	// are retained.
	AppendCompaction(ctx context.Context, ev CompactionEvent) (int64, error)
	// Compactions returns an A-leg's retained events, newest first; limit
	// <= 0 returns all of them.
	Compactions(ctx context.Context, principal, aLeg string, limit int) ([]CompactionEvent, error)
}

// TableCompactions is the compaction timeline's table.
const TableCompactions = "compactions"

// CheckCompaction validates the arguments of AppendCompaction.
func CheckCompaction(ev CompactionEvent) error {
	if ev.Principal == "" || ev.ALeg == "" {
		return fmt.Errorf("append compaction: empty principal or a-leg: %w", ErrInvalid)
	}
	return nil
}
