package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tether-dev/tether/internal/capsule"
	"github.com/tether-dev/tether/internal/dialect"
)

// MarkersCaller is the built-in extractor (route config.MarkersRoute): no
// model call, no cost. It reads only the user's own turns of the prepared
// input and records what they plainly decided, in everyday English:
//
//	Decision: bcrypt for passwords. No MD5, no SHA-1.   → decision; MD5, SHA-1 rejected
//	We will use NATS instead of RabbitMQ.               → decision; RabbitMQ rejected (or superseded)
//	Switching the queue to NATS, since we need JetStream. → supersedes the active queue decision
//	scratch that, Postgres it is; final                 → supersedes the active database decision
//	House rules: tests before merge; no global state.   → two constraints
//	Rejected: GraphQL. Reason: two clients are enough.  → rejected, with its reason
//	Rejected: no GraphQL, keep REST                     → GraphQL rejected; decision "Keep REST"
//	Plan accepted: 1) schema 2) handlers                → accepted plan
//	Never/Always/Avoid/Don't … (a rule of its own)      → constraint
//
// It never records questions, brainstorms, hypotheticals, "don't decide
// yet", negated or quoted text, code, pasted output, assistant text or tool
// output: a wrong "active decision" shown as authoritative is worse than a
// missing one. A user turn that plainly replaces an active decision (same
// subject, different choice; or "scratch that", "actually", "change of
// decision") supersedes it; one that only drops it ("forget Elasticsearch")
// withdraws it. The output goes through the same validation and merge as a
// model's. The corpus under bench/continuity measures it.
type MarkersCaller struct{}

// Extract implements Caller.
func (MarkersCaller) Extract(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, dialect.Usage{}, err
	}
	ops := markerOps(in)
	if ops == nil {
		ops = []map[string]any{}
	}
	raw, err := json.Marshal(map[string]any{"ops": ops})
	return raw, dialect.Usage{}, err
}

// item is one statement read from a user turn, before it is resolved
// against the active decisions.
type item struct {
	kind   string // decision | reject | constraint | plan | skip (a plan step: its number or words in text)
	text   string
	why    string
	old    string // decision: the option it replaces ("instead of Y")
	change bool   // decision: the user marked it as a change ("actually", "scratch that")
	stays  bool   // decision: said as staying with its option ("stick with X", "stay on X")
	update bool   // constraint: read only as a new amount for an active rule ("make it 5 retries …")
	about  bool   // lift: every rule about text goes, not only one keeping it out ("forget what I said about tabs")
	steps  []string
}

// active is a decision in force: one of the capsule's, or one added
// earlier in the same batch (op >= 0, id "").
type active struct {
	id, text string
	op       int // index in ops of the add_decision, for in-batch decisions
	turn     int // the turn that added it, for in-batch decisions

	read *readDecision // text as later decisions compare with it; see reading
	norm string        // capsule.Normalize(text) once asked; see normalized
}

// normalized returns the decision's text as the merge compares texts.
func (a *active) normalized() string {
	if a.norm == "" {
		a.norm = capsule.Normalize(a.text)
	}
	return a.norm
}

// readDecision is what every later decision of a batch compares with an
// active one: its choice as " word word " (findChoice), the options it
// names and its subject words (sameSubject).
type readDecision struct {
	choice  string
	words   []string // of choice
	choices []string
	subject map[string]bool
}

// reading reads a.text the first time a decision is compared with it.
func (a *active) reading() *readDecision {
	if a.read == nil {
		choice := " " + strings.Join(words(strings.SplitN(a.text, "(instead of", 2)[0]), " ") + " "
		if t, _ := foldOld(a.text); t != a.text {
			choice = " " + strings.Join(words(t), " ") + " "
		}
		a.read = &readDecision{choice: choice, words: strings.Fields(choice), choices: choices(a.text), subject: subjectWords(a.text)}
	}
	return a.read
}

