package extract

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// acceptance is a short reply that settles what the assistant just
// proposed ("Sounds good, go ahead", "Yes, let's do that", "LGTM").
var acceptance = mustPattern(`^(?:(?:yes|yep|yeah|ok|okay|sure|great|perfect|sounds good|sounds great|looks good|lgtm|agreed|approved|fine by me|that works|works for me|go ahead|do it|proceed|ship it|let'?s do (?:it|that|this)|do (?:that|this)|go for it|make it so|go|go on|let'?s go|go (?:with|for) (?:it|that|this|your (?:suggestion|recommendation|plan|proposal))|(?:go|proceed) with (?:the|that|this|your) plan|(?:let'?s )?(?:do|go with) what you (?:suggested|recommended|proposed)|your call|please|thanks|thank you)(?:[\s,.!—–-]+|$))+$`)

// recommends finds an assistant's recommendation of one option: "I'd
// recommend PostgreSQL for the database", "I suggest we use NATS".
var recommends = regexp.MustCompile(`(?i)\b(?:i(?:'d| would)? (?:recommend|suggest|propose)|my recommendation is|the best (?:option|choice|fit) (?:here )?is)\s+(?:that\s+)?(?:we\s+)?(?:to\s+)?(?:use|using|go with|going with|adopt|adopting|pick)?\s*([^.;:!?\n]+)`)

// accepts reports whether a user's turn only accepts what came before it.
func accepts(text string) bool {
	t := lower(strings.TrimSpace(unwrapArgs(text)))
	if t == "" || len(strings.Fields(t)) > 12 || strings.ContainsAny(t, "?") {
		return false
	}
	if !acceptance.MatchString(t) {
		return false
	}
	// Thanks alone accepts nothing.
	return strings.TrimSpace(politeness.ReplaceAllString(t, "")) != ""
}

var politeness = regexp.MustCompile(`\b(?:please|thanks|thank you)\b|[\s,.!—–-]+`)

// planCue: the assistant's list is a proposal ("Here's the plan: 1. …"),
// not a report of what it did.
var planCue = regexp.MustCompile(`(?i)\b(?:plan|steps|approach|propos\w*)\b`)

// proposed reads what an assistant message proposes for the user to
// accept: a numbered plan of at least two steps, or the one option it
// recommends (never when it recommends several: the reply would not say
// which).
func proposed(text string) []item {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var steps []string
	for _, l := range strings.Split(text, "\n") {
		if m := stepLine.FindStringSubmatch(l); m != nil {
			steps = append(steps, strings.TrimRight(m[1], ".;"))
		}
	}
	if len(steps) < 2 {
		// "Here's the plan: 1. add the table 2. write the renderer 3. …"
		// on one line.
		if m := inlinePlan.FindStringSubmatchIndex(lower(text)); m != nil {
			if st := splitEnum(strings.TrimSpace(text[m[2]:])); len(st) >= 2 {
				steps = nil
				for _, x := range st {
					steps = append(steps, strings.TrimRight(x, ".;"))
				}
			}
		}
	}
	if len(steps) >= 2 {
		if !planCue.MatchString(text) {
			return nil
		}
		return []item{{kind: "plan", steps: steps}}
	}
	ms := recommends.FindAllStringSubmatch(text, 3)
	if len(ms) != 1 {
		return offeredSwitch(text)
	}
	obj := strings.TrimSpace(ms[0][1])
	if loc := reasonCut.FindStringIndex(obj); loc != nil {
		obj = strings.TrimSpace(obj[:loc[0]])
	}
	if doVerb.MatchString(lower(obj)) {
		// "I'd suggest we add exponential backoff to the API client": a
		// change proposed in the words of a task.
		if len(strings.Fields(obj)) <= 14 && !hedge.MatchString(lower(obj)) {
			return []item{{kind: "decision", text: capitalise(obj)}}
		}
		return nil
	}
	if !isNamed(obj) || len(strings.Fields(obj)) > 8 {
		return nil
	}
	return []item{{kind: "decision", text: "Use " + obj}}
}

// offeredSwitch reads the assistant's closing offer to move a part to a
// named option ("Should I switch the ORM to Drizzle as discussed?", "I'll
// move the jobs to Temporal."): what a yes to it settles. nil for any
// other last sentence: an offer to run the tests is not a decision.
func offeredSwitch(text string) []item {
	text = strings.TrimSpace(text)
	if i := lastSentenceStart(text); i > 0 {
		text = text[i:]
	}
	m := offerTask.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	task := strings.TrimSpace(offerTail.ReplaceAllString(strings.TrimRight(m[1], ".?! "), ""))
	if sw := switchObject.FindStringSubmatch(task); sw == nil || !isNamed(sw[1]) || len(strings.Fields(task)) > 12 || hedge.MatchString(lower(task)) {
		return nil
	}
	return []item{{kind: "decision", text: capitalise(task), change: true}}
}

