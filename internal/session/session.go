package session

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/store/backend"
)

// Store is the durable lineage storage the resolver needs. Records are small
// opaque values in the principal's namespace.
type Store interface {
	// PutLineage upserts one record.
	PutLineage(ctx context.Context, principal, key string, value []byte, expires time.Time) error
	// GetLineage returns the records of the keys that exist, in one round
	// trip; missing keys are absent from the map.
	GetLineage(ctx context.Context, principal string, keys []string) (map[string][]byte, error)
}

// Hints is what the caller learned about the request from the compaction
// classifier.
type Hints struct {
	Compaction     bool   // the request asks for a compaction summary
	OutOfBand      bool   // a separate summarisation request (Pi, OpenCode)
	Opaque         bool   // provider-native, encrypted compaction
	PostCompaction bool   // the history carries an agent's post-compaction marker
	Agent          string // agent name, informational
}

// Event says how a request relates to known lineage.
type Event string

// The events Resolve reports.
const (
	EventNew          Event = "new"          // new session and A-leg
	EventContinue     Event = "continue"     // extends the head of a known A-leg
	EventFork         Event = "fork"         // diverges from a known A-leg before its head
	EventReset        Event = "reset"        // unrelated history under a known session hint
	EventEpoch        Event = "epoch"        // first turn after a compaction of a known A-leg
	EventOutOfBand    Event = "out_of_band"  // separate summarisation request attributed to an A-leg
	EventUnattributed Event = "unattributed" // out-of-band request that could not be attributed
)

// Ref is the resolved lineage of one request.
type Ref struct {
	Principal, Session, ALeg string

	Epoch   int   // compactions crossed on this A-leg
	Turn    int   // number of messages in this request's history
	Ordinal int64 // Ordinal(Epoch, Turn): comparable position across epochs
	Event   Event

	ParentALeg  string // set on fork
	ForkOrdinal int64  // set on fork: the parent's position where the branches part

	Hint string // principal-scoped digest of the client hint used, "" if none

	// Client is the client's own session id, as "family:id" (codex,
	// claude, opencode, or cache for a prompt_cache_key), "" if none; it
	// is shown to the principal (Describe), never used as a key.
	Client string
	// Agent is the coding agent, from the compaction rule that matched or
	// the client hint's family, "" if unknown.
	Agent string
	// PrevTurn is set on an EventReset ref: the messages of the last
	// request of the branch the client hint named (counts only; a caller
	// may judge a much shorter history a silent compaction and resolve
	// again with Hints.PostCompaction).
	PrevTurn int

	// Side is set on an EventOutOfBand ref for a request that was not
	// marked out of band but quotes the branch's conversation (an
	// unrecognised summarisation request): callers leave it alone and
	// record its answer with RecordSummary.
	Side bool

	// Set by Resolve for Commit.
	base       int                   // normalised messages known to the A-leg before this request
	compaction bool                  // compaction requests never move a head
	window     int                   // Codex window number, 0 if none
	hist       []entry               // the normalised history Resolve digested, for Commit
	fingers    map[string]fingerRead // fingerprint records Resolve read, for Commit
	capsule    prefetched            // a capsule Resolve read with the lineage
	heads      [2]string             // head-record keys of hist and of hist less its last entry, when Resolve made them
}

// prefetched is a capsule record Resolve read in its lineage round trip.
type prefetched struct {
	aLeg  string
	rec   backend.CapsuleRecord
	found bool // the store held a capsule
	read  bool // Resolve read it
}

// Capsule returns the capsule of the Ref's A-leg as Resolve read it with
// the lineage (a store that can, backend.CapsulePrefetcher, on a turn
// likely to need it): found reports whether the store held one, ok
// whether Resolve read it at all. The caller may take it instead of
// reading the capsule again, once: it is as old as the lineage read.
func (r Ref) Capsule() (rec backend.CapsuleRecord, found, ok bool) {
	if !r.capsule.read || r.capsule.aLeg != r.ALeg || r.ALeg == "" {
		return backend.CapsuleRecord{}, false, false
	}
	return r.capsule.rec, r.capsule.found, true
}

// Ordinal positions turn within epoch on an A-leg's timeline.
func Ordinal(epoch, turn int) int64 {
	turn = min(max(turn, 0), maxTurn)
	return int64(epoch)<<20 | int64(turn)
}

const maxTurn = 1<<20 - 1