// markerOps reads the active decisions of in.Prev and the user's turns of
// the prepared transcript.
func markerOps(in Input) []map[string]any {
	var act []active
	if in.Prev != nil {
		for _, d := range in.Prev.Decisions {
			if d.Status == capsule.StatusActive {
				act = append(act, active{id: d.ID, text: d.Statement, op: -1})
			}
		}
	}
	rules := rulesOf(in.Prev)
	var pl planSteps
	if in.Prev != nil && in.Prev.LatestPlan != nil {
		pl.offset = in.Prev.LatestPlan.Condensed
		for _, st := range in.Prev.LatestPlan.Steps {
			pl.steps = append(pl.steps, st.Text)
		}
	}
	var rejected []capsule.Rejected
	if in.Prev != nil {
		rejected = in.Prev.Rejected
	}
	var ops []map[string]any
	content := contentWords{}
	for _, t := range userTurns(in) {
		accepted := accepts(t.text)
		// Numbered answers to the assistant's numbered questions are read
		// against their questions; any other turn is read on its own.
		items := numberedAnswers(t.text, t.prev)
		if len(items) == 0 {
			picked := picksOption(t.text)
			if picked {
				// "Option B, please": the option of the assistant's question
				// by that number or letter; without one, "option B" as said.
				items = choiceReply(t.text, t.prev)
			}
			if len(items) == 0 {
				items = readTurn(t.text)
			}
			if len(items) == 0 && accepted {
				// "Sounds good, go ahead": what the assistant proposed just
				// before is what the user settled.
				items = proposed(t.prev)
			} else if len(items) == 0 && !picked {
				// "Load into memory, files are small": the option picked from
				// those the assistant asked about.
				items = choiceReply(t.text, t.prev)
			} else if !picked {
				// "CRAM only, BAMs are 3x the size …" to "… BAMs kept, or
				// CRAM only?": the other option asked about, judged after
				// the one taken, is turned down too.
				reply := choiceReply(t.text, t.prev)
				if len(reply) > 1 && reply[0].kind == "decision" && picksByNumber(t.text) {
					// "2, and max 3 retries per job": the option by its
					// number, then what the rest says (read as the turn
					// alone reads it).
					items = reply
				} else {
					items = append(pickedBeside(items, reply), otherJudged(items, reply)...)
				}
			}
			if !slices.ContainsFunc(items, func(it item) bool { return it.kind == "plan" }) {
				// "sounds good, but do 3 before 2"; "sounds good, use Redis
				// for the cache": the plan proposed is accepted with what
				// else the reply says (read again from its parts).
				if plan := planAccepted(t.text, t.prev); plan != nil {
					items = plan
				}
			}
			if len(items) == 0 {
				// "yes, 3 retries with backoff, then dead-letter it"
				items = yesHow(t.text, t.prev)
			}
			if len(items) == 0 {
				// "ok Docker is fine actually": an option turned down
				// before, taken after all.
				items = fineAfterAll(t.text, rejected, content)
			}
		}
		if !accepted {
			// "nah, too much surface area for two clients": the option
			// the assistant offered, turned down.
			no := declined(t.text, t.prev, items)
			if len(no) > 0 && no[0].kind == "reject" {
				// "hm no, use the existing logger" to "I'll add winston for
				// logging": the "no" turns the offer down; what is chosen
				// replaces the offer, not the user's newest decision.
				for k := range items {
					if items[k].kind == "decision" && items[k].old == "" {
						items[k].old, items[k].change = no[0].text, false
					}
				}
			}
			items = append(items, no...)
		}
		if t.prev != "" && offerCue.MatchString(lower(t.prev)) {
			// "every 15 minutes instead" to "I'll schedule it hourly": the
			// change is to what the assistant just offered, not to the
			// user's newest decision (one of the same subject is still
			// replaced, by its subject).
			for k := range items {
				if items[k].kind == "decision" && items[k].old == "" && items[k].change && !namesOption(items[k].text) {
					items[k].change = false
				}
			}
		}
		items = judgedBeside(items, act, t.text)
		var skips []item
		items = slices.DeleteFunc(items, func(it item) bool {
			if it.kind == "reject" && articleLead.MatchString(lower(it.text)) && pl.find(it.text) > 0 {
				// "skip the admin UI for now", the admin UI a step of the
				// plan: that step cancelled, not a choice turned down.
				it.kind = "skip"
			}
			if it.kind == "skip" || it.kind == "done" {
				skips = append(skips, it)
				return true
			}
			return false
		})
		backToRetired(items, in.Prev, act)
		n := len(ops)
		ops, act = resolve(ops, act, items, t.n)
		ops, rules = updateRules(ops, n, rules)
		reinstate(ops, n, rejected, in.Turns["m"+strconv.Itoa(t.n)], content)
		backAgain(ops, n, in.Prev, content)
		reinstateRetired(ops, n, in.Prev, in.Turns["m"+strconv.Itoa(t.n)])
		for _, o := range ops[n:] {
			if o["op"] == "set_plan" {
				pl = planSteps{}
				for _, st := range o["steps"].([]map[string]any) {
					pl.steps = append(pl.steps, st["text"].(string))
				}
			}
		}
		for _, it := range skips {
			if k := pl.find(it.text); k > 0 {
				status := capsule.StepCancelled
				if it.kind == "done" {
					status = capsule.StepCompleted
				}
				ops = append(ops, map[string]any{"op": "set_step_status", "step": k, "status": status, "turn": t.n})
			}
		}
	}
	ops = slices.DeleteFunc(ops, func(o map[string]any) bool { return o["op"] == dropOp })
	return fitResult(ops, in.Prev != nil && in.Prev.LatestPlan != nil)
}

// fitResult makes ops a result the merge accepts however long the history
// read: an op repeating an earlier one of the batch (a rule restated on
// every turn) goes, and past capsule.MaxOps the least telling go first —
// choices the batch itself replaced, then other rejected alternatives, then
// the oldest of the rest (a result over the bound is rejected whole: nothing
// would be kept, the watermark would not move, and every later request
// would read the whole history again). A step status whose plan went goes
// too.
func fitResult(ops []map[string]any, prevPlan bool) []map[string]any {
	for _, o := range ops {
		for _, k := range []string{"statement", "text"} {
			if v, ok := o[k].(string); ok {
				o[k] = cut(v, maxText)
			}
		}
		for _, k := range []string{"reason", "rationale"} {
			if v, ok := o[k].(string); ok {
				o[k] = cut(v, maxNote)
			}
		}
		if steps, ok := o["steps"].([]map[string]any); ok {
			for _, st := range steps {
				st["text"] = cut(st["text"].(string), maxText)
			}
			steps = slices.DeleteFunc(steps, func(st map[string]any) bool { return capsule.Normalize(st["text"].(string)) == "" })
			o["steps"] = steps[:min(len(steps), maxSteps)]
		}
	}
	ops = slices.DeleteFunc(ops, func(o map[string]any) bool {
		if steps, ok := o["steps"].([]map[string]any); ok {
			return len(steps) == 0
		}
		// A text of punctuation alone is empty to the merge ("#").
		for _, k := range []string{"statement", "text"} {
			if v, ok := o[k].(string); ok && capsule.Normalize(v) == "" {
				return true
			}
		}
		return false
	})
	seen := map[string]map[string]any{}
	ops = slices.DeleteFunc(ops, func(o map[string]any) bool {
		if o["op"] == "set_plan" {
			return false
		}
		k := fmt.Sprint(o["op"], "\x00", o["id"], "\x00", capsule.Normalize(fmt.Sprint(o["statement"], o["text"])), "\x00", o["step"], o["status"])
		first := seen[k]
		if first == nil {
			seen[k] = o
			return false
		}
		// Said again with the reason it lacked the first time ("Use Redis
		// for the cache", later "…, because we already run it"): the
		// reason stays.
		for _, r := range []string{"rationale", "reason"} {
			if _, had := first[r]; !had && o[r] != nil {
				first[r] = o[r]
			}
		}
		return true
	})
	for _, least := range []func(o map[string]any) bool{
		func(o map[string]any) bool { r, _ := o["reason"].(string); return strings.HasPrefix(r, replacedBy) },
		func(o map[string]any) bool { return o["op"] == "reject_alternative" },
		func(map[string]any) bool { return true },
	} {
		for i := 0; i < len(ops) && len(ops) > capsule.MaxOps; {
			if least(ops[i]) && ops[i]["op"] != "set_plan" {
				ops = slices.Delete(ops, i, i+1)
				continue
			}
			i++
		}
	}
	for len(ops) > capsule.MaxOps { // only plans left: the newest wins
		ops = ops[1:]
	}
	// A step status needs its plan: the newest kept set_plan before it, or
	// the capsule's when the batch sets none before it.
	planned := prevPlan
	return slices.DeleteFunc(ops, func(o map[string]any) bool {
		if o["op"] == "set_plan" {
			planned = true
		}
		return o["op"] == "set_step_status" && !planned
	})
}

// Bounds of what the built-in extractor records, within the result
// schema's (schema/ops.v2.json: texts of 2000 characters, plans of 50
// steps): a reason is a clause, not a page.
const (
	maxText  = 500
	maxNote  = 300
	maxSteps = 50
)

