package extract

import (
	"regexp"
	"strings"
)

// Numbered answers to numbered questions: an agent asks "1. Should I use
// Django REST Framework or Django Ninja? 2. … 3. Should I add Sentry
// now?" and the user answers "1. ninja / 2. subdomain / 3. not yet, after
// the beta". Each answer is read against its own question: the option of
// the question it names, or a yes or a no to what the question proposes.

var (
	// numberedQuestion is one question of an assistant's message, by its
	// number.
	numberedQuestion = regexp.MustCompile(`(?:^|\s)(\d{1,2})[.)]\s+([^?\n]{3,200}\?)`)
	// numberedAnswer is one line of the reply.
	numberedAnswer = mustPattern(`^\s*(\d{1,2})[.):]\s*(\S.*?)\s*$`)
	// askLead: how a question puts what it proposes ("Should I use …",
	// "Do you want …").
	askLead = mustPattern(`^(?:should|shall|can|could)\s+(?:i|we)\s+|^(?:do|would)\s+you\s+(?:want|like|prefer)\s+(?:me\s+|us\s+)?(?:to\s+)?|^(?:is|are)\s+`)
	// useLead: the verb of a question that picks an option.
	useLead = mustPattern(`^(?:use|go with|pick|choose|adopt|have)\s+`)
	// answerYes and answerNo: an answer to a yes/no question.
	answerYes = mustPattern(`^(?:yes|yeah|yep|sure|ok|okay|please|please do|do it|go ahead|definitely|absolutely)\b[\s,.!—–-]*(.*)$`)
	answerNo  = mustPattern(`^(?:no|nope|nah|not yet|not now|not for now|skip(?: it| that)?|later|don'?t|leave it(?: out)?)\b[\s,.!—–-]*(.*)$`)
	// actionTail: when a question's action is to happen, not what it is.
	actionTail = mustPattern(`\s+(?:now|for now|yet|right away|too|as well|already|first|here)$`)
	// actionVerb: the verb of a question's action ("add Sentry").
	actionVerb = mustPattern(`^(?:add|set up|setup|include|install|enable|use|write|create|introduce|wire up|build|support|turn on)\s+`)
)

// numberedAnswers reads a reply of numbered answers to the numbered
// questions of prev, or returns nil when the reply is not that (fewer
// than two answers, or one whose number no question has).
func numberedAnswers(reply, prev string) []item {
	reply = strings.TrimSpace(unwrapArgs(reply))
	if first, _, _ := strings.Cut(reply, "\n"); prev == "" || !numberedAnswer.MatchString(first) {
		return nil // the common case, before prev is read
	}
	qs := map[string]string{}
	for _, m := range numberedQuestion.FindAllStringSubmatch(prev, 20) {
		qs[m[1]] = strings.TrimSpace(m[2])
	}
	if len(qs) < 2 {
		return nil
	}
	var out []item
	answers := 0
	for _, l := range strings.Split(reply, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		m := numberedAnswer.FindStringSubmatch(l)
		if m == nil {
			return nil
		}
		q, ok := qs[m[1]]
		if !ok {
			return nil
		}
		answers++
		out = append(out, answerTo(q, strings.TrimRight(m[2], ". "))...)
	}
	if answers < 2 {
		return nil
	}
	return out
}

// answerTo reads one answer a to question q.
func answerTo(q, a string) []item {
	la := lower(a)
	if questionLead.MatchString(la) || strings.HasSuffix(la, "?") || hedge.MatchString(la) {
		return nil // a question back, or not decided yet
	}
	ask := strings.TrimSpace(strings.TrimSuffix(q, "?"))
	ask = ask[len(askLead.FindString(lower(ask))):]
	opts := optionSep.Split(strings.TrimSpace(ask[len(useLead.FindString(lower(ask))):]), -1)
	if len(opts) >= 2 {
		// "X or Y?": the option the answer names.
		for _, w := range words(la) {
			if len(w) < 3 || stopWords[w] {
				continue
			}
			for _, o := range opts {
				if strings.Contains(" "+lower(o)+" ", " "+w+" ") || strings.Contains(lower(o), w) && len(w) >= 5 {
					return []item{{kind: "decision", text: optionDecision(o), why: answerWhy(a, w)}}
				}
			}
		}
		return nil
	}
	if m := answerNo.FindStringSubmatch(la); m != nil {
		// "Should I add Sentry now?" "not yet, after the beta".
		obj := actionTail.ReplaceAllString(ask, "")
		obj = obj[len(actionVerb.FindString(lower(obj))):]
		if !hasContent(obj) {
			return nil
		}
		return []item{{kind: "reject", text: obj, why: strings.TrimSpace(a[len(a)-len(m[1]):])}}
	}
	if m := answerYes.FindStringSubmatch(la); m != nil {
		act := actionTail.ReplaceAllString(ask, "")
		if !hasContent(act) {
			return nil
		}
		return []item{{kind: "decision", text: capitalise(act), why: strings.TrimSpace(a[len(a)-len(m[1]):])}}
	}
	return nil
}

// optionDecision is the decision of picking option o of a question: "Use
// Django Ninja" for a name, the option as said otherwise ("The tenant
// resolved from the subdomain").
func optionDecision(o string) string {
	o = strings.TrimSpace(strings.TrimRight(o, ".,"))
	if len(strings.Fields(o)) <= 3 && isNamed(o) {
		return "Use " + o
	}
	return capitalise(o)
}

// answerWhy is what an answer says besides the word that picked the
// option: "ninja, it's faster" gives "it's faster".
func answerWhy(a, picked string) string {
	if i := strings.IndexAny(a, ",;—"); i > 0 && strings.Contains(lower(a[:i]), picked) {
		return strings.TrimSpace(strings.TrimLeft(a[i:], ",;— "))
	}
	return ""
}
