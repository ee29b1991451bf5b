package extract

import "strings"

// Forms of a chat window: how people settle things when they type fast
// ("nah, not Airflow. Dagster.", "Fivetran is out, too expensive",
// "prefer sqlfluff over sqlfmt", "dagster schedules in UTC. always.").

var (
	// neverReach: "local runs never touch the prod dataset": a part that
	// must never reach another is a rule, whatever the part is called.
	neverReach = mustPattern(`\bnever\s+(?:touch|touches|access|accesses|talk to|talks to|depend on|depends on|import|imports|write to|writes to)\b`)
	// judgedLead: a judgement said without its subject, after what it
	// explains ("…, too expensive for 12 sources").
	judgedLead = mustPattern(`^(?:(?:way|far|much|just|simply|a bit|a little)\s+)?(?:too|overkill|not worth|cheaper|faster|simpler|slower)\b`)
	// reasonClause: a clause with a subject of its own after what a
	// sentence settles ("…, the Looker renewal quote was insane", "…,
	// their API only syncs once a day"): its reason, when it settles
	// nothing itself.
	reasonClause = mustPattern(`^(?:it|its|it'?s|they|their|they'?re|the|our|we|we'?re|we'?d|we'?ve|nobody|no one|everyone|everybody|a|an|these|those|finance|legal|security|ops)\s+\S+\s+\S+`)
	// soThen: "the platform team will only support Airflow, so Airflow it
	// is": a reason, then what it settles.
	soThen = mustPattern(`^(.{8,}?),?\s+so\s+(\S.*)$`)
	// chatPrefer: "prefer sqlfluff over sqlfmt", "i'd rather have DuckDB
	// for local dev than hitting BigQuery every time".
	// (With "I prefer" or "we prefer", preferOver reads it.)
	chatPrefer = mustPattern(`^(?:prefer|(?:(?:i|we)'?d|(?:i|we) would)\s+rather\s+(?:have|use|go with|take)|rather\s+(?:have|use))\s+(.{1,50}?)\s+(?:over|to|than|rather than|instead of)\s+(.{1,60}?)$`)
	// willDo: "dbt tests plus elementary will do", "a cron job is plenty".
	willDo = mustPattern(`^(?:just\s+)?(.{1,50}?)\s+(?:will do|would do|should do|does the job|will do the job|is plenty|are plenty|is all we need|are all we need)(?:\s+for\s+(?:now|us|us for now))?$`)
	// countNot: "one dbt project, not a project per team": a layout
	// chosen over another.
	countNot = mustPattern(`^((?:one|a single|single)\s+[\w\-]+(?:\s+[\w\-]+){0,2}?),?\s+(?:not|rather than|instead of)\s+((?:an?\s+|one\s+)?[\w\-]+(?:\s+[\w\-]+){0,3})$`)
	// emphasisOnly: a sentence that only stresses the one before it
	// ("dagster schedules in UTC. always.").
	emphasisOnly = mustPattern(`^(?:always|every time|each time|every single time|no exceptions|without exception|period|full stop|non-negotiable|not negotiable)[.!]*$`)
	// switchOff: "turn freshness off for ads_*", "disable retries on
	// staging".
	switchOff = mustPattern(`^(?:(?:let'?s|please|we'?ll|we should)\s+)?(?:(?:turn|switch)\s+(?:[\w\-*./]+\s+){1,4}?(?:off|on)\b|(?:turn|switch)\s+(?:off|on)\s+[\w\-*./]|(?:disable|enable)\s+[\w\-*./])`)
	// designVerb: "partition the big fact tables by event_date and
	// cluster on customer_id".
	designVerb = mustPattern(`^(?:(?:let'?s|please|we'?ll|we should)\s+)?(?:partition|shard|cluster|index|bucket|paginate|denormali[sz]e|encrypt)\s+(?:\S+\s+){1,5}?(?:by|on|with|using|per)\s+\S`)
	// heldUntil: the condition something is put off until, not a date
	// ("until the core marts are stable", not "until Friday").
	heldUntil = mustPattern(`^(?:until|till|unless)\s+(?:the|our|we|it|they|there|a|an)\b.*\b(?:is|are|has|have|get|gets|ship|ships|land|lands|settle|settles|stabili[sz]es?|works?|scales?|exists?|needs?|asks?|do|does)\b`)
	// taskWord: a piece of work, put off as work is ("the refactor").
	taskWord = mustPattern(`\b(?:refactor|refactoring|cleanup|clean-up|fix|fixes|review|merge|release|deploy|rewrite|upgrade|tests?|pr|ticket)$`)
	// remarkLead: a clause that hangs on the one before it.
	remarkLead = mustPattern(`^(?:which|that|but|and|though|although|so|yet|or|while|whereas)\b`)
	// modalClause: a clause whose verb says what would happen ("cold
	// starts would kill the queue times", "JSON parsing shows up at the
	// top of every profile").
	modalClause = mustPattern(`^(?:[\w\-']+\s+){1,3}(?:would|will|could|might|can'?t|won'?t|wouldn'?t|keeps|kills|breaks|shows up|eats|burns)\s+\S`)
	// consequence: what an option would do to us, a reason, not a hedge
	// ("cold starts would kill the queue times").
	consequence = mustPattern(`\b(?:would|'d)\s+(?:kill|break|hurt|slow|cost|blow|eat|tank|double|triple|ruin|wreck)\b`)
	// notAFan: "not a fan of Firebase for auth".
	notAFan = mustPattern(`^(?:i'?m\s+|we'?re\s+)?(?:not a (?:big\s+)?fan of|not keen on|not sold on|no love for)\s+([^,;]{1,40}?)(?:\s+for\s+([^,;]{1,30}))?$`)
	// nonStarterIn: "matchmaking is a non-starter in Lambda".
	nonStarterIn = mustPattern(`^(?:the\s+)?[\w\-]+(?:\s[\w\-]+)?\s+(?:is|are)\s+a\s+(?:non-?starter|no-go|dealbreaker)\s+(?:in|on|with)\s+(.{1,30})$`)
	// killItIs: "kill the microservice split, it's one Go binary until we
	// have more than two devs": what is dropped, then what it is instead.
	killItIs = mustPattern(`^(?:kill|drop|ditch|scrap|forget)\s+(?:the\s+)?(.{1,40}?),\s+it'?s\s+(.{1,40}?)(?:\s+((?:until|till|unless)\s+.+))?$`)
	// verblessNever: "server-authoritative physics, never trust the
	// client's positions": an option named, then the rule it brings.
	verblessNever = mustPattern(`^([^,]{3,40}),\s+(never\s+[a-z]+\s+.+)$`)
	// onlyPlace: "anti-cheat runs server side only".
	onlyPlace = mustPattern(`^(?:the\s+)?[\w\-]+(?:\s[\w\-]+){0,2}\s+(?:runs?|lives?|happens?|stays?|is done|are done|is checked|are checked|is validated|are validated)\s+(?:on the\s+)?(?:server[- ]side|client[- ]side|server|backend|locally|in ci|in the backend)\s+only\b`)
	// takeBack: "I take that back about the leaderboards, keep them in
	// Postgres", "forget what I said about UDP, we're back to websockets".
	takeBack = mustPattern(`^(?:i\s+take\s+(?:that|it)\s+back|(?:forget|ignore|disregard|scratch)\s+what\s+i\s+said)\s+(?:about|on|re)\s+(?:the\s+)?([\w.\-/ ]{1,30}?)\s*[,;:—–]+\s*(\S.*)$`)
	// askedNo: a one-word turn-down after an option asked about ("Mongo?
	// no.").
	askedNo = mustPattern(`^(?:no|nope|nah|no way|hell no|never)[.!]*$`)
	// noToThen: "no to Unity Netcode, we roll our own tick loop".
	noToThen = mustPattern(`^no\s+to\s+([^,]{2,40}),\s+(\S.+)$`)
	// letsDo: "let's do plain UDP for the match traffic": an option taken,
	// with "do".
	letsDo = mustPattern(`^(?:let'?s|we'?ll|we will|we)\s+do\s+(.{2,120})$`)
	// negModal: a clause that says what cannot be.
	negModal = mustPattern(`\b(?:can'?t|cannot|won'?t|doesn'?t|does not|isn'?t|aren'?t|don'?t|couldn'?t|never)\b`)
	// praised: a clause that speaks well of what it names.
	praised = mustPattern(`\b(?:is|are)\s+(?:\w+\s+)?(?:simpler|easier|better|fine|enough|faster|cheaper|nicer|lighter|smaller|good enough)\b`)
	// judgedThen: "Great Expectations is overkill for us, dbt tests plus
	// elementary will do": an option judged, then what does instead.
	judgedThen = mustPattern(`^((.{2,40}?)\s+(?:is|are|was|were|seems|feels)\s+(.{2,40}?)),\s+(\S.+)$`)
	// neverTail: "secrets go through Secret Manager, never in
	// profiles.yml": a rule, with the place it rules out.
	neverTail = mustPattern(`,\s+(?:never|not ever)\s+(?:in|on|to|through|via|from|with|into|inside)\s+\S`)
)