// cut returns s cut to at most n characters, at a word end when there is
// one, marked with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	out := string([]rune(s)[:n-1])
	if i := strings.LastIndexByte(out, ' '); i > len(out)/2 {
		out = out[:i]
	}
	return strings.TrimSpace(out) + "…"
}

// replacedBy opens the reason of a choice the same batch replaced.
const replacedBy = "replaced by: "

// otherPart reports whether text names, after "for", a part the decision
// a says nothing of, with options of no kind in common: "move the backend
// to a Go service" does not replace "expo-router for navigation" (while
// "switch the bundler to Webpack" replaces "Vite … for the dashboard",
// both bundlers).
func otherPart(text string, a active) bool {
	_, part := subjectParts(text)
	old := a.reading()
	if len(part) == 0 || len(old.subject) == 0 {
		return false
	}
	if newChoices := choices(text); sameCategory(newChoices, old.choices) {
		// Options of one kind replace each other, unless the decision
		// had a part of its own and the new one names another without
		// the decision's option: "use Postgres for the analytics store"
		// leaves "MySQL for the database" as it was; "Postgres for the
		// main DB" replaces it, and so does "plain CSS modules for the
		// sprinkles, keep vanilla-extract for the theme" its styling.
		if _, oldPart := subjectParts(a.text); len(oldPart) == 0 || kindOnly(part) || slices.ContainsFunc(old.choices, func(c string) bool { return slices.Contains(newChoices, c) }) {
			return false
		}
	}
	for w := range part {
		if old.subject[w] {
			return false
		}
	}
	return true
}

// sameAmountOf returns the newest active decision that sets an amount
// for the thing text sets one for ("set the pool size to 20", then
// "raise the pool size to 50"), or -1.
func sameAmountOf(act []active, retired map[int]bool, text string) int {
	lt := lower(text)
	if !strings.Contains(lt, " to ") {
		return -1
	}
	m := amountTo.FindStringSubmatch(lt)
	if m == nil {
		return -1
	}
	thing, _ := ruleKey(m[2])
	for i := len(act) - 1; i >= 0; i-- {
		if retired[i] || !strings.Contains(lower(act[i].text), " to ") {
			continue
		}
		if o := amountTo.FindStringSubmatch(lower(act[i].text)); o != nil {
			if k, _ := ruleKey(o[2]); k == thing && k != "" {
				return i
			}
		}
	}
	return -1
}

// judgedActive returns the active decision, other than replaced, whose
// option a reason opens by judging ("tokio is too heavy after all"), or
// -1.
func judgedActive(act []active, retired map[int]bool, why string, replaced int) int {
	if why == "" || !judgement.MatchString(lower(why)) {
		return -1
	}
	w := strings.TrimSuffix(strings.TrimSuffix(bare(firstWord(why)), "'s"), "’s")
	if categoryOf[lower(w)] == "" && !namedOrPackage(w) {
		return -1
	}
	if k := findChoice(act, retired, w); k >= 0 && k != replaced {
		return k
	}
	return -1
}

// namesOption reports whether text names an option, not only an amount
// ("every 15 minutes" names none).
func namesOption(text string) bool {
	return slices.ContainsFunc(choices(text), func(c string) bool { return !amountWord.MatchString(c) })
}

// unrelated reports whether text names no option and shares no word, nor
// does its reason why, with decision a, which names a well-known option:
// "Actually we do need click counts" after "Use Railway" adds a decision,
// it replaces none. (A decision of no known option is still replaced:
// "rollback is too hard to debug … go with a server-authoritative model
// instead" replaces "Use rollback netcode".)
func unrelated(text, why string, a active) bool {
	old := a.reading()
	if namesOption(text) || !slices.ContainsFunc(old.choices, func(c string) bool { return categoryOf[c] != "" }) {
		return false
	}
	subj, _ := subjectParts(text + " " + why)
	for w := range subj {
		if old.subject[w] || slices.Contains(old.choices, w) {
			return false
		}
	}
	return true
}

// kindOnly reports whether every word of part names a kind of thing
// (the database, the main DB, the cache), not a part of the product.
func kindOnly(part map[string]bool) bool {
	for w := range part {
		w = strings.TrimPrefix(w, "#")
		if _, ok := categories[w]; !ok && !generalAcronym[w] && !restating[w] && !kindSynonym[w] {
			return false
		}
	}
	return true
}

// kindSynonym are other names of the categories' kinds.
var kindSynonym = stems("datastore", "datastores", "data", "storage", "persistence", "backend", "queues", "caching", "broker",
	"messaging", "bus", "tests", "testing", "framework", "server", "library", "lib")

// dropOp marks an op a later turn of the batch took back; it stays in
// place until the end, since decisions refer to ops by index.
const dropOp = "_drop"

// liftOp marks what the user now allows ("you can use lodash now"):
// updateRules lifts the rules that kept it out and drops the op.
const liftOp = "_lift"

// liftAbout marks a lift of every rule about its text, not only those
// keeping it out.
const liftAbout = "_about"

// reinstate marks each decision ops[from:] adds that chooses an option
// rejected before ("Actually, let's use GORM after all" after "Rejected:
// GORM") as reinstating it, so the merge takes it off the rejected list, and
// drops an earlier rejection of it from the same batch: the block must never
// list the option the user now chose as one not to use.
//
// turn is the turn's transcript ordinal, which rejections are dated by;
// content holds the content words of the texts compared, which every
// later turn of a long batch compares again.
func reinstate(ops []map[string]any, from int, rejected []capsule.Rejected, turn int, content contentWords) {
	taken := map[string]bool{} // an alternative is reinstated once
	for i := from; i < len(ops); i++ {
		o := ops[i]
		if o["op"] != "add_decision" && o["op"] != "supersede_decision" {
			continue
		}
		st, _ := o["statement"].(string)
		chosen := chosenWords(st)
		for _, r := range rejected {
			if r.SourceTurn < turn && !taken[r.ID] && namesAll(chosen, content.of(r.Text)) {
				o["reinstates"] = r.ID
				taken[r.ID] = true
				break
			}
		}
		for j := from - 1; j >= 0; j-- {
			if ops[j]["op"] == "reject_alternative" {
				if txt, _ := ops[j]["text"].(string); namesAll(chosen, content.of(txt)) {
					ops[j] = map[string]any{"op": dropOp}
				}
			}
		}
	}
}