// offerTask: the task of an offer said as the message's last sentence;
// offerTail: words after it that are not part of it.
var (
	offerTask = mustPattern(`^(?i:should i|shall i|do you want me to|want me to|i'?ll|i will|i'?m going to|i can)\s+(.{3,120})$`)
	offerTail = mustPattern(`(?i)\s+(?:as discussed|as we discussed|as agreed|then|now|next|for you|right away)$`)
)

// inlinePlan: a plan whose numbered steps follow its cue on one line.
var inlinePlan = mustPattern(`\b(?:plan|steps|approach)\s*(?:is|would be|will be)?\s*:?\s*((?:1[.)])\s+.+)$`)

// notYetAll: a reply that holds the whole plan back ("but wait until
// Monday", "but check with Ana first").
var notYetAll = mustPattern(`\b(?:wait|hold|check with|ask|run it by|first let me|before you start|don'?t start)\b`)

// acceptBut: a plan accepted with a change ("sounds good, but do 3
// before 2", "yes, and add a step to verify the counts").
var acceptBut = mustPattern(`^(?:yes|yep|yeah|yup|ok|okay|sure|sounds good|looks good|lgtm|sgtm|great|perfect|good plan|fine|go ahead|go for it|do it|let'?s do it|approved|works for me|makes sense|that works|agreed|alright)\s*(?:[,.!—–-]+\s*(?:(?:but|and|except|though)\s+)?|\s+(?:but|and|except|though)\s+)(\S.*)$`)

// Changes to a plan accepted with them.
var (
	stepBefore = mustPattern(`^(?:do|start with|put)\s+(?:step\s+)?(\d{1,2})\s+(?:before|ahead of)\s+(?:step\s+)?(\d{1,2})$`)
	// "do tests before the handlers": steps named by their words.
	stepBeforeNamed = mustPattern(`^(?:do|start with|put|write|add)\s+(?:the\s+)?(.{2,40}?)\s+(?:before|ahead of)\s+(?:the\s+)?(.{2,40}?)$`)
	// "skip step 2", "drop the tests step": a step left out.
	stepSkip   = mustPattern(`^(?:skip|drop|remove|leave out|cut|no need for|without|except(?:\s+for)?|minus)\s+(?:(?:step\s+|#)?(\d{1,2})|(?:the\s+)?(.{2,40}?)(?:\s+step)?)$`)
	stepAdd    = mustPattern(`^add\s+(?:a|one more|another)\s+step\s+(?:to|that|for|where we)\s+(.+?)(?:\s+(?:after|before)\s+(?:the\s+|step\s+)?(.+))?$`)
	stepNotYet = mustPattern(`^(?:don'?t|do not|no need to)\s+(.+?)\s+(?:yet|for now|right away|in this pass)\b`)
)

// moveBefore moves step a (1-based) to where step b is, b < a.
func moveBefore(steps []string, a, b int) []string {
	st := steps[a-1]
	return slices.Insert(slices.Delete(steps, a-1, a), b-1, st)
}

// maxPlanChanges bounds the parts of a reply read as changes to a plan.
const maxPlanChanges = 16

