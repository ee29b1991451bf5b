package capsule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tether-dev/tether/schema"
)

// The reference: the published schema files compiled by a JSON Schema
// validator. It is a test-only dependency; the binary carries opsShape and
// capsuleShape, which must accept exactly what it accepts.
var referenceSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	docs := map[string][]byte{schema.OpsID: schema.Ops(), schema.CapsuleID: schema.Capsule()}
	for id, b := range docs {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, err
		}
	}
	out := make(map[string]*jsonschema.Schema)
	for id := range docs {
		s, err := c.Compile(id)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", id, err)
		}
		out[id] = s
	}
	return out, nil
})

// agree checks that the Go shapes and the reference validator agree on
// data, read as an ops document and as a capsule, and that ParseOps and
// Decode never accept what the reference rejects.
func agree(t *testing.T, data []byte) {
	t.Helper()
	doc, err := decodeJSON(data)
	_, refErr := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if (err == nil) != (refErr == nil) {
		t.Fatalf("decodeJSON: %v; reference decoder: %v\ninput: %.300q", err, refErr, data)
	}
	if err != nil {
		if _, err := ParseOps(data); err == nil {
			t.Fatalf("ParseOps accepted what does not decode: %.300q", data)
		}
		return
	}
	opsOK, capsuleOK := agreeDoc(t, doc)
	if _, err := ParseOps(data); err == nil && !opsOK {
		t.Fatalf("ParseOps accepted a document the schema rejects: %.2000s", data)
	}
	if _, err := Decode(data); err == nil && !capsuleOK {
		t.Fatalf("Decode accepted a document the schema rejects: %.2000s", data)
	}
}

// agreeDoc checks that the Go shapes and the reference validator agree on a
// decoded document and reports whether the reference accepts it as ops and
// as a capsule.
func agreeDoc(t *testing.T, doc any) (opsOK, capsuleOK bool) {
	t.Helper()
	ref, err := referenceSchemas()
	if err != nil {
		t.Fatal(err)
	}
	var ok [2]bool
	for i, tc := range []struct {
		name  string
		shape shape
		ref   *jsonschema.Schema
	}{
		{"ops", opsShape, ref[schema.OpsID]},
		{"capsule", capsuleShape, ref[schema.CapsuleID]},
	} {
		goErr := tc.shape.check(doc)
		refErr := tc.ref.Validate(doc)
		if (goErr == nil) != (refErr == nil) {
			data, _ := json.Marshal(doc)
			t.Fatalf("%s: Go validator: %v; reference: %v\ninput: %.2000s", tc.name, goErr, refErr, data)
		}
		if goErr != nil && !strings.HasPrefix(goErr.Error(), `schema violation at "/`) {
			t.Fatalf("%s: error names no location: %v", tc.name, goErr)
		}
		ok[i] = refErr == nil
	}
	return ok[0], ok[1]
}

// allOps uses every op kind with every property its schema allows.
const allOps = `{"ops": [
 {"op": "add_decision", "quote": "q", "statement": "s", "rationale": "r", "reinstates": "D1", "turn": 1},
 {"op": "supersede_decision", "quote": "q", "id": "D1", "statement": "s", "rationale": "", "turn": 2},
 {"op": "reject_decision", "quote": "q", "id": "D2", "turn": 3},
 {"op": "reject_alternative", "quote": "q", "text": "t", "reason": "r", "turn": 4},
 {"op": "add_constraint", "quote": "q", "text": "t", "reinstates": "R1", "turn": 5},
 {"op": "supersede_constraint", "quote": "q", "id": "C1", "text": "t", "turn": 6},
 {"op": "remove_constraint", "quote": "q", "id": "C2", "turn": 7},
 {"op": "add_question", "quote": "q", "text": "t", "turn": 8},
 {"op": "resolve_question", "quote": "q", "id": "Q1", "turn": 9},
 {"op": "set_plan", "quote": "q", "steps": [{"text": "a", "status": "pending"}, {"text": "b", "status": "in_progress"}],
  "status": "accepted", "source": "plan_mode", "tool": "update_plan", "turn": 10},
 {"op": "set_step_status", "quote": "q", "step": 1000, "status": "cancelled", "turn": 100000000}
]}`