// reinstateRetired marks each decision ops[from:] adds with the text of a decision of prev retired before turn ("Use React", then
// "Use Vue instead", then "go back to React") as reinstating it: the merge
// takes a retired decision's text again only so, and refused the whole
// batch without it.
func reinstateRetired(ops []map[string]any, from int, prev *capsule.Capsule, turn int) {
	if prev == nil {
		return
	}
	for i := from; i < len(ops); i++ {
		o := ops[i]
		if o["op"] != "add_decision" || o["reinstates"] != nil {
			continue // a supersede may take a retired decision's text as it is
		}
		st, _ := o["statement"].(string)
		n := capsule.Normalize(st)
		for _, d := range prev.Decisions {
			if d.Status != capsule.StatusActive && d.ClosedTurn < turn && capsule.Normalize(d.Statement) == n {
				o["reinstates"] = d.ID
				break
			}
		}
	}
}

// backToRetired points a change that names only options of a decision
// replaced earlier ("go back to SQS" after SQS gave way to Redis streams)
// at the decision in force that replaced it, following the replacements
// to the one in force: going back undoes that replacement, whatever kind
// of option the replacement named. backAgain then restores the earlier
// decision's own words.
func backToRetired(items []item, prev *capsule.Capsule, act []active) {
	if prev == nil {
		return
	}
	var byID map[string]*capsule.Decision // made for the first change that needs it
	for k := range items {
		it := &items[k]
		if it.kind != "decision" || !it.change || it.old != "" {
			continue
		}
		cs := choices(it.text)
		if len(cs) == 0 {
			continue
		}
		for _, d := range prev.Decisions {
			if d.Status != capsule.StatusSuperseded || !namesEvery(choices(d.Statement), cs) {
				continue
			}
			if _, part := subjectParts(it.text); alsoTail.MatchString(lower(it.text)) || len(part) > 0 && !sharesWord(part, d.Statement) {
				break // "use Postgres for analytics too": another part, not going back
			}
			if byID == nil {
				byID = map[string]*capsule.Decision{}
				for k := range prev.Decisions {
					byID[prev.Decisions[k].ID] = &prev.Decisions[k]
				}
			}
			next := d.SupersededBy
			for hop := 0; hop < 16 && byID[next] != nil && byID[next].Status == capsule.StatusSuperseded; hop++ {
				next = byID[next].SupersededBy
			}
			if j := slices.IndexFunc(act, func(a active) bool { return a.id != "" && a.id == next }); j >= 0 {
				if held := act[j].reading().choices; len(held) > 0 && !slices.Contains(held, cs[0]) {
					it.old = held[0]
				}
			}
			break
		}
	}
}

// sharesWord reports whether text holds one of the words of part.
func sharesWord(part map[string]bool, text string) bool {
	return slices.ContainsFunc(words(text), func(w string) bool { return part[w] })
}

// backAgain gives a change back to the choice that the decision it
// replaces had replaced ("Use Jest for tests", "switch to Vitest", then
// "undo that, Jest is fine") that choice's own words: the decision is
// taken back, not made again in fewer words beside its retired self.
func backAgain(ops []map[string]any, from int, prev *capsule.Capsule, content contentWords) {
	if prev == nil {
		return
	}
	for _, o := range ops[from:] {
		id, _ := o["id"].(string)
		st, _ := o["statement"].(string)
		if o["op"] != "supersede_decision" || id == "" {
			continue
		}
		ws := content.of(st)
		if len(ws) == 0 {
			continue
		}
		for _, d := range prev.Decisions {
			if d.Status == capsule.StatusSuperseded && d.SupersededBy == id && len(content.of(d.Statement)) > len(ws) && namesAll(chosenWords(d.Statement), ws) {
				o["statement"] = d.Statement
				break
			}
		}
	}
}

// chosenWords are the words of a decision's choice, without the
// alternatives it sets aside ("X (instead of Y)", "X, not Y").
func chosenWords(statement string) map[string]bool {
	s, _ := foldOld(statement)
	if k := strings.Index(lower(s), "(instead of"); k > 0 {
		s = s[:k]
	}
	m := map[string]bool{}
	for _, w := range words(s) {
		m[w] = true
	}
	return m
}

// namesAll reports whether every one of a text's content words is among
// chosen (and it has one).
func namesAll(chosen map[string]bool, content []string) bool {
	for _, w := range content {
		if !chosen[w] {
			return false
		}
	}
	return len(content) > 0
}

// contentWords memoises the content words (words but stop words) of the
// texts one batch compares: a long history read at once compares each new
// decision with every rejection before it.
type contentWords map[string][]string

func (c contentWords) of(text string) []string {
	if ws, ok := c[text]; ok {
		return ws
	}
	ws := []string{}
	for _, w := range words(text) {
		if !stopWords[w] {
			ws = append(ws, w)
		}
	}
	c[text] = ws
	return ws
}

// untouched returns the options of a replaced decision that the decision
// replacing it leaves alone: of a known kind none of the new options is of
// (the database of "use PostgreSQL with sqlc" when the ORM changes). Only
// when every new option's kind is known, so a replacement whose kind is
// unknown keeps nothing it might have meant to replace.
func untouched(old, repl []string) []string {
	kinds := map[string]bool{}
	for _, c := range repl {
		k := categoryOf[c]
		if k == "" {
			return nil
		}
		kinds[k] = true
	}
	if len(kinds) == 0 || len(old) < 2 {
		return nil
	}
	var out []string
	for _, c := range old {
		if k := categoryOf[c]; k != "" && !kinds[k] && !slices.Contains(repl, c) {
			out = append(out, c)
		}
	}
	return out
}

// restates reports whether a decision only keeps what is decided ("keep
// BullMQ" with BullMQ active): nothing changes.
func restates(it item, act []active, retired map[int]bool) bool {
	if it.old != "" {
		return false // "I take that back about the leaderboards, keep them in Postgres": a change
	}
	if !it.stays && !keepLead.MatchString(lower(it.text)) {
		return false
	}
	cs := choices(it.text)
	for _, c := range cs {
		if findChoice(act, retired, c) < 0 {
			return false
		}
	}
	return len(cs) > 0
}

var keepLead = mustPattern(`^(?:keep|keeping|stick with|sticking with|stay with|stay on|we'?re keeping|we keep)\s`)

// otherChoices returns the options a decision names (not the part it is
// for) that the text turning one of them down does not name; nil when
// that text names none of them.
func otherChoices(text, rejected string) []string {
	named := " " + strings.Join(words(rejected), " ") + " "
	var out []string
	hit := false
	for _, c := range choices(text) {
		switch {
		case forPart(text, c):
		case strings.Contains(named, " "+c+" "):
			hit = true
		default:
			out = append(out, c)
		}
	}
	if !hit {
		return nil // none of its options turned down: not a part of it
	}
	return out
}

