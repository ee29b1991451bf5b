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
	if strings.HasSuffix(lt, "?") || strings.Contains(tail, ";") || len(strings.Fields(tail)) < 2 || isNamed(firstWord(tail)) && !judgedLead.MatchString(lt) ||
		!(judgement.MatchString(lt) || judgedLead.MatchString(lt) || reasonClause.MatchString(lt)) ||
		strings.HasPrefix(lower(s), "no ") || // "No split settings modules, they always drift": the no-form reads its reason
		remarkLead.MatchString(lt) || // "…, which is slow": a remark the head needs, to read as a report
		hedge.MatchString(lt) || // "…, we can revisit later": the head is not settled
		praised.MatchString(lt) && isNamed(tail) { // "Forget Redux, plain React context is simpler": the replacement
		return s, ""
	}
	if r.yields(tail) || !r.yields(s[:i]) {
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
		x := strings.TrimSpace(s[len(s)-len(low)+willDo.FindStringSubmatchIndex(low)[2] : len(s)-len(low)+willDo.FindStringSubmatchIndex(low)[3]])
		if !knownOption(x) && !isNamed(x) || pronounLead.MatchString(lower(x)) {
			return false
		}
		r.decision(item{kind: "decision", text: "Use " + x, change: change})
		return true
	case countNot.MatchString(low):
		m := countNot.FindStringSubmatch(s)
		if m == nil {
			return false
		}
		r.decision(item{kind: "decision", text: capitalise(m[1]), change: change})
		r.add(item{kind: "reject", text: strings.TrimPrefix(strings.TrimPrefix(m[2], "a "), "an ")})
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