// Sentinel errors.
var (
	// ErrNoPrincipal is returned when a call names no principal.
	ErrNoPrincipal = errors.New("session: no principal")
	// ErrNoView is returned when Resolve or Commit gets a nil view.
	ErrNoView = errors.New("session: no request view")
)

// Options configures a Resolver. The zero value is usable: records last 7
// days, the cache holds 10000 records, and a random secret is drawn (set
// Secret so that restarts and replicas resolve alike).
type Options struct {
	TTL       time.Duration    // record lifetime; default 7 days
	CacheSize int              // in-memory records; default 10000
	Now       func() time.Time // clock; default time.Now
	Secret    []byte           // HMAC key for ids, tokens and digests
	// Exclusive says this process is the store's only writer (SQLite,
	// memory): lineage records it has cached are then what the store
	// holds, and a turn whose every record is cached reads nothing.
	// Never set it for a store that replicas share.
	Exclusive bool
	// Coalesce, when positive, is how long the records of a continuation
	// committed behind (CommitBehind) may wait before they are queued for
	// the store, with a store that takes writes without their caller
	// waiting (backend.LineageEnqueuer): a newer continuation of the same
	// A-leg arriving meanwhile takes their place, so an A-leg whose turns
	// come faster than that writes its newest head once per period instead
	// of a head per turn. The head records of the turns passed over are not
	// written (a restart finds the newest written head and continues from
	// it, as after a kill: TestLostContinuationHeals); every other record
	// is. Any other write of the A-leg first queues what waits, and Flush
	// queues everything. Zero: every continuation is queued at once.
	Coalesce time.Duration
}

func (o Options) withDefaults() Options {
	o.TTL = cmp.Or(o.TTL, 7*24*time.Hour)
	o.CacheSize = cmp.Or(o.CacheSize, 10000)
	if o.Now == nil {
		o.Now = time.Now
	}
	if len(o.Secret) == 0 {
		o.Secret = make([]byte, 32)
		_, _ = rand.Read(o.Secret)
	}
	return o
}

// Resolver is the lineage authority. It is safe for concurrent use.
type Resolver struct {
	st     Store
	opt    Options
	cache  *lru
	locks  *keyedMutex
	heads  stripes     // serialises head moves per A-leg inside this process
	behind writeChains // orders per A-leg the writes CommitBehind leaves running
	macs   sync.Pool   // HMAC hashes under the secret
	tokens tokenMemo   // A-leg tokens made (alegKey, EpochToken)
	hints  tokenMemo   // client-hint keys made (hintKey)
	waits  waiting     // continuations waiting to be queued (Options.Coalesce)
	seal   sealKey     // the AEAD of client descriptions
	known  *known      // keys an exclusive store may hold (IndexKeys); nil: ask the store
}

// Exclusive reports whether this process is the store's only writer
// (Options.Exclusive): what it holds in memory is then what the store
// holds, or is about to.
func (r *Resolver) Exclusive() bool { return r.opt.Exclusive }

// NewResolver returns a Resolver over st.
func NewResolver(st Store, opt Options) *Resolver {
	opt = opt.withDefaults()
	return &Resolver{st: st, opt: opt, cache: newLRU(opt.CacheSize, opt.TTL, opt.Now), locks: newKeyedMutex()}
}

// IndexKeys lists the store's lineage keys once, so that a key neither
// listed nor written since is known to be absent without asking the store
// (a normal turn's new prefixes): then a turn that extends a known head
// reads nothing. It applies only when this process is the store's only
// writer (Options.Exclusive) and the store can list its keys; call it
// once, at start, before serving. An error leaves every key to be asked
// for, as without it.
func (r *Resolver) IndexKeys(ctx context.Context) error {
	kl, ok := r.st.(keyLister)
	if !r.opt.Exclusive || !ok {
		return nil
	}
	k := newKnown(knownMax)
	if err := k.load(ctx, kl); err != nil {
		return wrap("index keys", err)
	}
	r.known = k
	return nil
}

// Lock serialises state updates of one A-leg. Different A-legs never wait
// on each other. The returned function releases the lock; call it once.
func (r *Resolver) Lock(ref Ref) (unlock func()) {
	return r.locks.lock(ref.Principal + "\x00" + ref.ALeg)
}

func checkArgs(principal string, v *dialect.View) error {
	if principal == "" {
		return ErrNoPrincipal
	}
	if v == nil {
		return ErrNoView
	}
	return nil
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("session %s: %w", op, err)
}