// saidAgain reports whether an active decision not retired by this turn
// has text's words, as the merge compares them (capsule.Normalize).
func saidAgain(act []active, retired map[int]bool, text string) bool {
	n := capsule.Normalize(text)
	for i := range act {
		if !retired[i] && act[i].normalized() == n {
			return true
		}
	}
	return false
}

// findDropped returns the active decision a turn's reject turns down by
// the option it names first ("gRPC between those two" for "Use gRPC
// between the dispatcher and the pricing service"), or -1.
func findDropped(act []active, retired map[int]bool, it item) int {
	if it.kind != "reject" {
		return -1
	}
	if i := findChoice(act, retired, it.text); i >= 0 {
		return i
	}
	if i := droppedByPart(act, retired, it.text); i >= 0 {
		return i
	}
	return droppedByName(act, retired, it.text)
}

// droppedByName returns the active decision whose option a turned-down
// text names first, the rest only saying where it is used, or -1.
func droppedByName(act []active, retired map[int]bool, text string) int {
	f := strings.Fields(text)
	if len(f) < 2 || !isNamed(f[0]) || !droppedTail.MatchString(lower(strings.Join(f[1:], " "))) {
		return -1
	}
	return findChoice(act, retired, bare(f[0]))
}

// droppedByPart returns the one active decision whose part a turned-down
// thing names by its doer ("the reranker" of "Use Cohere Rerank for
// reranking"), or -1.
func droppedByPart(act []active, retired map[int]bool, text string) int {
	f := strings.Fields(lower(strings.TrimPrefix(strings.TrimPrefix(text, "the "), "The ")))
	if len(f) != 1 || len(f[0]) < 6 || !strings.HasSuffix(f[0], "er") {
		return -1
	}
	root := strings.TrimSuffix(f[0], "er")
	found := -1
	for i := range act {
		if retired[i] {
			continue
		}
		for w := range act[i].reading().subject {
			if len(root) >= 4 && (w == root+"ing" || w == root+"ion" || w == root) {
				if found >= 0 && found != i {
					return -1
				}
				found = i
			}
		}
	}
	return found
}

// droppedTail: words after an option that only say where it is used.
var droppedTail = mustPattern(`^(?:between|for|in|on|from|with|at|across)\b`)

// findOld returns the active decision a change names as the one it
// replaces, or -1: by the words as said, else by the option among them
// ("drop Redis caching and use solid_cache" with "Use Redis for caching"
// active).
func findOld(act []active, retired map[int]bool, old string) int {
	if i := findChoice(act, retired, old); i >= 0 {
		return i
	}
	if ws := strings.Fields(old); len(ws) > 1 {
		for _, w := range ws {
			if w = bare(w); isNamed(w) {
				if i := findChoice(act, retired, w); i >= 0 {
					return i
				}
			}
		}
	}
	return -1
}

// forPart reports whether choice c of a decision's text names the part it
// is for, not an option: "CI" in "Use Jenkins for CI", "sessions" in "Use
// JWT for sessions".
func forPart(text, c string) bool {
	if productParts[c] {
		return true
	}
	_, p, ok := strings.Cut(text, " for ")
	if !ok {
		return false
	}
	p, _, _ = strings.Cut(p, " with ")
	return strings.Contains(" "+strings.Join(words(p), " ")+" ", " "+c+" ")
}

// spelled returns w as text spells it (choices are lower-cased).
func spelled(text, w string) string {
	for _, raw := range strings.Fields(text) {
		if t := bare(raw); lower(t) == w {
			return t
		}
	}
	return w
}

// planSteps is the plan a turn's "skip the Dockerfile step" refers to: the
// capsule's, or one the same batch set.
type planSteps struct {
	steps  []string
	offset int // steps condensed away before steps[0]
}

// find returns the step ref names, numbered as rendered (1-based, after the
// condensed ones), or 0: "4" names the fourth; words name the one step
// holding all of them.
func (p planSteps) find(ref string) int {
	if n, err := strconv.Atoi(ref); err == nil {
		if n > p.offset && n <= p.offset+len(p.steps) {
			return n
		}
		return 0
	}
	want := words(ref)
	found := 0
	for i, st := range p.steps {
		have := map[string]bool{}
		for _, w := range words(st) {
			have[w] = true
		}
		all := len(want) > 0
		for _, w := range want {
			all = all && (have[w] || stopWords[w])
		}
		if all {
			if found > 0 {
				return 0 // two steps match: not clear which
			}
			found = p.offset + i + 1
		}
	}
	return found
}

