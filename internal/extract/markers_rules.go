package extract

import (
	"regexp"
	"slices"
	"strings"

	"github.com/tether-dev/tether/internal/capsule"
)

// A rule said again with another amount ("Max 3 retries for the webhook
// sender", later "make it 5 retries for the webhook sender") replaces the
// rule it updates: both kept active would leave the agent two limits for
// one thing, the stale one first.

// activeRule is a constraint in force: one of the capsule's (id set), or
// one added earlier in the same batch (op >= 0).
type activeRule struct {
	id, text string
	op       int
	key      string   // ruleKey's words, made once
	nums     []string // ruleKey's amounts
	head     string   // keptHead, made once
	against  bool     // it keeps something out (ruleAgainst)
}

func newRule(id, text string, op int) activeRule {
	k, n := ruleKey(text)
	return activeRule{id: id, text: text, op: op, key: k, nums: n, head: keptHead(text), against: ruleAgainst.MatchString(lower(text))}
}

// keptHead is what a rule of where or how data is kept is about
// ("timestamps|in" of "All timestamps are stored in UTC" and of "store
// timestamps in local time"); "" for any other rule.
func keptHead(text string) string {
	_, lt := cutActually(text, lower(text))
	m := keptAs.FindStringSubmatch(strings.TrimRight(lt, ".! "))
	if m == nil {
		return ""
	}
	subject, prep := m[1], m[3]
	if subject == "" {
		subject, prep = m[6], m[7]
	}
	var ws []string
	for _, w := range words(subject) {
		if !stopWords[w] {
			ws = append(ws, stem(w))
		}
	}
	return strings.Join(ws, " ") + "|" + prep
}

// rulesOf lists the capsule's active constraints.
func rulesOf(c *capsule.Capsule) []activeRule {
	if c == nil {
		return nil
	}
	var out []activeRule
	for _, k := range c.Constraints {
		if k.Status == capsule.StatusActive {
			out = append(out, newRule(k.ID, k.Text, -1))
		}
	}
	return out
}

// updateOnly marks, between resolve and updateRules, an add_constraint
// op that stands only as the update of an active rule; it never leaves
// the extractor.
const updateOnly = "update_only"

// updateRules turns the add_constraint ops from ops[from:] that restate an
// active rule with other amounts into updates of that rule, and returns
// the ops and the rules in force after them.
func updateRules(ops []map[string]any, from int, rules []activeRule) ([]map[string]any, []activeRule) {
	out := ops[:from]
	var removed []map[string]any
	// retire takes rule k out of force: added earlier in the batch, its op
	// is dropped; the capsule's, it is removed after the turn's ops, whose
	// places the decisions read so far refer to.
	retire := func(k int, turn any) {
		if r := rules[k]; r.op >= 0 {
			out[r.op] = map[string]any{"op": dropOp}
		} else {
			removed = append(removed, map[string]any{"op": "remove_constraint", "id": r.id, "turn": turn})
		}
		rules = slices.Delete(rules, k, k+1)
	}
	retireAll := func(match func(activeRule) bool, turn any) {
		for k := len(rules) - 1; k >= 0 && k >= len(rules)-maxRulesLooked; k-- {
			if match(rules[k]) {
				retire(k, turn)
			}
		}
	}
	for _, o := range ops[from:] {
		if st, _ := o["statement"].(string); o["op"] == "add_decision" && st != "" {
			// "Use 4 spaces for indentation" after the rule "Always use 2
			// spaces for indentation": said as a choice, it replaces the
			// rule, which would otherwise stay in force beside it.
			if amountTo.MatchString(lower(st)) {
				// "raise the retries to 5" after "Max 3 retries per job":
				// the rule's new amount, not a decision beside it.
				if k := updatedRule(rules, st, true); k >= 0 {
					out, rules = newAmountOf(out, rules, k, st, o["turn"])
					continue
				}
			}
			if k := updatedRule(rules, st, false); k >= 0 {
				retire(k, o["turn"])
			}
			if m := usedThing.FindStringSubmatch(lower(st)); m != nil {
				// "Use async for the HTTP calls" after "No async, keep it
				// synchronous": what the rule kept out is chosen now, and
				// the rule goes.
				if key, nums := ruleKey(m[1]); key != "" && len(nums) == 0 {
					retireAll(func(r activeRule) bool { return keepsOut(r, key) }, o["turn"])
				}
			}
			out = append(out, o)
			continue
		}
		text, _ := o["text"].(string)
		if o["op"] == liftOp {
			// "you can use lodash now" after "Never use lodash": the rule
			// against it goes.
			key, _ := ruleKey(text)
			if o[liftAbout] == true {
				retireAll(func(r activeRule) bool { return key != "" && subsetWords(key, r.key) }, o["turn"])
				continue
			}
			retireAll(func(r activeRule) bool { return keepsOut(r, key) }, o["turn"])
			continue
		}
		if o["op"] == "reject_alternative" && text != "" {
			// "No GraphQL after all" after the rule "The API should be
			// GraphQL", "drop the 200ms target" after "Max 200ms p95
			// latency": the rule that asks for what is turned down goes —
			// when what is turned down is named, an amount or a rule
			// ("No tests for now" says nothing of "All tests must pass").
			lt := lower(text)
			if key, nums := ruleKey(ruleNoun.ReplaceAllString(lt, "")); len(nums) > 0 || isNamed(text) || ruleNoun.MatchString(lt) {
				retireAll(func(r activeRule) bool { return asksFor(r, key, nums) }, o["turn"])
			}
			out = append(out, o)
			continue
		}
		if o["op"] != "add_constraint" || text == "" {
			out = append(out, o)
			continue
		}
		only := o[updateOnly] == true
		delete(o, updateOnly)
		if inForce(rules, text) {
			// "Max 3 retries per job" said again: the rule in force, which
			// the merge would keep as it is. A second copy of it would
			// stay behind when a later turn updates or lifts the newest
			// ("make it 5 retries" left "Max 3 retries" active too).
			continue
		}
		k := updatedRule(rules, text, only)
		if k < 0 {
			if !only {
				rules = append(rules, newRule("", text, len(out)))
				out = append(out, o)
			}
			continue
		}
		out, rules = newAmountOf(out, rules, k, text, o["turn"])
	}
	return append(out, removed...), rules
}