// fullCapsule uses every property capsule.v1.json allows.
const fullCapsule = `{"schema_version": 1, "session": "s", "a_leg": "a", "revision": 7,
 "watermark": {"turn": 9, "digest": "d"}, "applied": ["t1", "t2"],
 "next_ids": {"D": 3, "C": 3, "R": 2, "Q": 2},
 "latest_plan": {"status": "provisional", "source": "conversation", "tool": "x",
  "steps": [{"text": "a", "status": "completed"}], "condensed_steps": 2, "source_turn": 4},
 "decisions": [{"id": "D1", "statement": "s", "status": "superseded", "rationale": "", "superseded_by": "D2",
  "source_turn": 1, "closed_turn": 2, "provenance": "model", "closed_by": "marked"},
  {"id": "D2", "statement": "s2", "status": "active", "source_turn": 2, "provenance": "extractor"}],
 "constraints": [{"id": "C1", "text": "t", "status": "superseded", "superseded_by": "C2", "source_turn": 1,
  "closed_turn": 3, "provenance": "structured", "closed_by": "model"}],
 "rejected_alternatives": [{"id": "R1", "text": "t", "reason": "", "source_turn": 1, "provenance": "marked"}],
 "open_questions": [{"id": "Q1", "text": "t", "status": "resolved", "source_turn": 1, "closed_turn": 2,
  "provenance": "model", "closed_by": "model"}],
 "dropped": 0}`