// planAccepted reads a reply that accepts a proposed plan with changes:
// the plan as changed, and what else the reply settles. nil when the
// reply is no such acceptance or the assistant proposed no plan.
func planAccepted(reply, prev string) []item {
	t := strings.TrimSpace(unwrapArgs(reply))
	m := acceptBut.FindStringSubmatchIndex(lower(t))
	if m == nil {
		return nil
	}
	if lr := lower(t[m[2]:]); hedge.MatchString(lr) || notYetAll.MatchString(lr) {
		return nil // "sounds good, but I need to check with the team first"
	}
	prop := proposed(prev)
	if len(prop) != 1 || prop[0].kind != "plan" {
		return nil
	}
	steps := slices.Clone(prop[0].steps)
	var rest []item
	// A reply names a few changes; what follows the sixteenth comma is
	// read as one part, as any sentence is, so a reply made of thousands
	// of parts is not read part by part.
	var parts []string
	for _, part := range strings.SplitN(strings.TrimRight(t[m[2]:], ".! "), ", ", maxPlanChanges) {
		parts = append(parts, andParts(part, maxPlanChanges-len(parts))...)
	}
	for _, part := range parts {
		lp := lower(strings.TrimSpace(part))
		switch {
		case stepBefore.MatchString(lp):
			sm := stepBefore.FindStringSubmatch(lp)
			a, _ := strconv.Atoi(sm[1])
			b, _ := strconv.Atoi(sm[2])
			if a >= 1 && b >= 1 && a <= len(steps) && b <= len(steps) && a > b {
				steps = moveBefore(steps, a, b)
			}
		case stepBeforeNamed.MatchString(lp):
			sm := stepBeforeNamed.FindStringSubmatch(lp)
			ps := planSteps{steps: steps}
			if a, b := ps.find(sm[1]), ps.find(sm[2]); a > 0 && b > 0 && a > b {
				steps = moveBefore(steps, a, b)
			} else if a == 0 || b == 0 {
				rest = append(rest, readTurn(part)...)
			}
		case stepSkip.MatchString(lp):
			sm := stepSkip.FindStringSubmatch(lp)
			ref := sm[1]
			if ref == "" {
				ref = sm[2]
			}
			if k := (planSteps{steps: steps}).find(ref); k > 0 && len(steps) > 1 {
				steps = slices.Delete(steps, k-1, k)
			} else {
				rest = append(rest, readTurn(part)...)
			}
		case stepAdd.MatchString(lp):
			sm := stepAdd.FindStringSubmatchIndex(lp)
			step := strings.TrimSpace(part[sm[2]:sm[3]])
			at := len(steps)
			if sm[4] >= 0 {
				if k := (planSteps{steps: steps}).find(lp[sm[4]:sm[5]]); k > 0 {
					at = k
					if strings.Contains(lp[sm[3]:sm[4]], "before") {
						at = k - 1
					}
				}
			}
			steps = slices.Insert(steps, at, step)
		case stepNotYet.MatchString(lp):
			sm := stepNotYet.FindStringSubmatchIndex(lp)
			rest = append(rest, item{kind: "skip", text: strings.TrimSpace(part[sm[2]:sm[3]])})
		default:
			rest = append(rest, readTurn(part)...)
		}
	}
	swapInSteps(steps, rest)
	return append([]item{{kind: "plan", steps: steps}}, rest...)
}

// swapInSteps rewrites the accepted steps that name an option the reply
// turns down for another it chooses in the same breath ("yes, but alerts
// go to PagerDuty not Slack": "Alerts to Slack" becomes "Alerts to
// PagerDuty"), so the plan never asks for what the block rejects.
func swapInSteps(steps []string, items []item) {
	for _, d := range items {
		if d.kind != "decision" {
			continue
		}
		// What the decision turns down: its old option, or one the reply
		// rejects that the decision names.
		gone := d.old
		if gone == "" {
			for _, rj := range items {
				if rj.kind == "reject" && strings.Contains(lower(d.text), lower(rj.text)) {
					gone = rj.text
					break
				}
			}
		}
		if gone == "" || !isNamed(gone) || strings.Contains(gone, " ") {
			continue
		}
		var with string
		for _, c := range choices(d.text) {
			if c != lower(gone) && !amountWord.MatchString(c) {
				with = spelled(d.text, c)
				break
			}
		}
		if with == "" {
			continue
		}
		for k, st := range steps {
			if i := wordAt(lower(st), lower(gone)); i >= 0 {
				steps[k] = st[:i] + with + st[i+len(gone):]
			}
		}
	}
}

// wordAt returns the offset of w in s as a whole word (not within
// another: "go" is not in "Google"), or -1.
func wordAt(s, w string) int {
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		if (i == 0 || !wordBytes[s[i-1]]) && (i+len(w) == len(s) || !wordBytes[s[i+len(w)]]) {
			return i
		}
		from = i + 1
	}
	return -1
}

// andCommand: "and" (or "then") joining a second change to a reply's
// part ("skip the tests and use Vitest").
var andCommand = mustPattern(`\s+(?:and then|and|then)\s+((?:use|skip|drop|add|switch|move|keep|do|put|write|make|remove|leave out|cut|go with)\s)`)

// andParts splits a part of a reply into the changes "and" joins
// ("skip the tests and use Vitest": "skip the tests", "use Vitest"), at
// most n+1 of them (the reply's parts stay bounded however it is split).
func andParts(part string, n int) []string {
	var out []string
	for len(out) < n {
		m := andCommand.FindStringSubmatchIndex(lower(part))
		if m == nil {
			break
		}
		out = append(out, part[:m[0]])
		part = part[m[2]:]
	}
	return append(out, part)
}