// resolve turns one turn's items into ops against the active decisions:
// decisions first (a replacement retires what it replaces), then the rest.
func resolve(ops []map[string]any, act []active, items []item, turn int) ([]map[string]any, []active) {
	retired := map[int]bool{} // indexes into act retired by this turn
	// withdraw retires act[i]; an in-batch decision never becomes active
	// and is kept as rejected instead.
	withdraw := func(i int, replacement string) {
		retired[i] = true
		if a := act[i]; a.op >= 0 {
			st, _ := ops[a.op]["statement"].(string)
			o := map[string]any{"op": "reject_alternative", "text": st, "turn": ops[a.op]["turn"]}
			if replacement != "" {
				o["reason"] = replacedBy + replacement
			}
			ops[a.op] = o
		}
	}
	decided := 0
	for _, it := range items {
		if it.kind == "decision" {
			decided++
		}
	}
	for _, it := range items {
		if it.kind != "decision" || restates(it, act, retired) {
			continue
		}
		if it.why == "" && saidAgain(act, retired, it.text) {
			// The same decision said again word for word ("Keep PostgreSQL,
			// not MongoDB" at the end of every step) changes nothing the
			// merge would keep; only what it turns down is said again.
			// Left active beside itself, every later turn would compare
			// with each copy: a session's reading grew with the square of
			// its turns.
			if it.old != "" && (isOption(it.old) || toolName(it.old)) {
				ops = append(ops, map[string]any{"op": "reject_alternative", "text": it.old, "turn": turn})
			}
			continue
		}
		i := -1
		if it.old != "" {
			i = findOld(act, retired, it.old)
		}
		if i < 0 && it.old == "" && decided == 1 {
			// "We're not going to need Helm at all, plain manifests with
			// kustomize": the one decision of a turn that turns an active
			// decision's option down replaces that decision, unless the
			// two are known to be of other kinds.
			for _, o := range items {
				if k := findDropped(act, retired, o); k >= 0 && !otherKinds(choices(it.text), act[k].reading().choices) {
					i = k
					if it.why == "" {
						it.why = o.why // "scratch the semantic cache, it served stale answers. plain …"
					}
					break
				}
			}
		}
		if i < 0 && it.change && it.why != "" {
			// "back to server-side sessions. JWT revocation was a mess.":
			// the option the reason judges is the one replaced; so is
			// the one the reason is about ("wowza's licence is per
			// instance and we autoscale, so transcode with ffmpeg …").
			words := strings.Fields(strings.TrimPrefix(it.why, "the "))
			if !judgement.MatchString(lower(it.why)) && len(words) > 0 {
				words = words[:1]
			}
			for _, w := range words {
				if w = strings.TrimSuffix(strings.TrimSuffix(bare(w), "'s"), "’s"); namedOrPackage(w) { // "Shaka's bundle is …"
					if k := findChoice(act, retired, w); k >= 0 {
						i = k
						break
					}
				}
			}
		}
		if i < 0 && it.old == "" {
			// "raise the pool size to 50" after "set the pool size to 20".
			i = sameAmountOf(act, retired, it.text)
		}
		if i < 0 {
			i = sameSubject(act, retired, it.text)
			if i >= 0 && act[i].op >= 0 && act[i].turn == turn && !it.change {
				// Stated together ("Playwright for the end-to-end tests
				// and Vitest for unit tests"): both hold.
				i = -1
			}
		}
		// A change that names what it replaces ("instead of RabbitMQ")
		// replaces only that; otherwise the newest decision.
		unheld := ""
		if i < 0 && it.change && !isNamed(it.old) && !toolName(it.old) && decided == 1 {
			if it.old == "" {
				unheld = judgedUnheld(it.why, act, retired)
			}
			// Unless the newest is about another kind of thing: a
			// database named bare never replaces the job queue; nor one
			// the change says stays ("…, Postgres stays for everything
			// else").
			if i = latest(act, retired); i >= 0 && (otherKinds(choices(it.text), act[i].reading().choices) || keptBy(act[i], it.text) || alsoTail.MatchString(lower(it.text)) && namesEvery(choices(it.text), act[i].reading().choices) ||
				otherPart(it.text, act[i]) || unheld != "" || unrelated(it.text, it.why, act[i])) {
				// Nor one whose every option the change names again
				// ("actually postgres for events too" after "Use Postgres
				// for the database"): extended, not replaced.
				i = -1
			}
		}
		if i >= 0 && it.old == "" && (keptBy(act[i], it.text) || stillOnly(items, act[i])) {
			// "JSON output stays, but NDJSON when …", "revert to thiserror
			// for the library crate; anyhow only in the binary": beside it.
			i = -1
		}
		if k := judgedActive(act, retired, it.why, i); k >= 0 && (act[k].op < 0 || act[k].turn != turn) {
			// "Switch reqwest to ureq, tokio is too heavy after all":
			// the decision the reason judges goes too.
			withdraw(k, "")
			if act[k].op < 0 {
				ops = append(ops, map[string]any{"op": "reject_decision", "id": act[k].id, "turn": turn})
			}
		}
		op := map[string]any{"op": "add_decision", "statement": it.text, "turn": turn}
		if it.why != "" {
			op["rationale"] = it.why
		}
		if i >= 0 {
			withdraw(i, it.text)
			if act[i].op < 0 {
				op["op"], op["id"] = "supersede_decision", act[i].id
			}
		}
		ops = append(ops, op)
		if op["op"] == "add_decision" {
			act = append(act, active{text: it.text, op: len(ops) - 1, turn: turn})
		}
		if i >= 0 {
			// "use PostgreSQL with sqlc", then "use GORM after all": the
			// database was not in question and stays decided.
			for _, kept := range untouched(act[i].reading().choices, choices(it.text)) {
				if slices.Contains(choices(it.old), kept) {
					continue // "…, not Redis": turned down, not left alone
				}
				if forPart(act[i].text, kept) {
					continue // "Use Memcached for sessions": the part, no option
				}
				kept = "Use " + spelled(act[i].text, kept)
				ops = append(ops, map[string]any{"op": "add_decision", "statement": kept, "turn": turn})
				act = append(act, active{text: kept, op: len(ops) - 1, turn: turn})
			}
		}
		if i < 0 && it.old != "" && (isOption(it.old) || toolName(it.old)) {
			// The reason of a choice over an alternative is why the
			// alternative went ("Unleash, not LaunchDarkly (price)").
			rej := map[string]any{"op": "reject_alternative", "text": it.old, "turn": turn}
			if it.why != "" {
				rej["reason"] = it.why
			}
			ops = append(ops, rej)
		}
		if i < 0 && unheld != "" {
			// The option the reason judges goes, though it was never
			// recorded.
			ops = append(ops, map[string]any{"op": "reject_alternative", "text": unheld, "reason": it.why, "turn": turn})
		}
	}
	for _, it := range items {
		switch it.kind {
		case "reject":
			i := findChoice(act, nil, it.text)
			if i < 0 {
				i = droppedByPart(act, retired, it.text) // "drop the reranker"
			}
			if i < 0 {
				if k := droppedByName(act, nil, it.text); k >= 0 && retired[k] {
					continue // "drop gRPC between those two, plain HTTP+JSON …": replaced already
				}
			}
			if i >= 0 && (act[i].op < 0 || act[i].turn != turn) {
				if !retired[i] {
					withdraw(i, "")
					if rest := otherChoices(act[i].text, it.text); len(rest) > 0 {
						// "Keep Tailwind but drop daisyUI": only the option
						// turned down leaves; the rest of the decision stands.
						for k, c := range rest {
							rest[k] = spelled(act[i].text, c)
						}
						kept := "Use " + strings.Join(rest, " and ")
						op := map[string]any{"op": "add_decision", "statement": kept, "turn": turn}
						if act[i].op < 0 {
							op["op"], op["id"] = "supersede_decision", act[i].id
						}
						ops = append(ops, op)
						act = append(act, active{text: kept, op: len(ops) - 1, turn: turn})
						rej := map[string]any{"op": "reject_alternative", "text": it.text, "turn": turn}
						if it.why != "" {
							rej["reason"] = it.why
						}
						ops = append(ops, rej)
						continue
					}
					if act[i].op < 0 {
						ops = append(ops, map[string]any{"op": "reject_decision", "id": act[i].id, "turn": turn})
					}
				}
				continue
			}
			op := map[string]any{"op": "reject_alternative", "text": it.text, "turn": turn}
			if it.why != "" {
				op["reason"] = it.why
			}
			ops = append(ops, op)
		case "lift":
			// Read by updateRules, which lifts the rules against it; it
			// never leaves the extractor.
			o := map[string]any{"op": liftOp, "text": it.text, "turn": turn}
			if it.about {
				o[liftAbout] = true
			}
			ops = append(ops, o)
		case "constraint":
			o := map[string]any{"op": "add_constraint", "text": it.text, "turn": turn}
			if it.update {
				o[updateOnly] = true
			}
			ops = append(ops, o)
		case "plan":
			steps := make([]map[string]any, len(it.steps))
			for i, s := range it.steps {
				steps[i] = map[string]any{"text": s, "status": "pending"}
			}
			ops = append(ops, map[string]any{"op": "set_plan", "steps": steps, "status": "accepted", "source": "conversation", "turn": turn})
		}
	}
	if len(retired) == 0 {
		return ops, act
	}
	kept := make([]active, 0, len(act)-len(retired))
	for i, a := range act {
		if !retired[i] {
			kept = append(kept, a)
		}
	}
	return ops, kept
}