// yields reports whether s read alone settles something. Its readings
// count with r's (reads).
func (r *reader) yields(s string) bool {
	rr := reader{probe: true, reads: r.reads}
	rr.statement(s, false)
	return len(rr.items) > 0
}

// trailingReason splits off a last clause that gives the reason of what
// the rest of s settles ("Fivetran is out, too expensive for 12
// sources"): it must read as a reason, settle nothing itself, and leave
// a head that settles something; it must not judge another named option
// ("Use Postgres, MySQL is too slow" turns MySQL down).
func (r *reader) trailingReason(s string) (head, why string) {
	i := strings.LastIndex(s, ", ")
	if i <= 0 {
		return s, ""
	}
	tail := strings.TrimSpace(s[i+2:])
	lt := lower(tail)
	if strings.HasSuffix(lt, "?") || strings.Contains(tail, ";") || len(strings.Fields(tail)) < 2 ||
		!(judgement.MatchString(lt) || judgedLead.MatchString(lt) || reasonClause.MatchString(lt) || modalClause.MatchString(lt)) ||
		isNamed(firstWord(tail)) && !modalClause.MatchString(lt) && !judgedLead.MatchString(lt) || // "…, Django is too heavy": another option turned down
		strings.HasPrefix(lower(s), "no ") || // "No split settings modules, they always drift": the no-form reads its reason
		remarkLead.MatchString(lt) || // "…, which is slow": a remark the head needs, to read as a report
		hedge.MatchString(lt) && !consequence.MatchString(lt) || // "…, we can revisit later": the head is not settled
		praised.MatchString(lt) && isNamed(tail) { // "Forget Redux, plain React context is simpler": the replacement
		return s, ""
	}
	if killItIs.MatchString(lower(s)) || r.yields(tail) || !r.yields(s[:i]) {
		return s, ""
	}
	return s[:i], strings.TrimRight(tail, ".! ")
}