// doVerb opens a change proposed as a task.
var doVerb = mustPattern(`^(?:add|adding|switch|switching|move|moving|split|splitting|cache|caching|store|storing|retry|retrying|wrap|wrapping|rename|renaming|extract|extracting|introduce|introducing|enable|enabling|disable|disabling|limit|limiting|cap|capping|paginate|paginating|index|indexing|batch|batching|migrate|migrating|replace|replacing|keep|keeping|drop|dropping|put|putting|run|running|validate|validating|return|returning|pin|pinning)\s+\S`)

// yesReply: a yes followed by how ("yes, cursor-based, 500 rows per page
// max").
var yesReply = mustPattern(`^(?:yes|yep|yeah|yup|sure|ok|okay|please do|sounds good)\s*[,:—–-]+\s*(\S.*)$`)

// notHow opens what a yes goes on to that is not how: more work, thanks.
var notHow = mustPattern(`^(?:and|also|but|then|please|thanks|thank you|go ahead|do it|sure|ok|okay)\b`)

// limitPart: a part of a reply that sets a bound.
var limitPart = mustPattern(`\d.*\b(?:max|maximum|at most|tops|limit|cap)\b|\b(?:max|maximum|at most|up to|no more than|capped at|limit of|cap of)\s+\d`)

// askedYes: a yes-or-no question of the assistant, as the task it asks
// about ("Should I add retries to the webhook sender?": "add retries to
// the webhook sender").
var askedYes = mustPattern(`(?:^|[.!]\s+)(?:should|shall|can|do you want|would you like|want)\s+(?:i|we|me|us|you)?\s*(?:to\s+)?([^?.!]{3,90})\?\s*$`)

// yesHow reads a yes to the assistant's yes-or-no question that goes on
// to say how: the question's task with how, a decision, and each bound
// said, a constraint.
func yesHow(reply, prev string) []item {
	t := strings.TrimSpace(unwrapArgs(reply))
	m := yesReply.FindStringSubmatch(lower(t))
	if m == nil || accepts(t) {
		return nil // a yes, and nothing of how: leave to accepts
	}
	prev = strings.TrimSpace(prev)
	q := askedYes.FindStringSubmatchIndex(lower(prev))
	if m == nil || q == nil || len(strings.Fields(t)) > 25 || strings.ContainsAny(t, "?\n") {
		return nil
	}
	task := strings.TrimSpace(prev[q[2]:q[3]])
	how := strings.TrimRight(t[len(t)-len(m[1]):], ".! ")
	if hedge.MatchString(lower(how)) || questionLead.MatchString(lower(how)) || notHow.MatchString(lower(how)) {
		return nil // "yes, and also fix the typo": more work, not how
	}
	var out []item
	var said []string
	for _, p := range strings.Split(how, ", ") {
		if limitPart.MatchString(lower(p)) {
			out = append(out, item{kind: "constraint", text: capitalise(p)})
		} else {
			said = append(said, p)
		}
	}
	if len(said) > 0 {
		out = append([]item{{kind: "decision", text: capitalise(task) + ": " + strings.Join(said, ", ")}}, out...)
	}
	return out
}

// stepLine is an enumerated line of a proposed plan ("1. …", "2) …",
// "(3) …", "a) …").
var stepLine = mustPattern(`^\s*(?:\d{1,2}[.)]|\([a-z\d]\)|[a-h]\))\s+(.+?)\s*$`)

// reasonCut ends a recommended option where its reason starts.
var reasonCut = mustPattern(`(?i)(?:,|\s+(?:because|since|as|so that|which|given|due to)\b)`)

// asksChoice: the assistant's message ends by asking the user to pick
// ("Which do you prefer?", "Should I stream them or load them first?").
var asksChoice = mustPattern(`(?:\bwhich\b|\beither\b|\bor\b|\bprefer\b)[^?]*\?\s*$`)

// inlineOption is an option numbered or lettered inside a sentence: "(1)
// stream rows through a generator or (2) load each file into memory
// first", "A) self-managed Postgres on EC2, B) RDS Postgres".
var inlineOption = regexp.MustCompile(`(?:\(([1-9A-Da-d])\)|(?:^|[\s,;])([1-9A-D])\))\s+([^()]+?)(?:[,;.]?\s+or\b|[,;]|\.\s|\.$|$)`)