var versionLike = mustPattern(`^v?\d|^(?:version|release|mvp|beta|alpha|launch|now|later|before|today|tomorrow)$`)

// toolName reports an alternative said as one lower-case word that is
// no pronoun ("from kue to BullMQ"): a tool the vocabulary does not know,
// still named.
func toolName(old string) bool {
	f := strings.Fields(old)
	if len(f) == 2 && (f[0] == "a" || f[0] == "an" || f[0] == "the") {
		f = f[1:] // "instead of a daemon"
	}
	if len(f) != 1 {
		return false
	}
	w := lower(bare(f[0]))
	return len(w) > 1 && !versionLike.MatchString(w) && !pronounLead.MatchString(w) && !slices.Contains([]string{"them", "those", "these", "one"}, w)
}

// userTurn is one user message of the prepared transcript: its local
// number (the "N" of "mN") and its text.
type userTurn struct {
	n    int
	text string
	prev string // the assistant's message just before it, if any
}

var (
	markerTurn      = mustPattern(`^\[m(\d+) user\] ?(.*)$`)
	markerAssistant = mustPattern(`^\[m\d+ assistant\] ?(.*)$`)
)

// fineAfterAll reads "ok Docker is fine actually" as taking the option
// the capsule lists as turned down: said of a name the reader does not
// know, "X is fine" is only a choice when X was turned down before.
func fineAfterAll(text string, rejected []capsule.Rejected, content contentWords) []item {
	t := strings.TrimRight(strings.TrimSpace(text), ".! ")
	m := fineWith.FindStringSubmatchIndex(lower(t))
	if m == nil {
		return nil
	}
	subject := t[m[2]:m[3]]
	said := chosenWords(subject)
	for _, r := range rejected {
		if ws := content.of(r.Text); len(ws) > 0 && len(ws) <= 3 && namesAll(said, ws) && len(said) <= len(ws)+1 {
			// Taken back, not replacing the newest choice; with what it
			// is for, when said ("XML is needed after all for one legacy
			// client").
			return []item{{kind: "decision", text: "Use " + subject + strings.TrimSuffix(t[m[4]:m[5]], " for now")}}
		}
	}
	return nil
}

// keptBy reports whether text names every option of a as one that stays
// ("let's use Mongo for the event log, Postgres stays for everything
// else").
func keptBy(a active, text string) bool {
	cs := a.reading().choices
	if len(cs) == 0 {
		return false
	}
	lt := lower(text)
	if keptPart(a, lt) {
		return true
	}
	for _, c := range cs {
		if !slices.ContainsFunc(shortNames(c), func(n string) bool {
			return strings.Contains(lt, n+" stays") || strings.Contains(lt, n+" remains")
		}) {
			return false
		}
	}
	return true
}

// pickedBeside returns items with, first, the option reply (a reading
// of the turn as the answer to the assistant's question) picks, when the
// turn's own reading only turned something down beside it ("env vars, no
// yaml files" to "YAML files or env vars?"). A pick that is itself a
// turn-down, or names what the items turn down, adds nothing.
func pickedBeside(items, reply []item) []item {
	if len(reply) != 1 || reply[0].kind != "decision" || slices.ContainsFunc(items, func(it item) bool { return it.kind != "reject" }) {
		return items
	}
	d := reply[0]
	low := lower(d.text)
	if turnDown.MatchString(low) || slices.ContainsFunc(items, func(it item) bool { return strings.Contains(low, lower(it.text)) }) {
		return items
	}
	if slices.ContainsFunc(items, func(it item) bool { return strings.Contains(lower(d.why), lower(it.text)) }) {
		d.why = "" // the clause that turned the other down, not a reason
	}
	return append([]item{d}, items...)
}

// picksByNumber reports whether text opens with an option's number or
// letter before a comma or a sentence's end ("2, and make the window
// configurable", "2. Make the window configurable").
func picksByNumber(text string) bool {
	lt := lower(strings.TrimSpace(text))
	i := pickEnd(lt)
	return i > 0 && pickNumber.MatchString(lt[:i])
}

// turnDown: a clause that opens by turning something down.
var turnDown = mustPattern(`^(?:no|not|never|don'?t|do not|without|skip|nothing)\b`)

// otherJudged returns the turn-downs of reply (a reading of the turn as
// the answer to the assistant's question) that the turn's own items do
// not name, when reply takes the same decision the items do.
func otherJudged(items, reply []item) []item {
	var out []item
	for _, it := range reply {
		if it.kind != "reject" || !slices.ContainsFunc(reply, func(d item) bool {
			return d.kind == "decision" && slices.ContainsFunc(items, func(o item) bool { return o.kind == "decision" && strings.EqualFold(o.text, d.text) })
		}) {
			continue
		}
		if !slices.ContainsFunc(items, func(o item) bool { return strings.Contains(lower(o.text), lower(it.text)) }) {
			out = append(out, it)
		}
	}
	return out
}

// stillOnly reports whether a rule of the turn keeps a's option for a
// part ("anyhow only in the binary").
func stillOnly(items []item, a active) bool {
	for _, it := range items {
		if it.kind != "constraint" {
			continue
		}
		f := strings.Fields(lower(it.text))
		if len(f) >= 3 && f[1] == "only" && slices.Contains(a.reading().choices, bare(f[0])) {
			return true
		}
	}
	return false
}

