package compaction

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/tether-dev/tether/internal/dialect"
)

//go:embed rules.yaml
var embeddedRules []byte

// ErrInvalidRules is wrapped by every rule-file validation error.
var ErrInvalidRules = errors.New("invalid compaction rules")

// RuleError names the rule and the field that failed validation.
type RuleError struct {
	RuleID string // "" when the error is not about one rule
	Field  string
	Msg    string
}

func (e *RuleError) Error() string {
	if e.RuleID == "" {
		return fmt.Sprintf("compaction rules: field %s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("compaction rule %q: field %s: %s", e.RuleID, e.Field, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalidRules) hold.
func (e *RuleError) Unwrap() error { return ErrInvalidRules }

// Mark is what a rule recognises.
type Mark string

// The marks a rule can set.
const (
	MarkCompaction     Mark = "compaction"
	MarkPostCompaction Mark = "post_compaction"
	MarkTitle          Mark = "title"
	// MarkContextEdit: the provider edits the context inside an ordinary
	// call (Anthropic clear_tool_uses / clear_thinking): asked for in the
	// request, or reported applied in the answer.
	MarkContextEdit Mark = "context_edit"
)

// Kind says how a compaction summary is produced.
type Kind string

// Compaction kinds.
const (
	// InBand: the conversation itself plus a final instruction or trigger
	// item (Codex local, Claude Code).
	InBand Kind = "in_band"
	// OutOfBand: a separate request whose only user message is the
	// conversation flattened to text (OpenCode, Pi).
	OutOfBand Kind = "out_of_band"
	// Opaque: the provider returns an encrypted or native summary that must
	// never be read or altered (Codex remote compaction).
	Opaque Kind = "opaque"
	// Silent: no summarisation request at all; the agent's history simply
	// shrank (Claude Code session-memory compaction reuses a summary it
	// built in the background).
	Silent Kind = "silent"
)

// Evidence is how strong a rule's signal is.
type Evidence string

// Evidence levels, strongest first.
const (
	EvidenceProtocol  Evidence = "protocol"  // a header field, an item type, an endpoint
	EvidenceSignature Evidence = "signature" // a stable prompt prefix
	EvidenceHeuristic Evidence = "heuristic" // vocabulary or shape only
)

// Rank orders evidence: higher is stronger; 0 for an unknown value.
func (e Evidence) Rank() int {
	switch e {
	case EvidenceProtocol:
		return 3
	case EvidenceSignature:
		return 2
	case EvidenceHeuristic:
		return 1
	}
	return 0
}

// Condition is one test in a rule's match block.
type Condition struct {
	Where    string   `yaml:"where"`
	JSONPath string   `yaml:"json_path,omitempty"`
	How      string   `yaml:"how"`
	Value    string   `yaml:"value,omitempty"`
	Values   []string `yaml:"values,omitempty"`
	Within   int      `yaml:"within,omitempty"` // message_text / item_type / block_type: tail bound (default DefaultWithin)

	tail int // 1 + its slot among its rule set's tail conditions (0: none)
}

// isTail reports whether the condition tests the last items of the
// history one by one (block_type, item_type, message_text:<role>).
func (c *Condition) isTail() bool {
	return c.Where == "block_type" || c.Where == "item_type" || strings.HasPrefix(c.Where, "message_text:")
}

// within is how many trailing items a tail condition tests.
func (c *Condition) within() int {
	if c.Within <= 0 {
		return DefaultWithin
	}
	return c.Within
}

// Scope is what a rule reads: the request (Classify), the provider's answer
// (WatchResponse) or the branch's lineage counts (ClassifyLineage).
type Scope string

// Rule scopes, from the places their conditions read.
const (
	ScopeRequest  Scope = "request"
	ScopeResponse Scope = "response"
	ScopeLineage  Scope = "lineage"
)

func (c *Condition) scope() Scope {
	switch {
	case strings.HasPrefix(c.Where, "response_"):
		return ScopeResponse
	case strings.HasPrefix(c.Where, "lineage:"):
		return ScopeLineage
	}
	return ScopeRequest
}

// DefaultWithin is how many trailing items message_text and item_type
// conditions search when a rule does not say.
const DefaultWithin = 32

// Rule is one recognition rule.
type Rule struct {
	ID            string         `yaml:"id"`
	Version       int            `yaml:"version"`
	Agent         string         `yaml:"agent"`
	Dialects      []dialect.Name `yaml:"dialects,omitempty"` // empty: every dialect
	Marks         Mark           `yaml:"marks"`
	Kind          Kind           `yaml:"kind,omitempty"`
	Evidence      Evidence       `yaml:"evidence"`
	SummaryAnchor string         `yaml:"summary_anchor,omitempty"` // text the agent keeps the summary before (Claude Code: "</summary>")
	Partial       bool           `yaml:"partial,omitempty"`        // compaction of a part only; its answer is joined to the main summary
	Older         bool           `yaml:"older_part,omitempty"`     // in-band request carrying only an older part of the history
	Placement     Placement      `yaml:"placement,omitempty"`      // where a compaction request is given the capsule block
	// Clears names what a context_edit rule's edit removes from what the
	// model reads: tool_results (a capsule block carried in one no longer
	// counts as carried) or thinking.
	Clears string      `yaml:"clears,omitempty"`
	Match  []Condition `yaml:"match"`
	scope  Scope
}

// Scope returns what the rule reads (from its conditions).
func (r *Rule) Scope() Scope { return r.scope }

// Placement says where preservation adds the capsule block to a compaction
// request. The default depends on the kind: the system prompt for an
// out-of-band request, else the end of the last user message.
type Placement string

// Placements.
const (
	PlaceDefault       Placement = ""
	PlaceBeforeLast    Placement = "before_last_item" // a plaintext message before the final item (Codex's compaction_trigger)
	PlaceAfterLastItem Placement = "after_last_item"  // a plaintext message after the history (Codex's /responses/compact)
	// PlaceNone: the request is relayed as sent (its answer is a signed
	// block nobody may edit); the capsule goes back on the turns after it.
	PlaceNone Placement = "none"
)

// HarvestFormat names a plan-carrier decoder in package harvest.
type HarvestFormat string

// The plan-carrier decoders.
const (
	FormatCodexUpdatePlan HarvestFormat = "codex_update_plan"
	FormatTodoWrite       HarvestFormat = "todowrite"
	FormatClaudeTasks     HarvestFormat = "claude_tasks"
	FormatExitPlanMode    HarvestFormat = "exit_plan_mode"
	FormatProposedPlan    HarvestFormat = "proposed_plan_block"
	FormatTaskProgress    HarvestFormat = "task_progress"
	FormatWriteTodos      HarvestFormat = "write_todos"
	FormatPiTodo          HarvestFormat = "pi_todo"
)

var harvestFormats = map[HarvestFormat]bool{
	FormatCodexUpdatePlan: true, FormatTodoWrite: true, FormatClaudeTasks: true,
	FormatExitPlanMode: true, FormatProposedPlan: true, FormatTaskProgress: true,
	FormatWriteTodos: true, FormatPiTodo: true,
}

// toollessFormats read assistant text or a parameter of any tool, so they
// name no tool.
var toollessFormats = map[HarvestFormat]bool{FormatProposedPlan: true, FormatTaskProgress: true}

// HarvestRule says which tool calls carry plan state and how to decode them.
type HarvestRule struct {
	ID      string        `yaml:"id"`
	Version int           `yaml:"version"`
	Agent   string        `yaml:"agent"`
	Tools   []string      `yaml:"tools,omitempty"`
	Format  HarvestFormat `yaml:"format"`
}

// UserRoleText is what agents write into user-role messages on the user's
// behalf: it is not the user speaking.
type UserRoleText struct {
	// HarnessTags name the blocks (<tag …>…</tag>) agents insert into a
	// user's message: context, reminders, command echoes.
	HarnessTags []string `yaml:"harness_tags"`
	// SummaryPrefixes open a user-role message that carries an earlier
	// compaction summary; they match ASCII case-insensitively within the
	// first MaxSummaryPrefix bytes of the trimmed text.
	SummaryPrefixes []string `yaml:"summary_prefixes"`
}

// QuotedHistory says how an out-of-band summarisation request quotes what it
// summarises: the conversation inside <TranscriptTag>…</TranscriptTag>, each
// user turn opening "[UserSpeaker]: ", and an earlier summary being updated
// inside <SummaryTag>…</SummaryTag>. An empty field: nothing is quoted so.
type QuotedHistory struct {
	TranscriptTag string `yaml:"transcript_tag"`
	UserSpeaker   string `yaml:"user_speaker"`
	SummaryTag    string `yaml:"summary_tag"`
}

// MaxSummaryPrefix bounds a summary prefix, in bytes.
const MaxSummaryPrefix = 120

type ruleFile struct {
	SchemaVersion int           `yaml:"schema_version"`
	Rules         []Rule        `yaml:"rules"`
	Harvest       []HarvestRule `yaml:"harvest"`
	UserRole      UserRoleText  `yaml:"user_role_text"`
	Quoted        QuotedHistory `yaml:"quoted_history"`
}

// Ruleset is a validated, immutable rule file. It is safe for concurrent use.
type Ruleset struct {
	rules   []Rule // request rules of Classify, in evaluation order: evidence rank desc, then file order
	edits   []Rule // request context_edit rules, file order
	answer  []Rule // response rules, file order
	lineage []Rule // lineage rules, evaluation order
	// The tail conditions of rules and edits, by slot, and the dialects
	// of each one's rule (nil: every dialect).
	tail     []*Condition
	tailDial [][]dialect.Name
	harvest  []HarvestRule
	userRole UserRoleText
	quoted   QuotedHistory
}

// LoadRules parses and validates a rule file. Unknown fields are rejected;
// an invalid rule yields a *RuleError naming the rule id and the field.
func LoadRules(data []byte) (*Ruleset, error) {
	var f ruleFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("parse compaction rules: %w: %w", ErrInvalidRules, err)
	}
	if f.SchemaVersion != 1 {
		return nil, &RuleError{Field: "schema_version", Msg: fmt.Sprintf("got %d, want 1", f.SchemaVersion)}
	}
	if len(f.Rules) == 0 {
		return nil, &RuleError{Field: "rules", Msg: "no rules"}
	}
	seen := map[string]bool{}
	for i := range f.Rules {
		r := &f.Rules[i]
		if err := validateRule(r, i); err != nil {
			return nil, err
		}
		if seen[r.ID] {
			return nil, &RuleError{RuleID: r.ID, Field: "id", Msg: "duplicate rule id"}
		}
		seen[r.ID] = true
	}
	for i := range f.Harvest {
		h := &f.Harvest[i]
		if err := validateHarvest(h, i); err != nil {
			return nil, err
		}
		if seen[h.ID] {
			return nil, &RuleError{RuleID: h.ID, Field: "id", Msg: "duplicate rule id"}
		}
		seen[h.ID] = true
	}
	if err := validateUserRole(&f.UserRole); err != nil {
		return nil, err
	}
	if err := validateQuoted(&f.Quoted); err != nil {
		return nil, err
	}
	rs := &Ruleset{harvest: f.Harvest, userRole: f.UserRole, quoted: f.Quoted}
	for rank := 3; rank >= 1; rank-- {
		for _, r := range f.Rules {
			if r.Evidence.Rank() != rank {
				continue
			}
			switch {
			case r.scope == ScopeResponse:
				rs.answer = append(rs.answer, r)
			case r.scope == ScopeLineage:
				rs.lineage = append(rs.lineage, r)
			case r.Marks == MarkContextEdit:
				rs.edits = append(rs.edits, r)
			default:
				rs.rules = append(rs.rules, r)
			}
		}
	}
	for _, set := range [][]Rule{rs.rules, rs.edits} {
		for i := range set {
			for j := range set[i].Match {
				c := &set[i].Match[j]
				if c.isTail() && len(rs.tail) < maxTailSlots {
					rs.tail = append(rs.tail, c)
					rs.tailDial = append(rs.tailDial, set[i].Dialects)
					c.tail = len(rs.tail)
				}
			}
		}
	}
	return rs, nil
}

// tailMask is the slots of the tail conditions whose rules apply to
// dialect name.
func (rs *Ruleset) tailMask(name dialect.Name) uint64 {
	var m uint64
	for slot, ds := range rs.tailDial {
		if len(ds) == 0 || slices.Contains(ds, name) {
			m |= 1 << slot
		}
	}
	return m
}

// Default returns the embedded rule file. It panics only if the embedded file
// is broken, which a test rules out.
func Default() *Ruleset { return mustLoad(embeddedRules) }

func mustLoad(data []byte) *Ruleset {
	rs, err := LoadRules(data)
	if err != nil {
		panic(fmt.Sprintf("embedded compaction rules: %v", err))
	}
	return rs
}

// Rules returns the rules in evaluation order (strongest evidence first,
// then file order). The slice is a copy.
func (rs *Ruleset) Rules() []Rule {
	out := append([]Rule(nil), rs.rules...)
	out = append(out, rs.edits...)
	out = append(out, rs.answer...)
	return append(out, rs.lineage...)
}

// HarvestRules returns the plan-carrier rules in file order. The slice is a
// copy.
func (rs *Ruleset) HarvestRules() []HarvestRule {
	return append([]HarvestRule(nil), rs.harvest...)
}

// UserRoleText returns the harness tags and summary prefixes of the rule
// file, in file order. The slices are copies.
func (rs *Ruleset) UserRoleText() UserRoleText {
	return UserRoleText{
		HarnessTags:     append([]string(nil), rs.userRole.HarnessTags...),
		SummaryPrefixes: append([]string(nil), rs.userRole.SummaryPrefixes...),
	}
}

// QuotedHistory returns how out-of-band summarisation requests quote the
// history.
func (rs *Ruleset) QuotedHistory() QuotedHistory { return rs.quoted }

// tagName reports whether s can name a tag: letters, digits, - and _.
func tagName(s string) bool {
	ok := s != ""
	for j := 0; ok && j < len(s); j++ {
		c := s[j]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	return ok
}

func validateQuoted(q *QuotedHistory) error {
	for field, tag := range map[string]string{"transcript_tag": q.TranscriptTag, "summary_tag": q.SummaryTag} {
		if tag != "" && !tagName(tag) {
			return &RuleError{Field: "quoted_history." + field, Msg: fmt.Sprintf("%q is not a tag name (letters, digits, - and _)", tag)}
		}
	}
	sp := q.UserSpeaker
	ok := len(sp) <= 39
	for i := 0; ok && i < len(sp); i++ {
		c := sp[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' '
	}
	if !ok || (sp == "") != (q.TranscriptTag == "") {
		return &RuleError{Field: "quoted_history.user_speaker", Msg: "letters and spaces, at most 39, set exactly when transcript_tag is"}
	}
	return nil
}

func validateUserRole(u *UserRoleText) error {
	for i, tag := range u.HarnessTags {
		if !tagName(tag) {
			return &RuleError{Field: fmt.Sprintf("user_role_text.harness_tags[%d]", i), Msg: fmt.Sprintf("%q is not a tag name (letters, digits, - and _)", tag)}
		}
	}
	for i, p := range u.SummaryPrefixes {
		if strings.TrimSpace(p) != p || p == "" || len(p) > MaxSummaryPrefix {
			return &RuleError{Field: fmt.Sprintf("user_role_text.summary_prefixes[%d]", i),
				Msg: fmt.Sprintf("must be 1 to %d bytes without surrounding space", MaxSummaryPrefix)}
		}
	}
	return nil
}

func validateRule(r *Rule, i int) error {
	id := r.ID
	bad := func(field, msg string) error { return &RuleError{RuleID: id, Field: field, Msg: msg} }
	if id == "" {
		return &RuleError{RuleID: fmt.Sprintf("rules[%d]", i), Field: "id", Msg: "missing"}
	}
	if r.Version < 1 {
		return bad("version", "must be >= 1")
	}
	if r.Agent == "" {
		return bad("agent", "missing")
	}
	for j, d := range r.Dialects {
		switch d {
		case dialect.OpenAIChat, dialect.OpenAIResponses, dialect.AnthropicMessages, dialect.Gemini:
		default:
			return bad(fmt.Sprintf("dialects[%d]", j), fmt.Sprintf("unknown dialect %q", d))
		}
	}
	switch r.Marks {
	case MarkCompaction:
		switch r.Kind {
		case InBand, OutOfBand, Opaque:
		case "":
			return bad("kind", "missing (compaction rules need in_band, out_of_band or opaque)")
		default:
			return bad("kind", fmt.Sprintf("unknown kind %q", r.Kind))
		}
	case MarkPostCompaction, MarkTitle, MarkContextEdit:
		switch r.Kind {
		case "", InBand, OutOfBand, Opaque, Silent:
		default:
			return bad("kind", fmt.Sprintf("unknown kind %q", r.Kind))
		}
	case "":
		return bad("marks", "missing")
	default:
		return bad("marks", fmt.Sprintf("unknown mark %q (want compaction, post_compaction, title or context_edit)", r.Marks))
	}
	switch r.Placement {
	case PlaceDefault, PlaceBeforeLast, PlaceAfterLastItem, PlaceNone:
	default:
		return bad("placement", fmt.Sprintf("unknown placement %q (want before_last_item, after_last_item or none)", r.Placement))
	}
	switch r.Clears {
	case "", "tool_results", "thinking":
		if r.Clears != "" && r.Marks != MarkContextEdit {
			return bad("clears", "only allowed on context_edit rules")
		}
	default:
		return bad("clears", fmt.Sprintf("unknown value %q (want tool_results or thinking)", r.Clears))
	}
	if r.Evidence.Rank() == 0 {
		return bad("evidence", fmt.Sprintf("unknown evidence %q (want protocol, signature or heuristic)", r.Evidence))
	}
	if len(r.Match) == 0 {
		return bad("match", "no conditions")
	}
	for j := range r.Match {
		if err := validateCondition(&r.Match[j]); err != nil {
			return bad(fmt.Sprintf("match[%d].%s", j, err.Field), err.Msg)
		}
		sc := r.Match[j].scope()
		if j > 0 && sc != r.scope {
			return bad(fmt.Sprintf("match[%d].where", j), "mixes request, response and lineage places in one rule")
		}
		r.scope = sc
	}
	if r.scope == ScopeResponse && r.Marks != MarkCompaction && r.Marks != MarkContextEdit {
		return bad("marks", "a rule on the answer marks compaction or context_edit")
	}
	if r.scope == ScopeLineage && r.Marks != MarkPostCompaction {
		return bad("marks", "a rule on lineage counts marks post_compaction")
	}
	return nil
}

func validateCondition(c *Condition) *RuleError {
	switch {
	case strings.HasPrefix(c.Where, "header:"):
		if strings.TrimPrefix(c.Where, "header:") == "" {
			return &RuleError{Field: "where", Msg: "header name missing"}
		}
	case strings.HasPrefix(c.Where, "message_text:"):
		switch strings.TrimPrefix(c.Where, "message_text:") {
		case "user", "assistant", "system", "developer", "tool":
		default:
			return &RuleError{Field: "where", Msg: fmt.Sprintf("unknown role in %q", c.Where)}
		}
	case strings.HasPrefix(c.Where, "body:"), strings.HasPrefix(c.Where, "response_body:"):
		if _, path, _ := strings.Cut(c.Where, ":"); path == "" {
			return &RuleError{Field: "where", Msg: "JSON path missing"}
		}
	case strings.HasPrefix(c.Where, "lineage:"):
		if !lineagePlaces[strings.TrimPrefix(c.Where, "lineage:")] {
			return &RuleError{Field: "where", Msg: fmt.Sprintf("unknown lineage count in %q (want previous_messages, messages, kept_percent or extends_branch)", c.Where)}
		}
	case c.Where == "path", c.Where == "system", c.Where == "last_user_text",
		c.Where == "last_user_block", c.Where == "last_item_type", c.Where == "item_type", c.Where == "block_type",
		c.Where == "first_block_type", c.Where == "response_block_type", c.Where == "response_item_type":
	case c.Where == "":
		return &RuleError{Field: "where", Msg: "missing"}
	default:
		return &RuleError{Field: "where", Msg: fmt.Sprintf("unknown place %q", c.Where)}
	}
	if c.JSONPath != "" && !strings.HasPrefix(c.Where, "header:") {
		return &RuleError{Field: "json_path", Msg: "only allowed with where: header:<name>"}
	}
	if c.Within < 0 {
		return &RuleError{Field: "within", Msg: "must be >= 0"}
	}
	switch c.How {
	case "equals", "prefix", "contains":
		if c.Value == "" && c.How != "equals" {
			return &RuleError{Field: "value", Msg: "missing"}
		}
		if len(c.Values) > 0 {
			return &RuleError{Field: "values", Msg: "only allowed with how: contains_all"}
		}
	case "contains_all":
		if len(c.Values) == 0 {
			return &RuleError{Field: "values", Msg: "missing"}
		}
		for _, v := range c.Values {
			if v == "" {
				return &RuleError{Field: "values", Msg: "empty value"}
			}
		}
		if c.Value != "" {
			return &RuleError{Field: "value", Msg: "use values with how: contains_all"}
		}
	case "absent", "present":
		if c.Value != "" || len(c.Values) > 0 {
			return &RuleError{Field: "value", Msg: "not allowed with how: " + c.How}
		}
	case "at_least", "at_most":
		if _, err := strconv.Atoi(c.Value); err != nil || !strings.HasPrefix(c.Where, "lineage:") {
			return &RuleError{Field: "value", Msg: "how: " + c.How + " takes a whole number and a lineage: place"}
		}
	case "":
		return &RuleError{Field: "how", Msg: "missing"}
	default:
		return &RuleError{Field: "how", Msg: fmt.Sprintf("unknown test %q", c.How)}
	}
	return nil
}

func validateHarvest(h *HarvestRule, i int) error {
	id := h.ID
	bad := func(field, msg string) error { return &RuleError{RuleID: id, Field: field, Msg: msg} }
	if id == "" {
		return &RuleError{RuleID: fmt.Sprintf("harvest[%d]", i), Field: "id", Msg: "missing"}
	}
	if h.Version < 1 {
		return bad("version", "must be >= 1")
	}
	if h.Agent == "" {
		return bad("agent", "missing")
	}
	if !harvestFormats[h.Format] {
		return bad("format", fmt.Sprintf("unknown format %q", h.Format))
	}
	if len(h.Tools) == 0 && !toollessFormats[h.Format] {
		return bad("tools", "missing")
	}
	for j, t := range h.Tools {
		if t == "" {
			return bad(fmt.Sprintf("tools[%d]", j), "empty tool name")
		}
	}
	return nil
}