// pickNumber: a reply that names an option by its number or letter
// ("option 2", "(2)", "option B from your list", "the second one").
var pickNumber = mustPattern(`^(?:(?:ok|okay|yes|sure|alright),?\s+)?(?:let'?s go with |go with |i'?ll take |take |let'?s do |pick )?(?:` +
	`(?:option\s+|number\s+)?\(?(\d)\)?|(?:option|choice)\s+\(?([a-d])\)?|(?:the\s+)?(first|second|third|former|latter|last)(?:\s+one|\s+option)?|([a-d]))` +
	`(?:\s+(?:from|in|on) (?:your|the) (?:list|options))?(?:,?\s+(?:please|then))?(?:,\s+(?:the|a|an)\s+[^,;.?]{1,40})?$`)

// picksOption reports whether a reply only names an option by its number
// or letter.
func picksOption(reply string) bool {
	t := strings.TrimSpace(unwrapArgs(reply))
	return len(t) < 80 && pickNumber.MatchString(strings.TrimRight(lower(t), ".! "))
}

var ordinals = map[string]string{"first": "1", "second": "2", "third": "3", "former": "1"}

// listOption is an option of a numbered or lettered list, a line each
// ("1. Redis", "B) **RDS Postgres** — managed"); optionNote is where its
// description begins.
var (
	listOption = regexp.MustCompile(`(?m)^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?([1-9]|[A-D])[.)](?:\*\*)?[ \t]+([^\n]{1,120}?)[ \t]*$`)
	optionNote = regexp.MustCompile(`\s+[—–-]\s+|:\s|\s+\(|,\s`)
)

// labelledOption is an option named by its label in a sentence: "option
// A (Redis streams)", "option 2: a cron job".
var labelledOption = regexp.MustCompile(`(?i)\boption\s+([1-9A-D])\s*(?:\(([^()]{1,60})\)|:\s*([^,;.?()]{1,60}))`)

// questionOptions lists the options prev offers, with their labels:
// numbered or lettered ones, labelled ones, else the two sides of its
// last "X or Y?" ("1" and "2").
func questionOptions(prev string) (keys, texts []string) {
	for _, o := range inlineOption.FindAllStringSubmatch(prev, -1) {
		keys, texts = append(keys, firstNonEmpty(o[1], o[2])), append(texts, strings.TrimSpace(o[3]))
	}
	if len(keys) == 0 {
		// "Options:\n1. Redis\n2. **Memcached** — lighter\n…": a list, one
		// option a line, each cut where its description starts.
		for _, o := range listOption.FindAllStringSubmatch(prev, 10) {
			text := strings.ReplaceAll(o[2], "**", "")
			if loc := optionNote.FindStringIndex(text); loc != nil && loc[0] > 0 {
				text = text[:loc[0]]
			}
			keys, texts = append(keys, o[1]), append(texts, strings.TrimSpace(text))
		}
		if len(keys) < 2 {
			keys, texts = nil, nil
		}
	}
	if len(keys) == 0 {
		for _, o := range labelledOption.FindAllStringSubmatch(prev, -1) {
			keys, texts = append(keys, o[1]), append(texts, strings.TrimSpace(firstNonEmpty(o[2], o[3])))
		}
	}
	if len(keys) > 0 {
		return keys, texts
	}
	q := prev[strings.LastIndexAny(strings.TrimRight(prev, "? "), ".!\n")+1:]
	i := strings.LastIndex(q, " or ")
	if i < 0 {
		return nil, nil
	}
	left, right := strings.Fields(q[:i]), strings.Fields(strings.TrimRight(q[i+4:], "? "))
	if len(left) == 0 || len(right) == 0 {
		return nil, nil
	}
	a, b := strings.Trim(left[len(left)-1], ",;:"), strings.Trim(right[0], ",;:")
	if len(left) > 1 && isNamed(left[len(left)-2]) && !stopWords[lower(left[len(left)-2])] {
		a = left[len(left)-2] + " " + a // "Redis streams"
	}
	if len(right) > 1 && isNamed(right[1]) && !stopWords[lower(right[1])] {
		b = b + " " + strings.Trim(right[1], ",;:") // "NATS JetStream"
	}
	if stopWords[lower(a)] || stopWords[lower(b)] {
		return nil, nil
	}
	return []string{"1", "2"}, []string{a, b}
}

