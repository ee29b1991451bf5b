package capsule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The two JSON documents this package reads from outside — an extractor's
// result (schema/ops.v2.json, untrusted model output) and a stored capsule
// (schema/capsule.v1.json) — are checked against their schema by the shapes
// below, written out in Go keyword for keyword. The schema files stay the
// published contract; validate_test.go checks that opsShape and capsuleShape
// accept exactly the documents a JSON Schema validator accepts.

// decodeJSON decodes data, which must hold exactly one JSON value, into the
// form the shapes check: nil, bool, json.Number, string, []any and
// map[string]any (the last of duplicate keys wins). encoding/json bounds the
// nesting depth; callers bound the size.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// A shape checks one decoded JSON value at location at and returns the first
// way it breaks the schema, or nil.
type shape func(v any, at *pointer) *violation

// violation is where a document breaks its schema and what was wanted there.
// It names schema property names and array indices only, never a value or
// a key taken from the document.
type violation struct {
	at   string // JSON pointer; "/" is the document itself
	want string
}

func (v *violation) Error() string {
	return fmt.Sprintf("schema violation at %q: %s", v.at, v.want)
}

// check runs s on a whole document and returns its violation as an error.
func (s shape) check(doc any) error {
	if v := s(doc, nil); v != nil {
		return v
	}
	return nil
}

// pointer is a location in a document: a chain of property names (always
// ones the schema declares) and array indices. nil is the document itself.
type pointer struct {
	up  *pointer
	key string // property name; "" for an array element
	idx int
}

func (p *pointer) prop(name string) *pointer { return &pointer{up: p, key: name} }
func (p *pointer) elem(i int) *pointer       { return &pointer{up: p, idx: i} }

