package ledger

import (
	"time"

	"github.com/tether-dev/tether/internal/dialect"
)

// Kind separates primary inference from auxiliary continuity extraction.
type Kind string

// Ledger kinds.
const (
	KindPrimary    Kind = "primary"
	KindExtraction Kind = "continuity_extraction"
)

// Charge describes a B-leg about to open. The principal and account are the
// originating caller's, also for auxiliary calls the proxy makes on its behalf.
type Charge struct {
	Principal, Account string
	Session, ALeg      string
	ParentRequestID    string
	Kind               Kind
	Route              string // "provider/model"
	Provider, Model    string
	// Family is the provider's dialect family (config.FamilyOpenAI or
	// config.FamilyAnthropic). OpenAI counts cached tokens inside its input
	// tokens, Anthropic does not; the ledger records uncached input, so for
	// FamilyOpenAI it subtracts cache reads from the reported input. Empty
	// means the usage already reports uncached input.
	Family string
	// EstimatedTokens (input plus output) is reserved against token budgets
	// until settled. See estimateCall for primary calls; an extraction
	// call knows its own input size and output cap.
	EstimatedTokens int64
	// EstimatedOutputTokens is the part of EstimatedTokens that is output;
	// it is priced at the output rate when reserving against spend budgets.
	EstimatedOutputTokens int64
}

// Result is how the B-leg ended.
type Result struct {
	BLeg     string
	Usage    dialect.Usage
	Status   int
	Err      error
	Duration time.Duration
}