// choiceReply reads a short reply to an assistant's question that offered
// options: the option the reply names by its number, or the reply's first
// clause when it takes up words of the question ("Load into memory, files
// are small" after "… or load each file into memory first? Which do you
// prefer?"), with the rest of the reply as its reason.
func choiceReply(reply, prev string) []item {
	if !strings.HasSuffix(strings.TrimSpace(prev), "?") {
		return nil
	}
	lp := lower(prev)
	if !asksChoice.MatchString(lp) {
		return nil
	}
	t := strings.TrimSpace(unwrapArgs(reply))
	lt := lower(t)
	// A hedge in the choice ("maybe the first") takes nothing; in its
	// reason only a doubt does ("per-entry merge. LWW would silently drop
	// a password" is sure of the merge).
	hedged := hedge.MatchString(lt)
	if loc := replyCut.FindStringIndex(lt); loc != nil && hedged {
		hedged = hedge.MatchString(lt[:loc[0]]) || doubt.MatchString(lt[loc[1]:])
	}
	if t == "" || len(strings.Fields(t)) > 15 || strings.Contains(t, "?") || strings.Contains(t, "\n") ||
		questionLead.MatchString(lt) || hedged || reported.MatchString(lt) || accepts(t) {
		return nil
	}
	lt = strings.TrimRight(lt, ".! ")
	pick, rest := lt, ""
	if i := pickEnd(lt); i > 0 && !pickNumber.MatchString(lt) {
		// "2, and make the window configurable", "2. Make the window
		// configurable": the option, then more.
		pick, rest = lt[:i], strings.TrimSpace(t[i+1:])
	}
	if m := pickNumber.FindStringSubmatch(pick); m != nil {
		k := firstNonEmpty(m[1], m[2], ordinals[m[3]], m[4])
		if lr := lower(rest); strings.HasPrefix(lr, "but ") || strings.Contains(lr, "without ") {
			return nil // "A, but without Turborepo": the option as offered is not what is taken
		}
		keys, texts := questionOptions(prev)
		if (m[3] == "latter" || m[3] == "last") && len(keys) > 0 {
			k = keys[len(keys)-1]
		}
		for j, key := range keys {
			if strings.EqualFold(key, k) {
				text := texts[j]
				if bareOption(text) || !strings.Contains(text, " ") {
					text = "Use " + text // "the first one" of "Postgres or MySQL?"
				}
				out := []item{{kind: "decision", text: capitalise(text)}}
				if rest != "" {
					if more := readTurn(rest); len(more) > 0 {
						out = append(out, more...)
					} else if reasonish.MatchString(lower(rest)) || modalClause.MatchString(lower(rest)) || commentary.MatchString(" "+lower(rest)+" ") || strings.Contains(lower(rest), " knows ") {
						out[0].why = strings.TrimRight(rest, ".! ")
					}
				}
				return out
			}
		}
		return nil
	}
	choice, why := t, ""
	if loc := replyCut.FindStringIndex(t); loc != nil {
		choice, why = t[:loc[0]], strings.TrimSpace(t[loc[1]:])
	}
	for _, w := range words(choice) {
		if !stopWords[w] && (len(w) >= 4 && strings.Contains(lp, w) || len(w) >= 2 && categoryOf[w] != "" && slices.Contains(words(lp), w) ||
			len(words(choice)) == 1 && offersKind(lp, categoryOf[w])) { // "Preact" to "React or plain DOM?"
			why = strings.TrimRight(why, ".! ")
			if bareOption(choice) || len(strings.Fields(choice)) == 1 {
				choice = "Use " + strings.TrimRight(choice, ".! ") // "pnpm": "Use pnpm"; "p-retry": "Use p-retry"
			}
			// "RQ. Celery is overkill for three jobs": the reason judges
			// the other option asked about, which is turned down for it.
			// So is one judged in a later clause ("csv, accountants open
			// them in whatever they use and xlsx files keep breaking their
			// macros").
			for _, c := range append([]string{why}, strings.Split(why, " and ")[1:]...) {
				if other := firstWord(c); other != "" && !strings.EqualFold(other, w) && judgement.MatchString(lower(c)) &&
					slices.Contains(words(lp), lower(bare(other))) && (categoryOf[lower(bare(other))] != "" || categoryOf[strings.TrimSuffix(lower(bare(other)), "s")] != "" || askedBeside(lp, lower(bare(other)))) {
					return []item{{kind: "decision", text: capitalise(choice)}, {kind: "reject", text: bare(other), why: judgedPart(c)}}
				}
			}
			return []item{{kind: "decision", text: capitalise(choice), why: why}}
		}
	}
	return nil
}

// pickEnd returns where a reply's pick ends: its first comma or
// semicolon, else the end of its first sentence; -1 for none.
func pickEnd(lt string) int {
	if i := strings.IndexAny(lt, ",;"); i > 0 {
		return i
	}
	return strings.Index(lt, ". ")
}

// offersKind reports whether the question q names a well-known option of
// category c.
func offersKind(q, c string) bool {
	if c == "" {
		return false
	}
	for _, w := range words(q) {
		if categoryOf[w] == c {
			return true
		}
	}
	return false
}

