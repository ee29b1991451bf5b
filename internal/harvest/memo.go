package harvest

import (
	"bytes"
	"slices"
	"sync"

	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/dialect"
)

// Memo remembers Harvest's answer (from the first message, no seed) for
// recent histories by the PrefixID of their last message. An agent's next
// request adds a few messages; when none of them can change the answer (no
// carrier call, no task_progress argument, no proposed plan, no result of
// a carrier call that waited for one) the remembered answer is the answer,
// and the history is not scanned again.
type Memo struct {
	mu    sync.Mutex
	rs    *compaction.Ruleset // the rules the answers are of; another resets the memo
	index carrierIndex
	m     map[dialect.PrefixID]memoEntry
	order []dialect.PrefixID // insertion order, oldest first
	max   int
	scans int // histories scanned whole (tests)
}

type memoEntry struct {
	plan    Plan
	ok      bool
	waiting []string // ids of carrier calls whose result the history lacks
}

// carrierIndex is what of the harvest rules decides whether added
// messages can change Harvest's answer.
type carrierIndex struct {
	rules              []compaction.HarvestRule
	tools              map[string]*compaction.HarvestRule // the first rule naming each tool
	proposed, progress bool                               // a proposed-plan, a task-progress rule applies
}

// memoEntryMax bounds the bytes one remembered answer may hold (its
// steps' text, the ids of the calls it waits on): both come from the
// caller's history, so a larger one is not remembered, and the memo holds
// at most max × memoEntryMax.
const memoEntryMax = 4 << 10

// size is about the bytes e holds.
func (e memoEntry) size() int {
	n := 0
	for _, s := range e.plan.Steps {
		n += len(s.Text) + 16
	}
	for _, id := range e.waiting {
		n += len(id) + 16
	}
	return n
}

// memoLook bounds how many messages a request may add to a remembered one.
const memoLook = 16

// NewMemo returns a Memo of at most max histories (oldest dropped first).
func NewMemo(max int) *Memo { return &Memo{max: max} }

// Harvest is Harvest(rs.HarvestRules(), msgs, 0), taken from a remembered
// history that msgs extends when it can be. ids are the PrefixIDs of msgs
// (from the request's View); with none, or a different count, it scans
// msgs whole.
func (mm *Memo) Harvest(rs *compaction.Ruleset, msgs []dialect.Message, ids []dialect.PrefixID) (Plan, bool) {
	mm.mu.Lock()
	if mm.rs != rs {
		rules := rs.HarvestRules()
		mm.rs, mm.index, mm.m, mm.order = rs, indexCarriers(rules), map[dialect.PrefixID]memoEntry{}, nil
	}
	ix := mm.index
	if len(ids) != len(msgs) || len(msgs) == 0 {
		mm.mu.Unlock()
		return Harvest(ix.rules, msgs, 0)
	}
	n := len(msgs)
	e, j := memoEntry{}, -1
	for i := n - 1; i >= 0 && i >= n-memoLook; i-- {
		if got, ok := mm.m[ids[i]]; ok {
			e, j = got, i
			break
		}
	}
	mm.mu.Unlock()
	if j < 0 || !ix.inert(msgs[j+1:], e.waiting) {
		mm.mu.Lock()
		mm.scans++
		mm.mu.Unlock()
		plan, ok := Harvest(ix.rules, msgs, 0)
		e = memoEntry{plan: plan, ok: ok, waiting: ix.waiting(msgs)}
	}
	if j != n-1 && e.size() <= memoEntryMax {
		mm.put(rs, ids[n-1], e)
	}
	p := e.plan
	p.Steps = slices.Clone(p.Steps)
	return p, e.ok
}

func (mm *Memo) put(rs *compaction.Ruleset, id dialect.PrefixID, e memoEntry) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if mm.rs != rs {
		return // answers of rules replaced meanwhile
	}
	if _, ok := mm.m[id]; !ok {
		mm.order = append(mm.order, id)
	}
	mm.m[id] = e
	for len(mm.m) > mm.max && len(mm.order) > 0 {
		delete(mm.m, mm.order[0])
		mm.order = mm.order[1:]
	}
	if len(mm.order) > 2*mm.max+64 {
		mm.order = slices.DeleteFunc(mm.order, func(k dialect.PrefixID) bool { _, ok := mm.m[k]; return !ok })
	}
}

// inert reports whether added messages leave Harvest's answer as it was:
// none calls a carrier tool or passes task_progress, none is an assistant
// text holding a proposed plan, and none answers a carrier call in
// waiting.
func (ix carrierIndex) inert(added []dialect.Message, waiting []string) bool {
	for _, m := range added {
		if ix.proposed && m.Role == "assistant" && m.Text != "" {
			if _, ok := proposedPlan(m.Text); ok {
				return false
			}
		}
		for _, tc := range m.ToolCalls {
			if ix.tools[tc.Name] != nil || ix.progress && bytes.Contains(tc.Arguments, []byte(`"task_progress"`)) {
				return false
			}
		}
		for _, tr := range m.ToolResults {
			if slices.Contains(waiting, tr.CallID) {
				return false
			}
		}
	}
	return true
}

// waiting returns the ids of the carrier calls in msgs that read their
// result (Claude tasks, Pi todos, plan mode's exit) and have none yet.
func (ix carrierIndex) waiting(msgs []dialect.Message) []string {
	var calls []string
	answered := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if r := ix.tools[tc.Name]; r != nil && readsResult(r.Format) && tc.ID != "" {
				calls = append(calls, tc.ID)
			}
		}
		for _, tr := range m.ToolResults {
			answered[tr.CallID] = true
		}
	}
	return slices.DeleteFunc(calls, func(id string) bool { return answered[id] })
}

// indexCarriers indexes rules as Harvest does: the rule of each tool name
// (the first that names it), and whether a proposed-plan or a
// task-progress rule applies.
func indexCarriers(rules []compaction.HarvestRule) carrierIndex {
	ix := carrierIndex{rules: rules, tools: map[string]*compaction.HarvestRule{}}
	for i := range rules {
		r := &rules[i]
		ix.proposed = ix.proposed || r.Format == compaction.FormatProposedPlan
		ix.progress = ix.progress || r.Format == compaction.FormatTaskProgress
		for _, t := range r.Tools {
			if _, dup := ix.tools[t]; !dup {
				ix.tools[t] = r
			}
		}
	}
	return ix
}

// readsResult reports whether a carrier of format f reads its call's
// result (so the result's arrival can change the answer).
func readsResult(f compaction.HarvestFormat) bool {
	switch f {
	case compaction.FormatClaudeTasks, compaction.FormatPiTodo, compaction.FormatExitPlanMode:
		return true
	}
	return false
}