// bareOption reports whether a sentence is only an option's name
// ("Dagster."), as said right after turning another down.
func bareOption(s string) bool {
	s = strings.TrimRight(s, ".! ")
	f := strings.Fields(s)
	return len(f) >= 1 && len(f) <= 3 && knownOption(s) && optionPhrase(s) && !strings.ContainsAny(s, ",;:?")
}

// chatForms reads the decisions of chat-window forms; it reports whether
// one applied.
func (r *reader) chatForms(s, low string, change bool) bool {
	if r.opsForms(s, low, change) {
		return true
	}
	if m := takeBack.FindStringSubmatchIndex(low); m != nil {
		// What the taken-back words were about is replaced by what
		// follows; a pronoun there stands for it.
		about, rest := s[m[2]:m[3]], s[m[4]:m[5]]
		if lr := lower(rest); strings.HasPrefix(lr, "keep them ") || strings.HasPrefix(lr, "keep it ") || strings.HasPrefix(lr, "put them ") || strings.HasPrefix(lr, "put it ") {
			verb, tail, _ := strings.Cut(rest, " ")
			_, tail, _ = strings.Cut(tail, " ")
			rest = verb + " the " + about + " " + tail
		}
		n := len(r.items)
		r.statement(capitalise(rest), true)
		for i := n; i < len(r.items); i++ {
			if it := &r.items[i]; it.kind == "decision" && it.old == "" {
				// A change, not a restatement, though said with "keep".
				it.old, it.change, it.stays = about, true, false
			}
		}
		r.changed = true
		r.whyNext = len(r.items) > n // a reason may follow in a sentence of its own
		return len(r.items) > n
	}
	if m := noToThen.FindStringSubmatchIndex(low); m != nil && (isNamed(s[m[2]:m[3]]) || knownOption(s[m[2]:m[3]])) {
		r.add(item{kind: "reject", text: s[m[2]:m[3]]})
		r.statement(s[m[4]:m[5]], change)
		return true
	}
	if m := letsDo.FindStringSubmatchIndex(low); m != nil && hasChoice(s[m[2]:m[3]]) && !hedge.MatchString(low) && !pronounLead.MatchString(low[m[2]:m[3]]) {
		obj := strings.TrimPrefix(s[m[2]:m[3]], "plain ")
		for _, w := range []string{"need ", "want "} {
			obj = strings.TrimPrefix(obj, w) // "we do need Docker for CI": the emphasis
		}
		r.decisionBody("Use "+obj, change)
		return true
	}
	if m := killItIs.FindStringSubmatchIndex(low); m != nil && !pronounLead.MatchString(low[m[2]:m[3]]) {
		used := s[m[4]:m[5]]
		if loc := trailingNowOn.FindStringIndex(used); loc != nil {
			used = used[:loc[0]] // "it's Vitest now"
		}
		if lu := lower(used); !hasChoice(used) && !isChoiceWord(firstWord(used), false) &&
			!strings.HasPrefix(lu, "a ") && !strings.HasPrefix(lu, "an ") && !strings.HasPrefix(lu, "one ") && !strings.HasPrefix(lu, "plain ") {
			// "drop Redis, it's overkill": why it goes, not what comes
			// ("it's a single binary until …" is what comes).
			r.add(item{kind: "reject", text: s[m[2]:m[3]], why: strings.TrimRight(s[m[4]:], ". ")})
			return true
		}
		r.add(item{kind: "reject", text: s[m[2]:m[3]]})
		why := ""
		if m[6] >= 0 {
			why = s[m[6]:m[7]]
		}
		r.decision(item{kind: "decision", text: capitalise(used), why: strings.TrimRight(why, ". "), change: true})
		r.changed = true
		return true
	}
	if m := verblessNever.FindStringSubmatchIndex(low); m != nil {
		if head := s[m[2]:m[3]]; len(strings.Fields(head)) <= 4 && !commentary.MatchString(" "+lower(head)+" ") && !pronounLead.MatchString(lower(head)) &&
			!imperLead.MatchString(lower(head)) && !hedge.MatchString(low) && !r.yields(head) {
			r.decision(item{kind: "decision", text: "Use " + head, change: change})
			r.add(item{kind: "constraint", text: capitalise(s[m[4]:m[5]])})
			return true
		}
	}
	if onlyPlace.MatchString(low) && !hedge.MatchString(low) {
		r.add(item{kind: "constraint", text: s})
		return true
	}
	if m := notAFan.FindStringSubmatchIndex(low); m != nil && (isNamed(s[m[2]:m[3]]) || knownOption(s[m[2]:m[3]])) {
		// Turned down before anything was decided for it: what follows is
		// the choice, not a change of an earlier one.
		r.add(item{kind: "reject", text: s[m[2]:m[3]]})
		return true
	}
	if m := nonStarterIn.FindStringSubmatchIndex(low); m != nil && (isNamed(s[m[2]:m[3]]) || knownOption(s[m[2]:m[3]])) {
		r.add(item{kind: "reject", text: s[m[2]:m[3]]})
		return true
	}
	if m := judgedThen.FindStringSubmatchIndex(low); m != nil && !r.probe && judgement.MatchString(low[m[2]:m[3]]) {
		head, subject, tail := s[m[2]:m[3]], s[m[4]:m[5]], s[m[8]:m[9]]
		if isNamed(subject) && len(strings.Fields(subject)) <= 3 && !pronounLead.MatchString(lower(subject)) && !r.yields(head) && r.yields(tail) {
			n := len(r.items)
			r.statement(tail, true)
			r.attach(seq(n, len(r.items)), head)
			r.add(item{kind: "reject", text: subject, why: s[m[6]:m[7]]})
			return true
		}
	}
	switch {
	case chatPrefer.MatchString(low):
		body, why := splitReason(s)
		m := chatPrefer.FindStringSubmatchIndex(lower(body))
		if m == nil {
			return false
		}
		x, y := strings.TrimSpace(body[m[2]:m[3]]), strings.TrimSpace(body[m[4]:m[5]])
		if !knownOption(x) && !isNamed(x) {
			return false // "prefer composition over inheritance": a principle
		}
		if isNamed(y) && len(strings.Fields(y)) <= 3 || knownOption(y) && len(strings.Fields(y)) <= 3 {
			r.decision(item{kind: "decision", text: "Use " + x, why: why, change: change})
			r.add(item{kind: "reject", text: y})
			return true
		}
		r.decision(item{kind: "decision", text: "Use " + x, why: firstNonEmpty(why, y), change: change})
		return true
	case willDo.MatchString(low):
		m := willDo.FindStringSubmatchIndex(low) // low keeps s's byte offsets
		x := strings.TrimSpace(s[m[2]:m[3]])
		if !knownOption(x) && !isNamed(x) || pronounLead.MatchString(lower(x)) {
			return false
		}
		r.decision(item{kind: "decision", text: "Use " + x, change: change})
		return true
	case countNot.MatchString(low):
		m := countNot.FindStringSubmatchIndex(low)
		r.decision(item{kind: "decision", text: capitalise(s[m[2]:m[3]]), change: change})
		r.add(item{kind: "reject", text: strings.TrimPrefix(strings.TrimPrefix(s[m[4]:m[5]], "a "), "an ")})
		r.whyNext = true
		return true
	case switchOff.MatchString(low) && !oneOff.MatchString(low) && !hedge.MatchString(low):
		r.decision(item{kind: "decision", text: capitalise(s), change: change})
		return true
	case designVerb.MatchString(low) && !oneOff.MatchString(low) && !hedge.MatchString(low):
		r.decision(item{kind: "decision", text: capitalise(s), change: change})
		return true
	}
	return false
}

