// Package web serves what Tether keeps for a principal, read-only: the
// capsule API (GET /v1/capsules, /v1/capsules/{id}, /v1/capsules/{id}/history).
// A principal sees only its own conversations; the admin key sees all.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/store/backend"
)

// Store is what the API reads.
type Store interface {
	ListCapsules(ctx context.Context, principal string) ([]backend.CapsuleRecord, error)
	CapsuleHistory(ctx context.Context, principal, aLeg string, limit int) ([]backend.CapsuleRecord, error)
	Compactions(ctx context.Context, principal, aLeg string, limit int) ([]backend.CompactionEvent, error)
}

// Conversation is what lineage knows of a conversation branch (see
// session.Resolver.Describe).
type Conversation struct {
	Agent         string
	ClientSession string
	ClientKind    string
	LastActivity  time.Time
}

// Options configures the API.
type Options struct {
	Store    Store
	Authn    func(http.Header) (auth.Principal, error)
	AdminKey string
	Logger   *slog.Logger
	// Budgets, when set, reports the budgets bounding a principal (or its
	// account) in their current period, for the web view.
	Budgets func(ctx context.Context, principal, account string) ([]ledger.BudgetStatus, error)
	// Conversations, when set, describes a principal's A-legs: agent,
	// client session id, last activity.
	Conversations func(ctx context.Context, principal string, aLegs []string) (map[string]Conversation, error)
	// SessionSecret seals the web view's sign-in tokens; replicas that
	// share it accept each other's sign-ins. Empty: a random one.
	SessionSecret []byte
	// SignOuts keeps signed-out sign-in tokens where every replica reads
	// them (the store); nil keeps them in this process only.
	SignOuts SignOuts
	// Now is the clock of sign-in expiry; time.Now if nil.
	Now func() time.Time
}

// Summary is one conversation branch in GET /v1/capsules.
type Summary struct {
	ID        string    `json:"id"` // the A-leg (conversation branch) id
	Principal string    `json:"principal"`
	Session   string    `json:"session"` // Tether's session id (the lineage the branch belongs to)
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updated_at"` // when the capsule last changed
	// Agent is the coding agent (compaction rule or client hint), "" if
	// unknown.
	Agent string `json:"agent,omitempty"`
	// ClientSession is the session id the client sent (Claude Code
	// session, Codex thread, OpenCode session, or a prompt_cache_key, as
	// ClientKind says), "" if none.
	ClientSession string `json:"client_session,omitempty"`
	ClientKind    string `json:"client_kind,omitempty"`
	// LastActivity is when the branch last had a turn (to ten minutes);
	// zero if unknown.
	LastActivity *time.Time `json:"last_activity,omitempty"`
}

// Detail is GET /v1/capsules/{id}: the newest revision, as stored and as the
// model is shown it, and the branch's compaction timeline.
type Detail struct {
	Summary
	Rendered    string           `json:"rendered"`
	Capsule     *capsule.Capsule `json:"capsule"`
	Compactions []Compaction     `json:"compactions"`
}

// Revision is one entry of GET /v1/capsules/{id}/history.
type Revision struct {
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updated_at"`
	Changes   []Change  `json:"changes"`
	// Counts is the number of changes by action.
	Counts map[string]int `json:"counts"`
}

// Compaction is one entry of the compaction timeline
// (GET /v1/capsules/{id}/compactions): when, which rule, and what the
// injected block held.
type Compaction struct {
	At          time.Time `json:"at"`
	RequestID   string    `json:"request_id"`
	Agent       string    `json:"agent"`
	Rule        string    `json:"rule"`
	RuleVersion int       `json:"rule_version"`
	Kind        string    `json:"kind"`   // in_band | out_of_band | opaque
	Action      string    `json:"action"` // augmented | empty | reinjected
	Revision    int64     `json:"revision"`
	Tokens      int       `json:"tokens"`
	Decisions   int       `json:"decisions"`
	Constraints int       `json:"constraints"`
	Rejected    int       `json:"rejected"`
	Questions   int       `json:"questions"`
	Steps       int       `json:"steps"`
}

// Routes mounts the API on mux.
func Routes(opt Options) func(*http.ServeMux) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	a := &api{opt: opt}
	return func(mux *http.ServeMux) {
		mux.HandleFunc("GET /v1/capsules", a.list)
		mux.HandleFunc("GET /v1/capsules/{id}", a.show)
		mux.HandleFunc("GET /v1/capsules/{id}/history", a.history)
		mux.HandleFunc("GET /v1/capsules/{id}/compactions", a.compactions)
	}
}