func (p *pointer) String() string {
	if p == nil {
		return "/"
	}
	var parts []string
	for ; p != nil; p = p.up {
		if p.key != "" {
			parts = append(parts, p.key)
		} else {
			parts = append(parts, strconv.Itoa(p.idx))
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	return b.String()
}

func (p *pointer) fail(format string, args ...any) *violation {
	return &violation{at: p.String(), want: fmt.Sprintf(format, args...)}
}

// unbounded is the maximum of a length, size or integer range that has none.
const unbounded = -1

// str is {"type": "string", "minLength": min, "maxLength": max}; lengths
// count code points.
func str(min, max int) shape {
	return func(v any, at *pointer) *violation {
		s, ok := v.(string)
		if !ok {
			return at.fail("want a string")
		}
		if n := utf8.RuneCountInString(s); n < min || (max != unbounded && n > max) {
			switch {
			case max == unbounded:
				return at.fail("want a string of at least %d characters", min)
			case min == 0:
				return at.fail("want a string of at most %d characters", max)
			}
			return at.fail("want a string of %d to %d characters", min, max)
		}
		return nil
	}
}

// id is {"type": "string", "pattern": "^[<prefixes>][1-9][0-9]{0,8}$"}.
func id(prefixes string) shape {
	pattern := "^" + prefixes + "[1-9][0-9]{0,8}$"
	if len(prefixes) > 1 {
		pattern = "^[" + prefixes + "][1-9][0-9]{0,8}$"
	}
	return func(v any, at *pointer) *violation {
		s, ok := v.(string)
		if !ok {
			return at.fail("want a string")
		}
		if !isID(s, prefixes) {
			return at.fail("want an id matching %s", pattern)
		}
		return nil
	}
}

func isID(s, prefixes string) bool {
	if len(s) < 2 || len(s) > 10 || strings.IndexByte(prefixes, s[0]) < 0 || s[1] < '1' || s[1] > '9' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// enum is {"enum": values} for string values.
func enum(values ...string) shape {
	want := `want "` + strings.Join(values, `", "`) + `"`
	if len(values) > 1 {
		want = `want one of "` + strings.Join(values, `", "`) + `"`
	}
	return func(v any, at *pointer) *violation {
		s, ok := v.(string)
		if ok {
			for _, w := range values {
				if s == w {
					return nil
				}
			}
		}
		return at.fail("%s", want)
	}
}

// integer is {"type": "integer", "minimum": min, "maximum": max}; min is
// never negative.
func integer(min, max int64) shape {
	return func(v any, at *pointer) *violation {
		n, ok := v.(json.Number)
		if !ok {
			return at.fail("want an integer")
		}
		val, class := classify(string(n))
		if class == notInteger {
			return at.fail("want an integer")
		}
		below := class == negative || (class == small && val < uint64(min))
		above := max != unbounded && (class == huge || (class == small && val > uint64(max)))
		if below || above {
			if max == unbounded {
				return at.fail("want an integer of at least %d", min)
			}
			return at.fail("want an integer from %d to %d", min, max)
		}
		return nil
	}
}

// one is {"const": 1}: any JSON number equal to 1.
func one(v any, at *pointer) *violation {
	if n, ok := v.(json.Number); ok {
		if val, class := classify(string(n)); class == small && val == 1 {
			return nil
		}
	}
	return at.fail("want 1")
}

// numClass is what classify makes of a JSON number.
type numClass int

const (
	notInteger numClass = iota // a fraction, or a number JSON Schema validators cannot evaluate
	negative                   // an integer below zero
	huge                       // an integer of at least 10^18
	small                      // an integer from 0 to 10^18-1, returned as its value
)

// classify evaluates the JSON number literal s (already checked by the
// decoder) exactly, as math/big.Rat's SetString does for the reference JSON
// Schema validator: 1.0, 1e2 and 0.1e1 are integers, and a number whose
// decimal exponent (after moving the radix point to the end) is beyond ±10^6
// or whose exponent does not fit an int64 is no number at all, unless its
// digits are all zeros. It never does arithmetic on more than 18 digits.
func classify(s string) (uint64, numClass) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(s, "E")
	}
	var e int64
	if hasExp {
		var err error
		if e, err = strconv.ParseInt(strings.TrimPrefix(exp, "+"), 10, 64); err != nil {
			return 0, notInteger // the exponent overflows an int64
		}
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return 0, small // zero, whatever its sign and exponent
	}
	e -= int64(len(frac)) // may wrap around exactly as big.Rat's does; either way out of range
	if e > 1e6 || e < -1e6 {
		return 0, notInteger
	}
	if e < 0 {
		k := int(-e)
		if len(digits)-len(strings.TrimRight(digits, "0")) < k {
			return 0, notInteger
		}
		digits, e = digits[:len(digits)-k], 0
	}
	if neg {
		return 0, negative
	}
	if int64(len(digits))+e > 18 {
		return 0, huge
	}
	n, _ := strconv.ParseUint(digits, 10, 64)
	for range e {
		n *= 10
	}
	return n, small
}

// arrayOf is {"type": "array", "minItems": min, "maxItems": max, "items": item}.
func arrayOf(min, max int, item shape) shape {
	return func(v any, at *pointer) *violation {
		a, ok := v.([]any)
		if !ok {
			return at.fail("want an array")
		}
		if len(a) < min || (max != unbounded && len(a) > max) {
			switch {
			case max == unbounded:
				return at.fail("want an array of at least %d items", min)
			case min == 0:
				return at.fail("want an array of at most %d items", max)
			}
			return at.fail("want an array of %d to %d items", min, max)
		}
		for i, x := range a {
			if bad := item(x, at.elem(i)); bad != nil {
				return bad
			}
		}
		return nil
	}
}

// field is one entry of an object's "properties", and whether "required"
// lists it.
type field struct {
	name     string
	required bool
	shape    shape
}

func req(name string, s shape) field { return field{name, true, s} }
func opt(name string, s shape) field { return field{name, false, s} }

// object is {"type": "object", "additionalProperties": false, "required": …,
// "properties": fields}.
func object(fields ...field) shape {
	return func(v any, at *pointer) *violation {
		obj, ok := v.(map[string]any)
		if !ok {
			return at.fail("want an object")
		}
		for _, f := range fields {
			if _, ok := obj[f.name]; f.required && !ok {
				return at.fail("missing property %q", f.name)
			}
		}
		if len(obj) > len(fields) {
			return at.fail("property not allowed")
		}
	keys:
		for k := range obj {
			for _, f := range fields {
				if k == f.name {
					continue keys
				}
			}
			return at.fail("property not allowed") // never names the key: it is the document's
		}
		for _, f := range fields {
			if x, ok := obj[f.name]; ok {
				if bad := f.shape(x, at.prop(f.name)); bad != nil {
					return bad
				}
			}
		}
		return nil
	}
}

// byOp is the ops schema's "anyOf" over op kinds: each alternative is an
// object whose "op" property is a const naming its kind, so a value matches
// at most one, the one its "op" names.
func byOp(kinds map[string]shape) shape {
	return func(v any, at *pointer) *violation {
		obj, ok := v.(map[string]any)
		if !ok {
			return at.fail("want an object")
		}
		kind, ok := obj["op"]
		if !ok {
			return at.fail("missing property %q", "op")
		}
		s, _ := kind.(string)
		alt, ok := kinds[s]
		if !ok {
			return at.prop("op").fail("want one of the op kinds of schema/ops.v2.json")
		}
		return alt(obj, at)
	}
}

// opsShape is schema/ops.v2.json.
var opsShape = func() shape {
	var (
		turn         = integer(0, 100000000)
		text         = str(1, 2000)
		note         = str(0, 2000)
		quote        = opt("quote", str(1, 2000))
		decisionID   = id("D")
		constraintID = id("C")
		questionID   = id("Q")
		retiredID    = id("DCR")
		rejectedID   = id("R")
		stepStatus   = enum(StepPending, StepInProgress, StepCompleted, StepCancelled)
		step         = object(req("text", text), req("status", stepStatus))
	)
	op := func(kind string, fields ...field) shape {
		return object(append([]field{req("op", enum(kind)), quote}, fields...)...)
	}
	return object(req("ops", arrayOf(0, 64, byOp(map[string]shape{
		OpAddDecision: op(OpAddDecision,
			req("statement", text), opt("rationale", note), opt("reinstates", retiredID), req("turn", turn)),
		OpSupersedeDecision: op(OpSupersedeDecision,
			req("id", decisionID), req("statement", text), opt("rationale", note), opt("reinstates", rejectedID), req("turn", turn)),
		OpRejectDecision: op(OpRejectDecision,
			req("id", decisionID), req("turn", turn)),
		OpRejectAlternative: op(OpRejectAlternative,
			req("text", text), opt("reason", note), req("turn", turn)),
		OpAddConstraint: op(OpAddConstraint,
			req("text", text), opt("reinstates", retiredID), req("turn", turn)),
		OpSupersedeConstraint: op(OpSupersedeConstraint,
			req("id", constraintID), req("text", text), req("turn", turn)),
		OpRemoveConstraint: op(OpRemoveConstraint,
			req("id", constraintID), req("turn", turn)),
		OpAddQuestion: op(OpAddQuestion,
			req("text", text), req("turn", turn)),
		OpResolveQuestion: op(OpResolveQuestion,
			req("id", questionID), req("turn", turn)),
		OpSetPlan: op(OpSetPlan,
			req("steps", arrayOf(1, 50, step)),
			req("status", enum(PlanAccepted, PlanProvisional)),
			req("source", enum(SourceStructuredTool, SourcePlanMode, SourceConversation)),
			opt("tool", str(0, 100)),
			req("turn", turn)),
		OpSetStepStatus: op(OpSetStepStatus,
			req("step", integer(1, 1000)), req("status", stepStatus), req("turn", turn)),
	}))))
}()

// capsuleShape is schema/capsule.v1.json.
var capsuleShape = func() shape {
	var (
		turn       = integer(0, unbounded)
		counter    = integer(1, unbounded)
		text       = str(1, unbounded)
		provenance = enum(ProvenanceExtractor, ProvenanceStructured, ProvenanceMarked, ProvenanceModel)
	)
	return object(
		req("schema_version", one),
		opt("session", str(0, 512)),
		opt("a_leg", str(0, 512)),
		req("revision", integer(0, unbounded)),
		req("watermark", object(req("turn", turn), opt("digest", str(0, 128)))),
		opt("applied", arrayOf(0, 64, str(1, 256))),
		opt("next_ids", object(opt("D", counter), opt("C", counter), opt("R", counter), opt("Q", counter))),
		opt("latest_plan", object(
			req("status", enum(PlanAccepted, PlanProvisional)),
			req("source", enum(SourceStructuredTool, SourcePlanMode, SourceConversation)),
			opt("tool", str(0, 100)),
			req("steps", arrayOf(0, 1000, object(
				req("text", text),
				req("status", enum(StepPending, StepInProgress, StepCompleted, StepCancelled))))),
			opt("condensed_steps", integer(0, unbounded)),
			opt("source_turn", turn))),
		opt("decisions", arrayOf(0, unbounded, object(
			req("id", id("D")),
			req("statement", text),
			req("status", enum(StatusActive, StatusSuperseded, StatusRejected)),
			opt("rationale", str(0, unbounded)),
			opt("superseded_by", id("D")),
			opt("source_turn", turn),
			opt("closed_turn", turn),
			opt("provenance", provenance),
			opt("closed_by", provenance)))),
		opt("constraints", arrayOf(0, unbounded, object(
			req("id", id("C")),
			req("text", text),
			req("status", enum(StatusActive, StatusSuperseded)),
			opt("superseded_by", id("C")),
			opt("source_turn", turn),
			opt("closed_turn", turn),
			opt("provenance", provenance),
			opt("closed_by", provenance)))),
		opt("rejected_alternatives", arrayOf(0, unbounded, object(
			req("id", id("R")),
			req("text", text),
			opt("reason", str(0, unbounded)),
			opt("source_turn", turn),
			opt("provenance", provenance)))),
		opt("open_questions", arrayOf(0, unbounded, object(
			req("id", id("Q")),
			req("text", text),
			req("status", enum(StatusOpen, StatusResolved)),
			opt("source_turn", turn),
			opt("closed_turn", turn),
			opt("provenance", provenance),
			opt("closed_by", provenance)))),
		opt("dropped", integer(0, unbounded)),
	)
}()