// An operator's words, said around pasted output: a setting given a value,
// a practice banned, a part put behind another, an instruction about the
// paste ("don't apply that") before what is settled.
var (
	// setTo: "raise max_conns to 40, the burst at 2am needs it".
	setTo = mustPattern(`^(?:please\s+|just\s+)?(?:raise|lower|bump|increase|decrease|reduce|set|cap|limit)\s+((?:the\s+)?[\w.\-]+(?:\s+[\w.\-]+){0,3}?)\s+to\s+(\d[\w.%/]*(?:\s+(?:ms|milliseconds?|s|secs?|seconds?|minutes?|mins?|hours?|h|days?|weeks?|mb|gb|kb|percent|requests?|rows|items|connections|workers|replicas|retries|attempts))?)(?:\s+(?:from now on|for now|everywhere))?\s*(?:,\s*(.+?))?[.!]?$`)
	// releaseBump: "bump the version to 1.4.2", a release task.
	releaseBump = mustPattern(`^(?:please\s+)?(?:let'?s\s+)?(?:bump|upgrade|update|set|change|raise)\s+(?:the\s+|our\s+)?(?:[\w\-]+\s+)?(?:version|release|tag|changelog)\b|\bto\s+v?\d+\.\d+\.\d+\b`)
	// banned: "recovering from panics in handlers is banned here".
	banned = mustPattern(`^(.{3,60}?)\s+(?:is|are)\s+(?:banned|forbidden|not allowed|off[- ]limits)(?:\s+(?:here|in this (?:repo|codebase|project|team|service)|in (?:prod|production)))?[.!]?$`)
	// putBehind: "put the fraud check behind an async queue instead of
	// doing it inline".
	putBehind = mustPattern(`^(?:let'?s\s+|please\s+)?put\s+((?:the|our|all|every)\s+.{2,50}?)\s+(behind|in|into|on|under|inside|onto)\s+(.{2,60}?)(?:\s+(?:instead of|rather than)\s+(.{2,60}?))?[.!]?$`)
	// everywhereHead: "int64 cents everywhere" (", no exceptions"), and
	// copula, a verb that makes it a sentence instead ("Python is 3.12
	// everywhere").
	everywhereHead = mustPattern(`^[^,;]{2,40}?\s+everywhere[.!]*$`)
	copula         = mustPattern(`\b(?:is|are|was|were|be|stays?|runs?|uses?|goes|means?|has|have)\b`)
	// aboutPaste: "don't apply that, …": an instruction about what was
	// pasted, which settles nothing itself.
	aboutPaste = mustPattern(`^(?:don'?t|do not|never mind|no need to)\s+[a-z]+\s+(?:that|this|it|them)(?:\s+(?:yet|now|again|please))?\s*[,;—–-]+\s*(\S.+)$`)
)