type api struct {
	opt      Options
	sessions *sessions // the web view's sign-ins (UIRoutes)
}

// who returns the principal whose data the caller may see: "" with all=true
// for the admin key.
func (a *api) who(r *http.Request) (principal string, all bool, err error) {
	p, all, err := a.caller(r)
	return p.ID, all, err
}

func (a *api) caller(r *http.Request) (p auth.Principal, all bool, err error) {
	if a.opt.AdminKey != "" && auth.AdminOK(r.Header, a.opt.AdminKey) {
		return auth.Principal{}, true, nil
	}
	p, err = a.opt.Authn(r.Header)
	return p, false, err
}

func (a *api) list(w http.ResponseWriter, r *http.Request) {
	principal, _, err := a.who(r)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "missing or invalid API key")
		return
	}
	recs, err := a.opt.Store.ListCapsules(r.Context(), principal)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"capsules": a.summaries(r.Context(), recs)})
}

// summaries lists the head records with what lineage knows of each branch.
// Lineage is looked up per principal, one round trip each; a failed lookup
// only leaves those fields empty.
func (a *api) summaries(ctx context.Context, recs []backend.CapsuleRecord) []Summary {
	out := make([]Summary, 0, len(recs))
	byPrincipal := map[string][]string{}
	for _, rec := range recs {
		out = append(out, summary(rec))
		byPrincipal[rec.Principal] = append(byPrincipal[rec.Principal], rec.ALeg)
	}
	if a.opt.Conversations == nil {
		return out
	}
	known := map[[2]string]Conversation{}
	for p, legs := range byPrincipal {
		convs, err := a.opt.Conversations(ctx, p, legs)
		if err != nil {
			a.opt.Logger.Warn("capsule API: lineage unavailable; conversations listed without agent and client session")
			continue
		}
		for leg, c := range convs {
			known[[2]string{p, leg}] = c
		}
	}
	for i := range out {
		c, ok := known[[2]string{out[i].Principal, out[i].ID}]
		if !ok {
			continue
		}
		out[i].Agent, out[i].ClientSession, out[i].ClientKind = c.Agent, c.ClientSession, c.ClientKind
		if !c.LastActivity.IsZero() {
			at := c.LastActivity
			out[i].LastActivity = &at
		}
	}
	return out
}

// find returns the head record of the A-leg id the caller may see.
func (a *api) find(w http.ResponseWriter, r *http.Request) (backend.CapsuleRecord, bool) {
	principal, _, err := a.who(r)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "missing or invalid API key")
		return backend.CapsuleRecord{}, false
	}
	recs, err := a.opt.Store.ListCapsules(r.Context(), principal)
	if err != nil {
		a.fail(w, err)
		return backend.CapsuleRecord{}, false
	}
	id := r.PathValue("id")
	for _, rec := range recs {
		if rec.ALeg == id {
			return rec, true
		}
	}
	// Another principal's id and an unknown id get the same answer.
	writeError(w, http.StatusNotFound, "no such capsule")
	return backend.CapsuleRecord{}, false
}