// newAmountOf gives rule k the amounts said (withAmounts): added earlier
// in the batch, its op says them now; the capsule's, it is superseded.
func newAmountOf(out []map[string]any, rules []activeRule, k int, said string, turn any) ([]map[string]any, []activeRule) {
	text := withAmounts(rules[k].text, said)
	if r := rules[k]; r.op >= 0 {
		out[r.op]["text"] = text
		rules[k] = newRule("", text, r.op)
		return out, rules
	}
	out = append(out, map[string]any{"op": "supersede_constraint", "id": rules[k].id, "text": text, "turn": turn})
	rules[k] = newRule("", text, len(out)-1)
	return out, rules
}

// inForce reports whether one of the newest rules in force (as many as
// updatedRule looks at) says text, word for word.
func inForce(rules []activeRule, text string) bool {
	return slices.ContainsFunc(rules[max(len(rules)-maxRulesLooked, 0):], func(r activeRule) bool { return strings.EqualFold(r.text, text) })
}

// updatedRule returns the index of the rule text updates (the same words
// about the same thing, other amounts), or -1. A new amount said of "it"
// (loose: "bump it to 60 seconds") updates the newest rule whose words
// hold all of its own.
func updatedRule(rules []activeRule, text string, loose bool) int {
	if head := keptHead(text); head != "" {
		// "timestamps are stored in local time" after "… in UTC".
		for i := len(rules) - 1; i >= 0 && i >= len(rules)-maxRulesLooked; i-- {
			if rules[i].head == head && !strings.EqualFold(rules[i].text, text) {
				return i
			}
		}
	}
	key, nums := ruleKey(text)
	if loose && key == "" && len(nums) == 1 {
		// "raise that to 300": the newest rule of one amount.
		for i := len(rules) - 1; i >= 0 && i >= len(rules)-maxRulesLooked; i-- {
			if n := rules[i].nums; len(n) == 1 && n[0] != nums[0] {
				return i
			}
		}
		return -1
	}
	if len(nums) == 0 || key == "" {
		return -1
	}
	for i := len(rules) - 1; i >= 0 && i >= len(rules)-maxRulesLooked; i-- {
		k, n := rules[i].key, rules[i].nums
		if len(n) != len(nums) || strings.Join(n, " ") == strings.Join(nums, " ") {
			continue
		}
		if k == key || loose && subsetWords(key, k) {
			return i
		}
	}
	return -1
}

// maxRulesLooked bounds the rules a new one is compared with, the newest
// first, so that a turn made of thousands of rules is not compared pair
// by pair.
const maxRulesLooked = 64

// subsetWords reports whether every word of a is a word of b.
func subsetWords(a, b string) bool {
	have := map[string]bool{}
	for _, w := range strings.Fields(b) {
		have[w] = true
	}
	for _, w := range strings.Fields(a) {
		if !have[w] {
			return false
		}
	}
	return true
}

