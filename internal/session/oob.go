package session

import (
	"context"
	"strings"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

const (
	oobTurnsMax = 64
	oobLinesMax = 16
)

// resolveOutOfBand attributes a separate summarisation request to the A-leg
// it summarises: by the epoch token it quotes, else by the user turns and
// previous-summary lines it quotes, only when every match agrees on exactly
// one A-leg of this principal. It never creates an A-leg.
func (r *Resolver) resolveOutOfBand(ctx context.Context, ref Ref, msgs []dialect.Message, hintKey string) (Ref, error) {
	p := ref.Principal
	var sb strings.Builder
	for i := range msgs {
		if msgs[i].Role == "user" {
			sb.WriteString(msgs[i].Text)
			sb.WriteByte('\n')
		}
	}
	text := sb.String()
	tok := capsule.Ref(text)
	var query []string
	if tok != "" {
		query = append(query, kindALeg+":"+tok)
	}
	var fingers []string
	for _, u := range quotedUserTurns(text, oobTurnsMax) {
		if len(u) >= minFingerprint && len(u) <= maxFingerprint {
			fingers = append(fingers, r.key(kindFinger, p, u))
		}
	}
	var lines []string
	for _, l := range summaryLines(previousSummaries(text), oobLinesMax) {
		lines = append(lines, r.key(kindSumm, p, l))
	}
	query = append(query, fingers...)
	query = append(query, lines...)
	if hintKey != "" {
		query = append(query, hintKey)
	}
	got, err := r.fetch(ctx, p, query)
	if err != nil {
		return Ref{}, err
	}
	l := &lookup{r: r, ctx: ctx, principal: p, got: got}

	leg := ""
	if rec, ok := got[kindALeg+":"+tok]; tok != "" && ok {
		leg = rec.ALeg
		// A branch forked from the token's (OpenCode --fork copies the
		// summary, token and all) is named by the client's own session id.
		if hintKey != "" {
			if h, ok := l.rec(hintKey); ok && h.ALeg != "" && h.ALeg != leg && h.Session == rec.Session {
				leg = h.ALeg
			}
		}
	}
	if leg == "" {
		var cand map[string]bool // nil: no constraint yet
		constrain := func(legs ...string) {
			next := map[string]bool{}
			for _, a := range legs {
				if a != "" && (cand == nil || cand[a]) {
					next[a] = true
				}
			}
			cand = next
		}
		for _, k := range fingers {
			if rec, ok := got[k]; ok && !rec.Crowded && len(rec.Legs) > 0 {
				constrain(rec.Legs...)
			}
		}
		for _, k := range lines {
			if rec, ok := got[k]; ok && rec.ALeg != "" {
				constrain(rec.ALeg)
			}
		}
		switch {
		case len(cand) == 1:
			for a := range cand {
				leg = a
			}
		case len(cand) > 1 && hintKey != "":
			if h, ok := l.rec(hintKey); ok && cand[h.ALeg] {
				leg = h.ALeg // the client's own session names one of the candidates
			}
		}
	}
	if leg != "" {
		if err := l.heads(leg); err != nil {
			return Ref{}, err
		}
		if H, ok := l.head(leg); ok {
			ref.Session, ref.ALeg, ref.Epoch, ref.Turn, ref.Event = H.Session, leg, H.Epoch, H.Turn, EventOutOfBand
			ref.base = H.Norm
			return ref, nil
		}
	}
	ref.Event = EventUnattributed
	ref.Turn = len(msgs)
	return ref, nil
}