// alsoTail: a choice said to extend to one more part ("… for events
// too").
var alsoTail = mustPattern(`\b(?:too|as well)[.!]?$|\balso\b`)

// namesEvery reports whether the options said include every one of cs.
func namesEvery(said, cs []string) bool {
	for _, c := range cs {
		if !slices.Contains(said, c) {
			return false
		}
	}
	return len(cs) > 0
}

// keptPart reports whether lt, a change in lower case, says that what a
// decides stays by a name for it and a word of its part ("JSON output
// stays" of "Use serde_json for the output format").
func keptPart(a active, lt string) bool {
	for _, loc := range staysPhrase.FindAllStringIndex(lt, 4) {
		m := staysPhrase.FindStringSubmatch(lt[loc[0]:loc[1]])
		if m == nil {
			continue
		}
		named, part := false, false
		for _, w := range words(m[1]) {
			if stopWords[w] {
				continue
			}
			for _, c := range a.reading().choices {
				if w == c || strings.Contains(c, w) && len(w) >= 3 {
					named = true
				}
			}
			if a.reading().subject[w] || a.reading().subject[stem(w)] {
				part = true
			}
		}
		if named && part {
			return true
		}
	}
	return false
}

// staysPhrase: what a change says stays as it is ("json output stays").
var staysPhrase = mustPattern(`(?:^|[,;.]\s*|\s)((?:\S+\s+){0,2}\S+)\s+(?:stays|remains|is kept)\b`)

// shortNames returns an option's name and the shorter names it goes by:
// "timescale" for TimescaleDB, "mongo" for MongoDB, "next" for Next.js,
// "postgres" for PostgreSQL.
func shortNames(c string) []string {
	out := []string{c}
	for _, suf := range [...]string{"db", "-db", ".js", "js", "ql"} {
		if short := strings.TrimSuffix(c, suf); short != c && len(short) >= 4 {
			out = append(out, short)
		}
	}
	return out
}

// judgedBeside reads "Audio goes through FMOD. Wwise is overkill for a
// team of three.": a new choice whose reason judges another well-known
// option badly, an option no active decision holds, turns that option
// down with the judgement as its reason. When a decision holds it
// ("Vite it is. Webpack is too slow"), or when the judgement comes first
// ("Jest is too slow; we'll use Vitest"), it stays the reason of the
// choice.
func judgedBeside(items []item, act []active, text string) []item {
	n, looked := len(items), 0
	for i := range n {
		it := &items[i]
		if it.kind != "decision" || it.why == "" || it.change || it.old != "" || praise.MatchString(lower(it.why)) {
			continue
		}
		if looked++; looked > maxJudgedBeside {
			break // a turn built of thousands of choices is not searched for each
		}
		if w := strings.Index(text, it.why); w <= 0 || !hasChoice(text[:w]) {
			continue // "Jest is too slow for this repo; we'll use Vitest": the reason, said first
		}
		opt, because := judgedOption(it.why, it.text)
		if opt == "" || !bareOption(opt) || findChoice(act, nil, opt) >= 0 ||
			slices.ContainsFunc(items[:n], func(o item) bool { return o.kind != "decision" && strings.Contains(lower(o.text), lower(opt)) }) {
			continue
		}
		it.why = ""
		items = append(items, item{kind: "reject", text: opt, why: strings.TrimRight(because, ". ")})
	}
	return items
}

// maxJudgedBeside bounds the choices of a turn whose reasons are looked
// up in its text.
const maxJudgedBeside = 16

// praise: a judgement that speaks well of what it judges ("XGBoost was
// fine but …"), which turns nothing down.
var praise = mustPattern(`\b(?:fine|good|great|ok|okay|nice|solid|enough|better|simpler|easier|faster|cheaper)\b`)

// userTurns reads the user's messages out of the prepared transcript:
// "[mN user] …" lines and their indented continuation lines.
func userTurns(in Input) []userTurn {
	_, transcript, _ := strings.Cut(in.Text, "<transcript>")
	var turns []userTurn
	cur := -1
	var asst *strings.Builder // the assistant message being read
	prev := ""
	for _, l := range strings.Split(transcript, "\n") {
		if m := markerTurn.FindStringSubmatch(l); m != nil && in.Users["m"+m[1]] {
			n, _ := strconv.Atoi(m[1])
			if asst != nil {
				prev, asst = asst.String(), nil
			}
			turns = append(turns, userTurn{n, m[2], prev})
			cur, prev = len(turns)-1, ""
			continue
		}
		switch {
		case strings.HasPrefix(l, "[m"):
			cur = -1 // another speaker's message
			asst = nil
			if m := markerAssistant.FindStringSubmatch(l); m != nil {
				asst = &strings.Builder{}
				asst.WriteString(m[1])
			}
		case cur >= 0 && strings.HasPrefix(l, "  "):
			turns[cur].text += "\n" + l[2:]
		case asst != nil && strings.HasPrefix(l, "  "):
			asst.WriteString("\n" + l[2:])
		}
	}
	return turns
}

// judgedUnheld returns the option the reason of a change judges by its
// name when no active decision holds it ("victory-native is heavy, use
// react-native-svg-charts instead" when victory-native was never
// recorded): what the change replaces is that option, not the newest
// decision. "" for any other reason.
func judgedUnheld(why string, act []active, retired map[int]bool) string {
	if !judgement.MatchString(lower(why)) {
		return ""
	}
	m := judgedName.FindStringSubmatch(why)
	if m == nil {
		return ""
	}
	w := m[1]
	first := strings.Fields(w)[0] // a name, not a description ("the flaky stripe mock")
	if len(strings.Fields(w)) > 3 || !namedOrPackage(first) || findChoice(act, retired, w) >= 0 {
		return ""
	}
	return w
}

// judgedName: what a judgement is said of ("victory-native" of
// "victory-native is heavy", "Great Expectations" of "Great Expectations
// is overkill for us").
var judgedName = mustPattern(`^(?i:actually\s+)?(?i:the\s+)?([\w.\-+#]+(?:\s+[\w.\-+#]+){0,2}?)(?:'s|’s)?\s+(?i:is|are|was|were|feels|seems|looks|sounds|gets|got)\s`)

// namedOrPackage reports whether s names an option: a name (isNamed) or
// a package name that cannot be an English word ("victory-native",
// "date-fns", "socket.io").
func namedOrPackage(s string) bool {
	return isNamed(s) || packageName(s) && strings.ContainsAny(s, "-.")
}
