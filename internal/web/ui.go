package web

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tether-dev/tether/internal/ledger"
)

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("page.html").Funcs(template.FuncMap{"amount": amount, "source": SourceLabel, "count": count}).ParseFS(assets, "assets/page.html"))

// amount formats a budget amount in its unit.
func amount(unit string, v float64) string {
	if unit == "usd" {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("%.0f tokens", v)
}

// cookieName holds the sign-in token (sessions; never the key itself):
// HttpOnly (no script reads it), SameSite=Strict (no other site's page
// sends it), Secure on TLS, scoped to /ui/. The view is read-only, so a
// forged request can change nothing.
const cookieName = "tether_session"

type pageData struct {
	Title, Who, Error string
	All               bool
	Capsules          []Summary
	Budgets           []ledger.BudgetStatus
	Detail            Detail
	History           []Revision
}

// UIRoutes mounts the read-only web view on mux under /ui/.
func UIRoutes(opt Options) func(*http.ServeMux) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	a := &api{opt: opt, sessions: newSessions(opt.SessionSecret, opt.Now, opt.SignOuts)}
	static, _ := fs.Sub(assets, "assets")
	return func(mux *http.ServeMux) {
		mux.Handle("GET /ui/static/style.css", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
		mux.HandleFunc("GET /ui/{$}", a.uiList)
		mux.HandleFunc("GET /ui/c/{id}", a.uiCapsule)
		mux.HandleFunc("POST /ui/login", a.uiLogin)
		mux.HandleFunc("POST /ui/logout", a.uiLogout)
		mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusSeeOther) })
	}
}

// keyed returns r with the key of the cookie's sign-in token as its
// credential; present reports whether a cookie was sent at all.
func (a *api) keyed(r *http.Request) (r2 *http.Request, present bool, err error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return r, false, errBadToken
	}
	key, err := a.sessions.open(r.Context(), c.Value)
	if err != nil {
		return r, true, err
	}
	r2 = r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+key)
	r2.Header.Del("x-api-key")
	return r2, true, nil
}

func render(w http.ResponseWriter, status int, name string, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_ = pages.ExecuteTemplate(w, name, d)
}

// signedIn resolves the cookie to who may be seen; it renders the login
// page and returns false when there is no valid one.
func (a *api) signedIn(w http.ResponseWriter, r *http.Request) (*http.Request, string, bool, bool) {
	r2, present, err := a.keyed(r)
	if !present {
		render(w, http.StatusOK, "login", pageData{Title: "Sign in"})
		return nil, "", false, false
	}
	if err != nil {
		a.clearCookie(w)
		render(w, http.StatusUnauthorized, "login", pageData{Title: "Sign in", Error: "Your sign-in has expired or is not valid; sign in again."})
		return nil, "", false, false
	}
	principal, all, err := a.who(r2)
	if err != nil {
		a.clearCookie(w)
		render(w, http.StatusUnauthorized, "login", pageData{Title: "Sign in", Error: "That key is not valid (any more)."})
		return nil, "", false, false
	}
	return r2, principal, all, true
}

func whoLabel(principal string, all bool) string {
	if all {
		return "admin"
	}
	return principal
}

func (a *api) uiList(w http.ResponseWriter, r *http.Request) {
	r2, principal, all, ok := a.signedIn(w, r)
	if !ok {
		return
	}
	recs, err := a.opt.Store.ListCapsules(r2.Context(), principal)
	if err != nil {
		a.opt.Logger.Error("web view: store read failed")
		render(w, http.StatusInternalServerError, "login", pageData{Error: "The store is unavailable."})
		return
	}
	d := pageData{Title: "Conversations", Who: whoLabel(principal, all), All: all, Capsules: a.summaries(r2.Context(), recs)}
	if a.opt.Budgets != nil {
		p, _, _ := a.caller(r2)
		if d.Budgets, err = a.opt.Budgets(r2.Context(), p.ID, p.Account); err != nil {
			a.opt.Logger.Error("web view: budgets unavailable")
		}
	}
	render(w, http.StatusOK, "list", d)
}

func (a *api) uiCapsule(w http.ResponseWriter, r *http.Request) {
	r2, principal, all, ok := a.signedIn(w, r)
	if !ok {
		return
	}
	head, found := a.find(w, r2)
	if !found {
		return
	}
	det, err := a.detail(r2.Context(), head)
	if err != nil {
		render(w, http.StatusInternalServerError, "login", pageData{Error: "The store is unavailable."})
		return
	}
	d := pageData{Title: head.ALeg, Who: whoLabel(principal, all), Detail: det}
	if d.History, err = History(r2.Context(), a.opt.Store, head.Principal, head.ALeg); err != nil {
		render(w, http.StatusInternalServerError, "login", pageData{Error: "The store is unavailable."})
		return
	}
	render(w, http.StatusOK, "capsule", d)
}

func (a *api) uiLogin(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		render(w, http.StatusBadRequest, "login", pageData{Error: "Bad form."})
		return
	}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+key)
	if _, _, err := a.who(r2); key == "" || err != nil {
		render(w, http.StatusUnauthorized, "login", pageData{Title: "Sign in", Error: "That key is not valid."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: a.sessions.mint(key), Path: "/ui/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (a *api) uiLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		if err := a.sessions.signOut(r.Context(), c.Value); err != nil {
			a.opt.Logger.Warn("web sign-out not stored; the token is refused by this process only")
		}
	}
	a.clearCookie(w)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (a *api) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/ui/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// count spells n things: "1 decision", "3 decisions", "0 plan steps".
func count(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}