// hostile are documents built to find a gap between the two validators:
// numbers JSON Schema evaluates exactly, lengths counted in code points,
// duplicate and case-folded keys, and values of the wrong type.
var hostile = []string{
	`{"ops": []}`,
	`{"ops": [], "ops": null}`,
	`{"ops": null, "ops": []}`,
	`{"OPS": []}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1, "Turn": 2}]}`,
	`{"ops": [{"op": "add_question", "op": "add_decision", "text": "x", "turn": 1}]}`,
	`{"ops": [{"op": "add_decision", "statement": null, "turn": 1}]}`,
	`{"ops": [{"op": null, "text": "x", "turn": 1}]}`,
	`{"ops": [{"op": ["add_question"], "text": "x", "turn": 1}]}`,
	`{"ops": [{"text": "x", "turn": 1}]}`,
	`{"ops": [[]]}`,
	`{"ops": {}}`,
	`[]`, `null`, `1`, `"ops"`, ` {"ops": []} `, "\ufeff{\"ops\": []}",
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1.0}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1e2}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1E+2}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 0.1e1}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 10e-1}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 15e-1}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": -0}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": -0.0e-99999999}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 0e99999999999999999999}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1e99999999999999999999}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1e-99999999999999999999}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1e1000001}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1e-1000001}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1e-9223372036854775808}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1.5e-9223372036854775808}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1e9223372036854775807}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 100000000}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 100000001}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 100000000.000000000001}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 1000000000000000000000}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": 00}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": "1"}]}`,
	`{"ops": [{"op": "add_question", "text": "x", "turn": true}]}`,
	`{"ops": [{"op": "set_step_status", "step": 0.99e3, "status": "completed", "turn": 1}]}`,
	`{"ops": [{"op": "set_step_status", "step": 1001, "status": "completed", "turn": 1}]}`,
	`{"ops": [{"op": "set_step_status", "step": 1, "status": "Completed", "turn": 1}]}`,
	`{"ops": [{"op": "set_plan", "steps": [], "status": "accepted", "source": "plan_mode", "turn": 1}]}`,
	`{"ops": [{"op": "supersede_decision", "id": "D0", "statement": "x", "turn": 1}]}`,
	`{"ops": [{"op": "supersede_decision", "id": "D123456789", "statement": "x", "turn": 1}]}`,
	`{"ops": [{"op": "supersede_decision", "id": "D1234567890", "statement": "x", "turn": 1}]}`,
	`{"ops": [{"op": "supersede_decision", "id": "D1\n", "statement": "x", "turn": 1}]}`,
	`{"ops": [{"op": "supersede_decision", "id": "D１", "statement": "x", "turn": 1}]}`,
	`{"ops": [{"op": "add_decision", "statement": "x", "reinstates": "Q1", "turn": 1}]}`,
	`{"ops": [{"op": "add_decision", "statement": "x", "reinstates": "R9", "turn": 1}]}`,
	`{"ops": [{"op": "add_question", "text": "\ud800", "turn": 1}]}`,
	"{\"ops\": [{\"op\": \"add_question\", \"text\": \"\xff\", \"turn\": 1}]}",
	`{"ops": [{"op": "add_question", "text": "` + strings.Repeat("é", 2000) + `", "turn": 1}]}`,
	`{"ops": [{"op": "add_question", "text": "` + strings.Repeat("é", 2001) + `", "turn": 1}]}`,
	`{"ops": [{"op": "add_question", "text": "` + strings.Repeat(`\u00e9`, 2000) + `", "turn": 1}]}`,
	`{"ops": [{"op": "add_question", "text": "` + strings.Repeat("x", 1999) + `😀", "turn": 1}]}`,
	`{"ops": [{"op": "add_question", "text": "` + strings.Repeat("\xff", 2001) + `", "turn": 1}]}`,
	`{"ops": [` + strings.Repeat(`{"op": "add_question", "text": "x", "turn": 1},`, 63) + `{"op": "add_question", "text": "x", "turn": 1}]}`,
	`{"ops": [` + strings.Repeat(`{"op": "add_question", "text": "x", "turn": 1},`, 64) + `{"op": "add_question", "text": "x", "turn": 1}]}`,
	`{"ops": [` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `]}`,
	`{"ops": [` + strings.Repeat(`[`, 9990) + strings.Repeat(`]`, 9990) + `]}`,
	`{"schema_version": 1.0, "revision": 0, "watermark": {"turn": 0}}`,
	`{"schema_version": 1, "revision": 1e30, "watermark": {"turn": 0}}`,
	`{"schema_version": 1, "revision": 0, "watermark": {"turn": 0}, "next_ids": {"D": 0}}`,
	`{"schema_version": 1, "revision": 0, "watermark": {"turn": 0}, "next_ids": {"E": 1}}`,
	`{"schema_version": 1, "revision": 0, "watermark": {"turn": 0}, "latest_plan": {"status": "accepted", "source": "conversation", "steps": []}}`,
	`{"schema_version": 1, "revision": 0, "watermark": {}}`,
	`{"schema_version": "1", "revision": 0, "watermark": {"turn": 0}}`,
	`{"schema_version": 1, "revision": -1, "watermark": {"turn": 0}}`,
}

// seeds are the documents the agreement tests and the fuzz target start
// from: the package's testdata, its rejection tables, a rendered capsule
// and the hostile cases.
func seeds(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	data, err := os.ReadFile("testdata/ops_inventory.json")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, data, []byte(allOps), []byte(fullCapsule))
	for _, tc := range badOps {
		out = append(out, []byte(tc.in))
	}
	enc, err := Encode(richCapsule(t))
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, enc)
	for _, s := range hostile {
		out = append(out, []byte(s))
	}
	return out
}

func TestSchemaAgreement(t *testing.T) {
	for _, data := range seeds(t) {
		agree(t, data)
	}
}

func TestValidDocumentsPass(t *testing.T) {
	ops, err := ParseOps([]byte(allOps))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 11 || ops[10].StepNumber != 1000 || ops[10].Turn != 100000000 {
		t.Fatalf("ops = %+v", ops)
	}
	c, err := Decode([]byte(fullCapsule))
	if err != nil {
		t.Fatal(err)
	}
	if c.LatestPlan.Condensed != 2 || c.NextIDs["D"] != 3 || c.Decisions[0].ClosedBy != ProvenanceMarked {
		t.Fatalf("capsule = %+v", c)
	}
}

// bases are valid documents of both schemas that together set every
// property: one ops document per op kind and a full capsule.
func bases(t *testing.T) []any {
	t.Helper()
	var all struct{ Ops []json.RawMessage }
	if err := json.Unmarshal([]byte(allOps), &all); err != nil {
		t.Fatal(err)
	}
	docs := []string{fullCapsule}
	for _, op := range all.Ops {
		docs = append(docs, `{"ops": [`+string(op)+`]}`)
	}
	var out []any
	for _, s := range docs {
		doc, err := decodeJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, doc)
	}
	return out
}

// TestSchemaAgreementEverywhere puts every boundary value and wrong type in
// every place of valid documents, drops every property and adds every known
// property name to every object, one change at a time.
func TestSchemaAgreementEverywhere(t *testing.T) {
	for _, base := range bases(t) {
		n := len(slots(base, nil, nil, nil))
		for i := range n {
			at := func() (any, slot) {
				doc := clone(base)
				return doc, slots(doc, nil, nil, nil)[i]
			}
			for _, v := range boundaryValues {
				doc, s := at()
				if s.set == nil {
					agreeDoc(t, v)
					continue
				}
				s.set(clone(v))
				agreeDoc(t, doc)
			}
			if doc, s := at(); s.del != nil {
				s.del()
				agreeDoc(t, doc)
			}
			_, s := at()
			if _, ok := s.val.(map[string]any); ok {
				for _, k := range keys {
					for _, v := range []any{"x", json.Number("1")} {
						doc, s := at()
						s.val.(map[string]any)[k] = v
						agreeDoc(t, doc)
					}
				}
			}
			if _, ok := s.val.([]any); ok {
				for _, size := range sizes {
					if _, ops := base.(map[string]any)["ops"]; ops && size > 65 {
						continue // no ops array is bounded above 64
					}
					doc, s := at()
					s.set(resize(s.val.([]any), size))
					agreeDoc(t, doc)
				}
			}
		}
	}
}

// TestSchemaAgreementMutations breaks valid documents in a few places at a
// time and checks the bytes of each result end to end.
func TestSchemaAgreementMutations(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	enc, err := Encode(richCapsule(t))
	if err != nil {
		t.Fatal(err)
	}
	rich, err := decodeJSON(enc)
	if err != nil {
		t.Fatal(err)
	}
	all, err := decodeJSON([]byte(allOps))
	if err != nil {
		t.Fatal(err)
	}
	bs := append(bases(t), rich, all)
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		doc := clone(bs[r.IntN(len(bs))])
		for range 1 + r.IntN(4) {
			doc = mutate(r, doc)
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, data)
	}
}

func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = clone(x)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, x := range v {
			a[i] = clone(x)
		}
		return a
	}
	return v
}

// slot is one value of a document and how to replace or remove it.
type slot struct {
	val any
	set func(any)
	del func()
}

func slots(v any, set func(any), del func(), out []slot) []slot {
	out = append(out, slot{v, set, del})
	switch v := v.(type) {
	case map[string]any:
		// Sorted, so that a seeded run mutates the same places every time.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = slots(v[k], func(y any) { v[k] = y }, func() { delete(v, k) }, out)
		}
	case []any:
		for i, x := range v {
			// Removing an element empties the slot rather than shifting: the
			// other slots stay valid.
			out = slots(x, func(y any) { v[i] = y }, func() { v[i] = nil }, out)
		}
	}
	return out
}

var (
	boundaryValues = func() []any {
		lits := []string{
			`null`, `true`, `false`, `{}`, `[]`, `""`, `"x"`, `0`, `-0`, `1`, `-1`, `1.0`, `1.5`, `1e2`, `0.5e1`,
			`2`, `1000`, `1001`, `100000000`, `100000001`, `1e8`, `1.00000001e8`, `999999999999999999`,
			`1000000000000000000`, `18446744073709551616`, `1e1000001`, `0e-2000000`, `1e-1000001`,
			`"D1"`, `"D0"`, `"D999999999"`, `"D1000000000"`, `"C7"`, `"R3"`, `"Q12"`, `"d1"`, `"D01"`, `"X1"`,
			`"pending"`, `"in_progress"`, `"completed"`, `"cancelled"`, `"active"`, `"superseded"`, `"rejected"`,
			`"open"`, `"resolved"`, `"accepted"`, `"provisional"`, `"structured_tool"`, `"plan_mode"`,
			`"conversation"`, `"extractor"`, `"structured"`, `"marked"`, `"model"`,
			`"add_decision"`, `"set_plan"`, `"set_step_status"`, `"resolve_question"`, `"rewrite_capsule"`,
			`{"text": "a", "status": "pending"}`, `{"text": "", "status": "pending"}`,
			`{"op": "add_question", "text": "x", "turn": 1}`, `{"turn": 0}`, `{"turn": 0, "digest": ""}`,
		}
		out := make([]any, len(lits))
		for i, l := range lits {
			v, err := decodeJSON([]byte(l))
			if err != nil {
				panic(l)
			}
			out[i] = v
		}
		for _, n := range []int{99, 100, 101, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1999, 2000, 2001} {
			out = append(out, strings.Repeat("x", n))
		}
		// Lengths count code points, not bytes.
		for _, n := range []int{1, 1000, 2000, 2001} {
			out = append(out, strings.Repeat("é", n))
		}
		return out
	}()
	keys = []string{
		"op", "turn", "text", "id", "quote", "status", "steps", "step", "source", "tool", "statement", "rationale",
		"reason", "reinstates", "ops", "schema_version", "revision", "watermark", "digest", "applied", "next_ids",
		"D", "E", "latest_plan", "decisions", "constraints", "rejected_alternatives", "open_questions", "dropped",
		"superseded_by", "source_turn", "closed_turn", "provenance", "closed_by", "condensed_steps", "session",
		"a_leg", "Turn", "x",
	}
	sizes = []int{0, 1, 2, 49, 50, 51, 63, 64, 65, 999, 1000, 1001}
)

// resize returns a of n elements, repeating a's own.
func resize(a []any, n int) []any {
	if len(a) == 0 {
		a = []any{map[string]any{}}
	}
	b := make([]any, n)
	for i := range b {
		b[i] = clone(a[i%len(a)])
	}
	return b
}

// mutate changes doc in one place and returns it.
func mutate(r *rand.Rand, doc any) any {
	all := slots(doc, func(y any) { doc = y }, nil, nil)
	s := all[r.IntN(len(all))]
	switch r.IntN(5) {
	case 0:
		if s.del != nil {
			s.del()
			return doc
		}
	case 1:
		if m, ok := s.val.(map[string]any); ok {
			m[keys[r.IntN(len(keys))]] = clone(boundaryValues[r.IntN(len(boundaryValues))])
			return doc
		}
	case 2:
		if a, ok := s.val.([]any); ok {
			s.set(resize(a, sizes[r.IntN(len(sizes))]))
			return doc
		}
	}
	s.set(clone(boundaryValues[r.IntN(len(boundaryValues))]))
	return doc
}

func FuzzSchemaAgreement(f *testing.F) {
	for _, data := range seeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}

func TestViolationsNameTheLocation(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"ops": [{"op": "add_question", "text": "x", "turn": -1}]}`,
			`schema violation at "/ops/0/turn": want an integer from 0 to 100000000`},
		{`{"ops": [{"op": "add_question", "text": "x", "turn": 1}, {"op": "rewrite", "turn": 1}]}`,
			`schema violation at "/ops/1/op": want one of the op kinds of schema/ops.v2.json`},
		{`{"ops": [{"op": "set_plan", "steps": [{"text": "a", "status": "done"}], "status": "accepted", "source": "plan_mode", "turn": 1}]}`,
			`schema violation at "/ops/0/steps/0/status": want one of "pending", "in_progress", "completed", "cancelled"`},
		{`{"ops": [{"op": "add_decision", "statement": "x", "turn": 1, "SECRET": 1}]}`,
			`schema violation at "/ops/0": property not allowed`},
		{`{"ops": [{"op": "add_decision", "turn": 1}]}`,
			`schema violation at "/ops/0": missing property "statement"`},
		{`{"ops": [{"op": "supersede_decision", "id": "C1", "statement": "x", "turn": 1}]}`,
			`schema violation at "/ops/0/id": want an id matching ^D[1-9][0-9]{0,8}$`},
		{`{"ops": [{"op": "add_question", "text": "", "turn": 1}]}`,
			`schema violation at "/ops/0/text": want a string of 1 to 2000 characters`},
		{`{"ops": "x"}`, `schema violation at "/ops": want an array`},
		{`{}`, `schema violation at "/": missing property "ops"`},
	}
	for _, tc := range tests {
		_, err := ParseOps([]byte(tc.in))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseOps(%s) = %v, want %q", tc.in, err, tc.want)
		}
		if strings.Contains(fmt.Sprint(err), "SECRET") {
			t.Errorf("error carries a key of the document: %v", err)
		}
	}
	_, err := Decode([]byte(`{"schema_version": 1, "revision": 0, "watermark": {"turn": 0}, "decisions": [{"id": "D1", "statement": "x", "status": "maybe"}]}`))
	if want := `schema violation at "/decisions/0/status": want one of "active", "superseded", "rejected"`; !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Errorf("Decode = %v, want %q", err, want)
	}
}