// askedBeside reports whether the question q offers w as one side of an
// "or" ("lockstep or rollback netcode?"), however unknown its name.
func askedBeside(q, w string) bool {
	return len(w) >= 3 && !stopWords[w] && (strings.Contains(q, " "+w+" or ") || strings.HasPrefix(q, w+" or ") || strings.Contains(q, " or "+w))
}

// judgedPart is what a judgement of an option says of it: "overkill for
// three jobs" of "Celery is overkill for three jobs".
func judgedPart(why string) string {
	if _, rest, ok := strings.Cut(why, " is "); ok {
		return rest
	}
	if _, rest, ok := strings.Cut(why, " are "); ok {
		return rest
	}
	return why
}

// doubt: a reply's reason that leaves its choice open.
var doubt = mustPattern(`\b(?:maybe|perhaps|might|possibly|probably|not sure|unsure|i think|i guess|for now|let'?s see|we'?ll see|revisit|temporar\w*)\b`)

// replyCut ends the choice of a reply where its reason starts.
var replyCut = mustPattern(`(?:,|;|\s+(?:—|–|--)|\s+because\b|\s+since\b|\.)\s*`)

// offerCue opens what an assistant offers to do or use ("I'd suggest
// adding GraphQL", "I could write the importer as a Lambda function",
// "Want me to switch the API to tRPC?").
var offerCue = mustPattern(`\b(?:i'?d suggest|i suggest|i'?d recommend|i recommend|i'?d go with|i'?d propose|i propose|i could|we could|i can|i'?ll|i will|i'?m going to|want me to|should i|shall i|should we|should the\s+[\w\-]+(?:\s+[\w\-]+)?|how about|what about)\b[^.?!\n]*`)

// switchObject: the option a proposal to switch names as the new one.
var switchObject = mustPattern(`\b(?:switch|move|migrate|port)\b.*?\bto\s+([\w.+#/\-]+)`)

// offered returns the option an assistant's message offers: the new one of
// a switch, else the first known option named after the offer, else the
// first named word; "" when it offers none.
func offered(prev string) string {
	span := offerSpan(prev)
	if span == "" {
		return ""
	}
	if m := switchObject.FindStringSubmatch(span); m != nil && isChoiceWord(m[1], false) {
		return bare(m[1])
	}
	named := ""
	fields := strings.Fields(span)
	for i, raw := range fields {
		w := bare(raw)
		if categoryOf[lower(w)] != "" {
			// With the capitalised words that go on with its name ("AWS
			// Lambda", "Google Cloud Run").
			for _, next := range fields[i+1 : min(i+3, len(fields))] {
				nb := bare(next)
				if nb == "" || !startsUpper(nb) || nb != strings.TrimRight(next, ".,;:!?") {
					break
				}
				w += " " + nb
			}
			return w
		}
		if named == "" && i > 1 && isChoiceWord(raw, false) {
			named = w
		}
	}
	return named
}

// offerSpan returns the offer the assistant's message ends with, from
// its cue on ("should I switch the ORM to Drizzle"), or "". Only what the
// message ends with is what the reply answers: "I could add Redis
// caching. Should I update the README too?" — "no" is about the README.
func offerSpan(prev string) string {
	prev = strings.TrimSpace(prev)
	if i := lastSentenceStart(prev); i > 0 {
		prev = prev[i:]
	}
	loc := offerCue.FindStringIndex(lower(prev))
	if loc == nil {
		return ""
	}
	return prev[loc[0]:loc[1]]
}