func (a *api) show(w http.ResponseWriter, r *http.Request) {
	head, ok := a.find(w, r)
	if !ok {
		return
	}
	d, err := a.detail(r.Context(), head)
	if err != nil {
		a.fail(w, err)
		return
	}
	if d.Capsule == nil {
		a.fail(w, errors.New("newest revision undecodable"))
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// detail reads the newest revision of head's branch, what lineage knows of
// it, and its compaction timeline. An undecodable revision leaves Capsule
// nil.
func (a *api) detail(ctx context.Context, head backend.CapsuleRecord) (Detail, error) {
	recs, err := a.opt.Store.CapsuleHistory(ctx, head.Principal, head.ALeg, 1)
	if err != nil || len(recs) == 0 {
		return Detail{}, errors.Join(err, errors.New("no revision"))
	}
	d := Detail{Summary: a.summaries(ctx, recs[:1])[0]}
	d.Rendered, d.Capsule = renderRecord(recs[0])
	if d.Compactions, err = Compactions(ctx, a.opt.Store, head.Principal, head.ALeg); err != nil {
		return Detail{}, err
	}
	if d.Agent == "" && len(d.Compactions) > 0 {
		d.Agent = d.Compactions[0].Agent
	}
	return d, nil
}

func (a *api) compactions(w http.ResponseWriter, r *http.Request) {
	head, ok := a.find(w, r)
	if !ok {
		return
	}
	evs, err := Compactions(r.Context(), a.opt.Store, head.Principal, head.ALeg)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": head.ALeg, "principal": head.Principal, "compactions": evs})
}

// Compactions returns the retained compaction timeline of an A-leg, newest
// first.
func Compactions(ctx context.Context, st Store, principal, aLeg string) ([]Compaction, error) {
	evs, err := st.Compactions(ctx, principal, aLeg, 0)
	if err != nil {
		return nil, err
	}
	out := make([]Compaction, 0, len(evs))
	for _, e := range evs {
		out = append(out, Compaction{At: e.At, RequestID: e.RequestID, Agent: e.Agent, Rule: e.RuleID, RuleVersion: e.RuleVersion,
			Kind: e.Kind, Action: e.Action, Revision: e.Revision, Tokens: e.Tokens, Decisions: e.Decisions,
			Constraints: e.Constraints, Rejected: e.Rejected, Questions: e.Questions, Steps: e.Steps})
	}
	return out, nil
}

func (a *api) history(w http.ResponseWriter, r *http.Request) {
	head, ok := a.find(w, r)
	if !ok {
		return
	}
	revs, err := History(r.Context(), a.opt.Store, head.Principal, head.ALeg)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": head.ALeg, "principal": head.Principal, "revisions": revs})
}

// History returns the retained revisions of an A-leg, newest first, each
// with what it changed against the one before it (the oldest retained
// revision against an empty capsule).
func History(ctx context.Context, st Store, principal, aLeg string) ([]Revision, error) {
	recs, err := st.CapsuleHistory(ctx, principal, aLeg, 0)
	if err != nil {
		return nil, err
	}
	caps := make([]*capsule.Capsule, len(recs))
	bad := make([]bool, len(recs))
	for i, rec := range recs {
		if caps[i], err = capsule.Decode(rec.Data); err != nil {
			caps[i], bad[i] = &capsule.Capsule{}, true
		}
	}
	out := make([]Revision, 0, len(recs))
	for i, rec := range recs {
		prev := &capsule.Capsule{}
		if i+1 < len(caps) {
			prev = caps[i+1]
		}
		ch := Diff(prev, caps[i])
		if bad[i] {
			ch = []Change{{Item: "capsule", Action: "unreadable", Text: "this revision could not be decoded"}}
		}
		out = append(out, Revision{Revision: rec.Revision, UpdatedAt: rec.UpdatedAt, Changes: ch, Counts: countActions(ch)})
	}
	return out, nil
}

func summary(rec backend.CapsuleRecord) Summary {
	return Summary{ID: rec.ALeg, Principal: rec.Principal, Session: rec.Session, Revision: rec.Revision, UpdatedAt: rec.UpdatedAt}
}

func (a *api) fail(w http.ResponseWriter, err error) {
	a.opt.Logger.Error("capsule API: store read failed", slog.Any("error", err))
	writeError(w, http.StatusInternalServerError, "capsules are unavailable")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "code": status}})
}

// renderRecord decodes a stored revision and renders it as the model is
// shown it.
func renderRecord(rec backend.CapsuleRecord) (string, *capsule.Capsule) {
	c, err := capsule.Decode(rec.Data)
	if err != nil {
		return "(this revision could not be decoded)", nil
	}
	c.Revision = rec.Revision
	return capsule.Render(c), c
}

// Reader reads what the API serves, in the same shapes, for the operator
// CLI on the server host (no authentication: whoever reads the store).
type Reader struct{ a *api }

// NewReader returns a Reader over opt.Store (and opt.Conversations).
func NewReader(opt Options) *Reader {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &Reader{a: &api{opt: opt}}
}

// List returns the principal's conversations ("" for every principal's),
// as GET /v1/capsules lists them.
func (r *Reader) List(ctx context.Context, principal string) ([]Summary, error) {
	recs, err := r.a.opt.Store.ListCapsules(ctx, principal)
	if err != nil {
		return nil, err
	}
	return r.a.summaries(ctx, recs), nil
}

// Detail returns one conversation as GET /v1/capsules/{id} does; Capsule is
// nil when its newest revision cannot be decoded.
func (r *Reader) Detail(ctx context.Context, principal, aLeg string) (Detail, error) {
	return r.a.detail(ctx, backend.CapsuleRecord{Principal: principal, ALeg: aLeg})
}
