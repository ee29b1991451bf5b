package session

import (
	"context"
	"slices"
	"strings"

	"github.com/tether-dev/tether/internal/dialect"
)

// Commit records the lineage of a request the upstream answered: one record
// for its full-history digest, the A-leg's new head, the client hint's
// mapping, and fingerprints of the user turns new since the last commit.
// Compaction and out-of-band requests move no head and record nothing.
func (r *Resolver) Commit(ctx context.Context, ref Ref, v *dialect.View) error {
	if err := checkArgs(ref.Principal, v); err != nil {
		return wrap("commit", err)
	}
	if ref.ALeg == "" || ref.compaction || ref.Event == EventOutOfBand || ref.Event == EventUnattributed {
		return nil
	}
	msgs := v.Messages()
	hist := history(msgs)
	if len(hist) == 0 {
		return nil
	}
	p := ref.Principal
	n := len(hist)
	headKey := r.key(kindHead, p, string(hist[n-1].chain[:]))
	if err := r.put(ctx, p, headKey, record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch, Norm: n, Turn: len(msgs)}); err != nil {
		return wrap("commit", err)
	}
	prevKey := ""
	if n >= 2 {
		prevKey = r.key(kindHead, p, string(hist[n-2].chain[:]))
	}
	if err := r.moveHead(ctx, ref, headKey, prevKey, n, len(msgs)); err != nil {
		return wrap("commit", err)
	}
	if err := r.commitHint(ctx, ref); err != nil {
		return wrap("commit", err)
	}
	return wrap("commit", r.fingerprint(ctx, ref, hist))
}

// moveHead upserts the A-leg head unless this process already knows a later
// head of the same A-leg (a slower, older request finishing last).
func (r *Resolver) moveHead(ctx context.Context, ref Ref, headKey, prevKey string, n, turn int) error {
	ak := r.alegKey(ref.Principal, ref.ALeg)
	unlock := r.heads.lock(ak)
	defer unlock()
	cur, ok := r.cached(ref.Principal, ak)
	if ok && cur.Head != "" && Ordinal(cur.Epoch, cur.Turn) > Ordinal(ref.Epoch, turn) {
		return nil
	}
	parent := ref.ParentALeg
	if ok && parent == "" {
		parent = cur.Parent
	}
	return r.put(ctx, ref.Principal, ak, record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch, Norm: n, Turn: turn, Head: headKey, HeadParent: prevKey, Parent: parent, ClientHint: ref.Hint})
}

func (r *Resolver) commitHint(ctx context.Context, ref Ref) error {
	if ref.Hint == "" {
		return nil
	}
	hk := kindHint + ":" + ref.Hint
	unlock := r.heads.lock(hk)
	defer unlock()
	want := record{Session: ref.Session, ALeg: ref.ALeg, Window: ref.window}
	if cur, ok := r.cached(ref.Principal, hk); ok {
		if cur.Session == want.Session && cur.ALeg == want.ALeg && cur.Window >= want.Window {
			return nil
		}
		if cur.ALeg == want.ALeg {
			want.Window = max(want.Window, cur.Window)
		}
	}
	return r.put(ctx, ref.Principal, hk, want)
}

// fingerprint records, for the user turns this request added, which A-legs
// said them, so an out-of-band summarisation request quoting them can be
// attributed. Short texts are skipped; a text said in more than a few
// A-legs is marked as not discriminating.
func (r *Resolver) fingerprint(ctx context.Context, ref Ref, hist []entry) error {
	var keys []string
	for i := len(hist) - 1; i >= ref.base && i >= 0 && len(keys) < fingerprintsMax; i-- {
		u := hist[i].user
		if len(u) < minFingerprint || len(u) > maxFingerprint {
			continue
		}
		keys = append(keys, r.key(kindFinger, ref.Principal, u))
	}
	if len(keys) == 0 {
		return nil
	}
	got, err := r.fetch(ctx, ref.Principal, keys)
	if err != nil {
		return err
	}
	for _, k := range keys {
		rec := got[k]
		if slices.Contains(rec.Legs, ref.ALeg) {
			continue
		}
		rec.Legs = append(rec.Legs, ref.ALeg)
		if len(rec.Legs) > maxLegsPerFinger {
			rec.Legs = rec.Legs[len(rec.Legs)-maxLegsPerFinger:]
			rec.Crowded = true
		}
		if err := r.put(ctx, ref.Principal, k, rec); err != nil {
			return err
		}
	}
	return nil
}

