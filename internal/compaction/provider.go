package compaction

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tether-dev/tether/internal/dialect"
)

// Rules beyond the request's conversation: request fields that ask the
// provider to compact or edit the context (body:<path>, first_block_type),
// what the provider's answer shows it did (response_block_type,
// response_item_type, response_body:<path>), and how a branch's history
// changed between two requests (lineage:<count>). All read metadata only:
// types, field presence, counts.

// matchBody evaluates the request places that read the body beyond the
// conversation's tail.
func (p *probe) matchBody(c *Condition) bool {
	switch {
	case strings.HasPrefix(c.Where, "body:"):
		return testJSON(c, p.v.Get(strings.TrimPrefix(c.Where, "body:")))
	case c.Where == "first_block_type":
		return p.firstBlockHolds(c)
	}
	return false
}

// firstBlockHolds tests c on the content types of the conversation's
// first item, remembered by the item's key: the first message of an
// agent's history (Claude Code's carries the project's instructions, often
// kilobytes) comes back every turn. What is kept is the verdict, never the
// types, so a first item of a million blocks costs one reading, not the
// memo's memory.
func (p *probe) firstBlockHolds(c *Condition) bool {
	p.scan()
	keys := p.keys()
	if len(keys) == 0 {
		return testAny(c, dialect.FirstPartTypes(p.v))
	}
	return p.itemVerdicts(itemFirst, keys[0]).remember(c, func() bool { return testAny(c, dialect.FirstPartTypes(p.v)) })
}

// testJSON applies c to a JSON value: absent and present test whether it
// is there (null counts as absent), an array passes when any element does.
func testJSON(c *Condition, r gjson.Result) bool {
	if !r.Exists() || r.Type == gjson.Null {
		return c.How == "absent"
	}
	switch c.How {
	case "absent":
		return false
	case "present":
		return true
	}
	if r.IsArray() {
		found := false
		r.ForEach(func(_, el gjson.Result) bool {
			found = test(c, el.String())
			return !found
		})
		return found
	}
	return test(c, r.String())
}

// testAny applies c to a list of type names: absent holds when none is
// there, the others when any one passes.
func testAny(c *Condition, vals []string) bool {
	if c.How == "absent" {
		return len(vals) == 0
	}
	return slices.ContainsFunc(vals, func(s string) bool { return test(c, s) })
}

// ContextEdits returns the context_edit rules the request matches (the
// context edits it asks the provider for), in file order.
func (rs *Ruleset) ContextEdits(v *dialect.View) []Rule {
	if v == nil || len(rs.edits) == 0 {
		return nil
	}
	p := probe{v: v, name: v.Dialect(), rs: rs}
	var out []Rule
	for i := range rs.edits {
		r := &rs.edits[i]
		if (len(r.Dialects) == 0 || slices.Contains(r.Dialects, p.name)) && p.matchAll(r.Match) {
			out = append(out, *r)
		}
	}
	return out
}

// AnswerWatch matches the rules on the provider's answer against one
// relayed answer, a body or the events of a stream, reporting each rule
// once. It is not safe for concurrent use (one per exchange).
type AnswerWatch struct {
	name  dialect.Name
	rules []*Rule
	seen  []bool
}

// WatchAnswer returns a watch for an answer in dialect name, nil when no
// rule reads answers of that dialect.
func (rs *Ruleset) WatchAnswer(name dialect.Name) *AnswerWatch {
	w := &AnswerWatch{name: name}
	for i := range rs.answer {
		r := &rs.answer[i]
		if len(r.Dialects) == 0 || slices.Contains(r.Dialects, name) {
			w.rules = append(w.rules, r)
		}
	}
	if len(w.rules) == 0 {
		return nil
	}
	w.seen = make([]bool, len(w.rules))
	return w
}

// Body returns the rules a non-streamed answer body matches (not reported
// before).
func (w *AnswerWatch) Body(body []byte) []Rule {
	return w.match(body, dialect.AnswerPartTypes(w.name, body))
}

// Event returns the rules one stream event matches (not reported before).
func (w *AnswerWatch) Event(ev dialect.Event) []Rule {
	return w.match(ev.Data, dialect.EventPartTypes(w.name, ev))
}

func (w *AnswerWatch) match(data []byte, parts []string) []Rule {
	if w == nil {
		return nil
	}
	var out []Rule
	for i, r := range w.rules {
		if w.seen[i] {
			continue
		}
		ok := true
		for j := range r.Match {
			c := &r.Match[j]
			switch {
			case c.Where == "response_block_type" && w.name == dialect.AnthropicMessages,
				c.Where == "response_item_type" && w.name == dialect.OpenAIResponses:
				ok = testAny(c, parts)
			case strings.HasPrefix(c.Where, "response_body:"):
				ok = testJSON(c, gjson.GetBytes(data, strings.TrimPrefix(c.Where, "response_body:")))
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			w.seen[i] = true
			out = append(out, *r)
		}
	}
	return out
}

// Lineage is what the session layer knows of a request's place on its
// branch, as counts: no content.
type Lineage struct {
	// PreviousMessages is the number of messages of the branch's last
	// request (the branch the client's own session id names).
	PreviousMessages int
	// Messages is the number of messages of this request.
	Messages int
	// ExtendsBranch is whether this history shares a prefix with the
	// branch's.
	ExtendsBranch bool
}

// ClassifyLineage applies the lineage rules: a history that shrank with no
// summarisation request (a silent compaction) yields a post-compaction
// Result of the winning rule; otherwise the zero Result.
func (rs *Ruleset) ClassifyLineage(name dialect.Name, l Lineage) Result {
	var res Result
	for i := range rs.lineage {
		r := &rs.lineage[i]
		if len(r.Dialects) > 0 && !slices.Contains(r.Dialects, name) {
			continue
		}
		if !l.matchAll(r.Match) {
			continue
		}
		res.PostCompaction = true
		res.take(r)
		return res
	}
	return res
}

// lineagePlaces are the counts a lineage: condition reads.
var lineagePlaces = map[string]bool{"previous_messages": true, "messages": true, "kept_percent": true, "extends_branch": true}

func (l Lineage) matchAll(cs []Condition) bool {
	for i := range cs {
		if !l.match(&cs[i]) {
			return false
		}
	}
	return true
}

func (l Lineage) match(c *Condition) bool {
	var n int
	switch strings.TrimPrefix(c.Where, "lineage:") {
	case "previous_messages":
		n = l.PreviousMessages
	case "messages":
		n = l.Messages
	case "kept_percent":
		n = 100
		if l.PreviousMessages > 0 {
			n = l.Messages * 100 / l.PreviousMessages
		}
	case "extends_branch":
		return test(c, strconv.FormatBool(l.ExtendsBranch))
	default:
		return false
	}
	want, err := strconv.Atoi(c.Value)
	switch {
	case err != nil:
		return test(c, strconv.Itoa(n))
	case c.How == "at_least":
		return n >= want
	case c.How == "at_most":
		return n <= want
	}
	return test(c, strconv.Itoa(n))
}