// offeredAll returns every option the assistant's last sentence offers
// ("Zod or Yup").
func offeredAll(prev string) []string {
	var out []string
	for i, raw := range strings.Fields(offerSpan(prev)) {
		if w := bare(raw); w != "" && i > 1 && isChoiceWord(raw, false) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// lastSentenceStart returns where the last sentence of s begins.
func lastSentenceStart(s string) int {
	t := strings.TrimRight(s, ".!?… \n")
	for i := len(t) - 1; i > 0; i-- {
		if (t[i-1] == '.' || t[i-1] == '?' || t[i-1] == '!' || t[i-1] == '\n') && (t[i] == ' ' || t[i] == '\n') {
			return i + 1
		}
	}
	return 0
}

// declineLead and declineTail mark a reply that turns the offer down.
var (
	declineLead = mustPattern(`^(?:hm+[,.]?\s+)?(?:no|nah|nope|hard no|please no|not really|not that|let'?s not|better not|(?:i'?d )?rather not)\b[\s,.!:;—–-]*`)
	// thanksOnly: a decline's courtesy, no reason ("no thanks").
	thanksOnly  = mustPattern(`^(?:thanks|thank you|thx|ty)(?:\s+(?:though|anyway))?[.!]*$`)
	declineTail = mustPattern(`[\s,.;—–-]+(?:so\s+)?(?:no|nope|nah|pass)[.!]*$`)
)

// declined reads a reply that turns down the option the assistant just
// offered ("nah, too much surface area for two clients", "I've been
// burned by tRPC before, no."), or that judges it while choosing another
// ("lambdas have a 15 minute limit … ECS task it is."): that option is
// turned down, with the reply's words as the reason. items are what the
// reply settles read on its own; nil when it declines nothing more.
func declined(reply, prev string, items []item) []item {
	opt := offered(prev)
	if opt == "" {
		return nil
	}
	if slices.ContainsFunc(items, func(it item) bool { return it.kind == "reject" }) {
		return nil // the reply turns down what it means in its own words
	}
	t := strings.TrimSpace(unwrapArgs(reply))
	lt := lower(t)
	judged := judgedIn(t, opt)
	if hedge.MatchString(lt) || strings.Contains(t, "?") || questionLead.MatchString(lt) || keepWord.MatchString(lt) && !keepSimple.MatchString(lt) && judged == "" {
		return nil // "no, we keep Prisma": what stays, not a ban on the offer
	}
	decided := settles(items)
	switch {
	case !decided && declineLead.MatchString(lt):
		why := strings.TrimRight(t[len(declineLead.FindString(lt)):], ". ")
		if thanksOnly.MatchString(lower(why)) {
			why = ""
		}
		if bareOption(why) || isNamed(why) && len(strings.Fields(why)) <= 3 && !strings.ContainsAny(why, ",;:") {
			// "nope, Cloud Run": the option that replaces the one offered.
			return []item{{kind: "reject", text: opt}, {kind: "decision", text: "Use " + why, old: opt, change: true}}
		}
		return []item{{kind: "reject", text: opt, why: why}}
	case !decided && declineTail.MatchString(lt):
		why := strings.TrimRight(t[:declineTail.FindStringIndex(lt)[0]], ". ")
		return []item{{kind: "reject", text: opt, why: why}}
	case strings.HasPrefix(lt, "neither"):
		// "neither, use valibot" to "Zod or Yup?": both are turned down.
		var out []item
		for _, o := range offeredAll(prev) {
			out = append(out, item{kind: "reject", text: o})
		}
		return out
	case decided && !slices.ContainsFunc(items, func(it item) bool { return it.kind == "decision" && strings.Contains(lower(it.text), lower(opt)) }):
		// The option judged in a sentence of its own, another chosen.
		if judged != "" {
			return []item{{kind: "reject", text: opt, why: judged}}
		}
		if declineLead.MatchString(lt) {
			// "no, keep it simple with a cron job" to "Should the worker
			// use BullMQ?": another way chosen, the one offered turned
			// down.
			return []item{{kind: "reject", text: opt}}
		}
	}
	return nil
}

// judgedIn returns the sentence of reply that names opt and judges it
// ("no, Casbin's model files are hard to review"), without its lead-in;
// "" when none does.
func judgedIn(reply, opt string) string {
	for _, sent := range strings.Split(reply, ". ") {
		if loc := replyLead.FindStringIndex(lower(sent)); loc != nil {
			sent = sent[loc[1]:]
		}
		ls := lower(sent)
		names := slices.ContainsFunc(words(ls), func(w string) bool { return stem(strings.TrimSuffix(w, "'s")) == stem(lower(opt)) })
		if names && (reasonish.MatchString(ls) || judgement.MatchString(ls) || limitWord.MatchString(ls)) {
			return strings.TrimRight(sent, ". ")
		}
	}
	return ""
}

// replyLead: the word a reply opens with before its judgement ("no,
// Casbin's model files are hard to review", "hmm, …").
var replyLead = mustPattern(`^(?:no|nope|nah|hm+)[,.!]?\s+`)

// keepWord: a reply about keeping what is there.
var keepWord = mustPattern(`\b(?:keep|keeping|stay|staying|stick|sticking)\b`)

// keepSimple: a keep that is of how the work is done, not of an option
// ("no, keep it simple with a cron job").
var keepSimple = mustPattern(`\bkeep(?:ing)?\s+(?:it|things)\s+(?:simple|small|lean|light|boring)\b`)

// limitWord: a limit said of an option ("a 15 minute limit", "capped at").
var limitWord = mustPattern(`\b(?:limit|limits|max|maximum|capped|timeout|times out)\b`)