// RecordSummary records the compaction summary relayed for ref's A-leg:
// digests of its distinctive lines let the next epoch's first turn, which
// quotes the summary, join the A-leg.
func (r *Resolver) RecordSummary(ctx context.Context, ref Ref, summaryText string) error {
	if ref.Principal == "" {
		return wrap("record summary", ErrNoPrincipal)
	}
	if ref.ALeg == "" || ref.Event == EventUnattributed {
		return nil
	}
	lines := summaryLines(summaryText, 1<<10)
	// The longest lines are the most distinctive; keep the summary's order
	// among them for determinism.
	if len(lines) > summaryLinesMax {
		byLen := slices.Clone(lines)
		slices.SortStableFunc(byLen, func(a, b string) int { return len(b) - len(a) })
		keep := map[string]bool{}
		for _, l := range byLen[:summaryLinesMax] {
			keep[l] = true
		}
		lines = slices.DeleteFunc(lines, func(l string) bool { return !keep[l] })
	}
	for _, line := range lines {
		if err := r.put(ctx, ref.Principal, r.key(kindSumm, ref.Principal, line), record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch}); err != nil {
			return wrap("record summary", err)
		}
	}
	// The epoch token in the summary resolves through the A-leg head
	// record: make sure one exists even if no turn was committed yet.
	ak := r.alegKey(ref.Principal, ref.ALeg)
	l := &lookup{r: r, ctx: ctx, principal: ref.Principal, got: map[string]record{}}
	if err := l.heads(ref.ALeg); err != nil {
		return wrap("record summary", err)
	}
	H, ok := l.head(ref.ALeg)
	if !ok {
		H = record{ALeg: ref.ALeg, Session: ref.Session, Epoch: ref.Epoch, Turn: ref.Turn, Parent: ref.ParentALeg}
	}
	// Mark the head as compacted: the next turn that carries this summary
	// starts a new epoch even if its opening repeats an earlier epoch's.
	H.Compacted = true
	return wrap("record summary", r.put(ctx, ref.Principal, ak, H))
}

// quotedUserTurns returns the user turns an out-of-band summarisation
// request quotes inside <conversation>…</conversation> as "[User]: …"
// blocks (OpenCode wraps the text in JSON quotes), normalised like Commit
// normalises user messages.
func quotedUserTurns(text string, limit int) []string {
	var out []string
	for {
		i := strings.Index(text, "<conversation>")
		if i < 0 {
			return out
		}
		text = text[i+len("<conversation>"):]
		body := text
		if j := strings.Index(text, "</conversation>"); j >= 0 {
			body, text = text[:j], text[j:]
		} else {
			text = ""
		}
		var cur strings.Builder
		user := false
		flush := func() {
			if user {
				if u := normUser(cur.String()); u != "" {
					out = append(out, u)
				}
			}
			cur.Reset()
		}
		for line := range strings.SplitSeq(body, "\n") {
			if name, rest, ok := speaker(line); ok {
				flush()
				user = name == "User"
				cur.WriteString(rest)
				continue
			}
			cur.WriteByte('\n')
			cur.WriteString(line)
		}
		flush()
		if len(out) >= limit {
			return out[:limit]
		}
	}
}

// speaker parses a "[Name]: rest" block header.
func speaker(line string) (name, rest string, ok bool) {
	if !strings.HasPrefix(line, "[") {
		return "", "", false
	}
	end := strings.Index(line, "]:")
	if end < 2 || end > 40 {
		return "", "", false
	}
	name = line[1:end]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' ') {
			return "", "", false
		}
	}
	return name, strings.TrimPrefix(line[end+2:], " "), true
}

// previousSummaries returns the text inside <previous-summary> blocks.
func previousSummaries(text string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, "<previous-summary>")
		if i < 0 {
			return b.String()
		}
		text = text[i+len("<previous-summary>"):]
		j := strings.Index(text, "</previous-summary>")
		if j < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:j])
		b.WriteByte('\n')
		text = text[j:]
	}
}
