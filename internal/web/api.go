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
}

// Summary is one conversation branch in GET /v1/capsules.
type Summary struct {
	ID        string    `json:"id"` // the A-leg (conversation branch) id
	Principal string    `json:"principal"`
	Session   string    `json:"session"`
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Detail is GET /v1/capsules/{id}: the newest revision, as stored and as the
// model is shown it.
type Detail struct {
	Summary
	Rendered string           `json:"rendered"`
	Capsule  *capsule.Capsule `json:"capsule"`
}

// Revision is one entry of GET /v1/capsules/{id}/history.
type Revision struct {
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updated_at"`
	Changes   []Change  `json:"changes"`
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
	}
}

type api struct{ opt Options }

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
	out := make([]Summary, 0, len(recs))
	for _, rec := range recs {
		out = append(out, summary(rec))
	}
	writeJSON(w, http.StatusOK, map[string]any{"capsules": out})
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
	recs, err := a.opt.Store.CapsuleHistory(r.Context(), head.Principal, head.ALeg, 1)
	if err != nil || len(recs) == 0 {
		a.fail(w, errors.Join(err, errors.New("no revision")))
		return
	}
	c, err := capsule.Decode(recs[0].Data)
	if err != nil {
		a.fail(w, err)
		return
	}
	c.Revision = recs[0].Revision
	writeJSON(w, http.StatusOK, Detail{Summary: summary(recs[0]), Rendered: capsule.Render(c), Capsule: c})
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
		out = append(out, Revision{Revision: rec.Revision, UpdatedAt: rec.UpdatedAt, Changes: ch})
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