// opsForms reads those forms; it reports whether one read the sentence.
func (r *reader) opsForms(s, low string, change bool) bool {
	if hedge.MatchString(low) || questionLead.MatchString(low) || strings.HasSuffix(low, "?") {
		return false
	}
	if m := aboutPaste.FindStringSubmatchIndex(low); m != nil {
		n := len(r.items)
		r.statement(capitalise(s[m[2]:m[3]]), change)
		return len(r.items) > n
	}
	if r.stressed && everywhereHead.MatchString(low) && len(strings.Fields(low)) <= 5 &&
		!pronounLead.MatchString(low) && !imperLead.MatchString(low) && !negModal.MatchString(low) && !copula.MatchString(low) {
		// Stressed as a rule ("…, no exceptions"), a verbless "X
		// everywhere" is the choice of X everywhere; unstressed it may
		// be a complaint ("typos everywhere").
		r.decision(item{kind: "decision", text: "Use " + strings.TrimRight(s, ".! "), change: change})
		return true
	}
	if m := setTo.FindStringSubmatchIndex(low); m != nil && !releaseBump.MatchString(low) {
		it := item{kind: "decision", text: capitalise(strings.TrimRight(s[:m[5]], " ")), change: change}
		if m[6] >= 0 && !r.probe {
			// A probe only asks whether the clause settles something.
			if rest := s[m[6]:m[7]]; !r.yields(rest) {
				it.why = strings.TrimRight(rest, ". ")
			}
		}
		r.decision(it)
		return true
	}
	if m := banned.FindStringSubmatchIndex(low); m != nil && !pronounLead.MatchString(low[m[2]:m[3]]) {
		r.add(item{kind: "constraint", text: s})
		return true
	}
	if m := putBehind.FindStringSubmatchIndex(low); m != nil && (m[8] >= 0 || low[m[4]:m[5]] == "behind" || low[m[4]:m[5]] == "under") {
		// "in", "into", "on" place code as often as they decide where a
		// part lives ("put the logic in a function"): a decision only
		// with what it replaces.
		text := capitalise(strings.TrimRight(s[:m[7]], " "))
		it := item{kind: "decision", text: text, change: change}
		if m[8] >= 0 {
			it.old, it.change = s[m[8]:m[9]], true
		}
		r.decision(it)
		return true
	}
	return false
}