// TestClassify compares classify with math/big.Rat, which the reference
// validator evaluates numbers with, over boundary literals and random ones.
func TestClassify(t *testing.T) {
	lits := []string{
		"0", "-0", "0.0", "0e5", "-0.000e-99999999999", "0e99999999999999999999", "1", "-1", "1.0", "1.5",
		"10e-1", "15e-1", "100e-2", "0.1e1", "1e2", "1E+2", "1e-0", "999999999999999999", "1000000000000000000",
		"999999999999999999.0", "99999999999999999.9e1", "18446744073709551616", "-18446744073709551616",
		"1e1000001", "1e-1000001", "10e-1000001", "1e9223372036854775807", "1e9223372036854775808",
		"1e-9223372036854775808", "1.5e-9223372036854775808", "0.5e-9223372036854775807",
		"1.000000000000000000000000000001", "-1.5", "-0.5e1", "123456789012345678e0", "0.0000000000000000001e19",
	}
	if !testing.Short() {
		// At the edge of what big.Rat evaluates; each costs it a second.
		lits = append(lits, "1e1000000", "1e-1000000", "10e-1000000")
	}
	r := rand.New(rand.NewPCG(3, 4))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "0000123456789"[r.IntN(13)]
		}
		return string(b)
	}
	for range 20000 {
		s := digits(1 + r.IntN(12))
		s = strings.TrimLeft(s, "0")
		if s == "" {
			s = "0"
		}
		if r.IntN(2) == 0 {
			s += "." + digits(1+r.IntN(12))
		}
		if r.IntN(2) == 0 {
			s += "e" + []string{"", "+", "-"}[r.IntN(3)] + fmt.Sprint(r.IntN(40))
		}
		if r.IntN(3) == 0 {
			s = "-" + s
		}
		lits = append(lits, s)
	}
	limit := new(big.Rat).SetInt64(1e18)
	for _, s := range lits {
		n, class := classify(s)
		want, ok := new(big.Rat).SetString(s)
		var wantClass numClass
		switch {
		case !ok || !want.IsInt():
			wantClass = notInteger
		case want.Sign() < 0:
			wantClass = negative
		case want.Cmp(limit) >= 0:
			wantClass = huge
		default:
			wantClass = small
		}
		if class != wantClass || (class == small && new(big.Rat).SetUint64(n).Cmp(want) != 0) {
			t.Errorf("classify(%s) = %d, %d; big.Rat: %v, %v (class %d)", s, n, class, want, ok, wantClass)
		}
	}
}

// TestHugeExponentsAreCheap: an answer's numbers are judged from their
// digits, never by big-number arithmetic. The JSON Schema validator that
// checked answers before evaluated 1e999999 exactly with math/big once per
// op kind it tried: this 3.4 KB answer cost it 4.4 GB of allocations and a
// minute of CPU.
func TestHugeExponentsAreCheap(t *testing.T) {
	op := `{"op": "add_question", "text": "x", "turn": 1e999999}`
	in := []byte(`{"ops": [` + strings.TrimSuffix(strings.Repeat(op+",", MaxOps), ",") + `]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseOps(in)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("ParseOps = %v, want ErrMalformed", err)
	}
	n := after.TotalAlloc - before.TotalAlloc
	if n > 4<<20 {
		t.Fatalf("ParseOps allocated %d bytes for a %d-byte answer", n, len(in))
	}
}