// ruleKey is what a rule says less its amounts and its limit words, and
// the amounts.
func ruleKey(text string) (string, []string) {
	var key, nums []string
	for _, w := range words(text) {
		switch {
		case amountWord.MatchString(w):
			nums = append(nums, w)
		case stopWords[w] || limitLead[w]:
		default:
			key = append(key, stem(w))
		}
	}
	return strings.Join(key, " "), nums
}

var (
	amountWord = regexp.MustCompile(`^\d[\d.,]*[a-z%]{0,3}$`)
	limitLead  = map[string]bool{"max": true, "maximum": true, "min": true, "minimum": true, "cap": true, "capped": true, "limit": true,
		"make": true, "set": true, "change": true, "bump": true, "raise": true, "lower": true, "up": true, "most": true, "least": true,
		"increase": true, "reduce": true, "decrease": true, "cut": true, "down": true}
)

// withAmounts is the old rule's words with the new rule's amounts, when
// both have one amount ("Max 3 retries for the webhook sender" made "5"),
// else the new rule as said.
func withAmounts(old, said string) string {
	_, on := ruleKey(old)
	_, sn := ruleKey(said)
	if len(on) != 1 || len(sn) != 1 {
		return said
	}
	i := strings.Index(lower(old), on[0])
	if i < 0 || !strings.EqualFold(old[i:i+len(on[0])], on[0]) {
		return said
	}
	return old[:i] + sn[0] + countNoun(old[i+len(on[0]):], sn[0] == "1")
}

// countNoun is rest, the text after an amount, with the unit word that
// opens it made singular after "1" ("1 minute") and plural after another
// amount ("5 minutes").
func countNoun(rest string, one bool) string {
	if !strings.HasPrefix(rest, " ") {
		return rest
	}
	unit, tail, _ := strings.Cut(rest[1:], " ")
	if tail != "" || strings.HasSuffix(rest, " ") {
		tail = " " + tail
	}
	sing := strings.TrimSuffix(unit, "s")
	if strings.HasSuffix(unit, "ies") {
		sing = strings.TrimSuffix(unit, "ies") + "y"
	}
	if !countUnits[lower(sing)] {
		return rest
	}
	if one {
		return " " + sing + tail
	}
	if n := len(sing); sing[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(sing[n-2])) {
		return " " + sing[:n-1] + "ies" + tail // "retry", "retries"
	}
	return " " + sing + "s" + tail
}

// countUnits are units said after an amount, singular.
var countUnits = map[string]bool{"second": true, "minute": true, "hour": true, "day": true, "week": true, "month": true,
	"retry": true, "attempt": true, "replica": true, "worker": true, "connection": true, "request": true, "call": true}

// asksFor reports whether rule r asks for the option rejected names, by
// the words and amounts of the option (ruleKey, the words naming a rule
// itself left out): the rule holds all of the option's words (its
// amount, for an amount), and keeps nothing out. "200ms target" is asked
// for by "Max 200ms p95 latency" (the amount is what the rule is about);
// "GraphQL" by "The API should be GraphQL", not by "Never use GraphQL".
func asksFor(r activeRule, key string, nums []string) bool {
	if r.against {
		return false
	}
	if len(nums) > 0 {
		for _, n := range nums {
			if !slices.Contains(r.nums, n) {
				return false
			}
		}
		return true
	}
	return key != "" && subsetWords(key, r.key)
}

// usedThing: what a decision uses, a word or two ("async" of "Use async
// for the HTTP calls").
var usedThing = regexp.MustCompile(`^use\s+([\w.+#\-]+(?:\s[\w.+#\-]+)?)(?:\s+(?:for|in|on|with)\s+.*)?$`)

// keepsOut reports whether rule r keeps out what is allowed, by its words
// (ruleKey): a rule against something ("Never use lodash", "Don't add new
// dependencies without asking") that holds all of them.
func keepsOut(r activeRule, key string) bool {
	return r.against && key != "" && subsetWords(key, r.key)
}

// ruleNoun: words that name a rule itself ("the coverage requirement"),
// not what it is about.
var ruleNoun = regexp.MustCompile(`\b(?:requirements?|rules?|limits?|targets?|constraints?|polic(?:y|ies)|caps?|minimums?|maximums?)\b`)

// ruleAgainst: a rule that keeps something out, which a rejection agrees
// with.
var ruleAgainst = regexp.MustCompile(`\b(?:no|not|never|don'?t|do not|avoid|without|nothing|forbid|forbidden|ban|banned|disallow|stop|drop|remove|n'?t)\b`)
