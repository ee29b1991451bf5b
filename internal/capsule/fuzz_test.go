package capsule

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseOps(t *testing.T) {
	data, err := os.ReadFile("testdata/ops_inventory.json")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := ParseOps(data)
	if err != nil {
		t.Fatalf("ParseOps: %v", err)
	}
	c, err := Apply(nil, ops, delta(0, 3, 0, 1), "tx")
	if err != nil {
		t.Fatalf("Apply parsed ops: %v", err)
	}
	if s := c.Stats(); s.ActiveDecisions != 1 || s.Steps != 3 || s.PendingSteps != 2 || s.Rejected != 1 || s.Questions != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

var badOps = []struct {
	name, in string
}{
	{"not json", `{"ops": [`},
	{"trailing data", `{"ops": []} {}`},
	{"no ops key", `{}`},
	{"ops null", `{"ops": null}`},
	{"unknown top-level field", `{"ops": [], "capsule": {}}`},
	{"unknown op", `{"ops": [{"op": "rewrite_capsule", "turn": 1}]}`},
	{"unknown field in op", `{"ops": [{"op": "add_decision", "statement": "x", "turn": 1, "status": "active"}]}`},
	{"missing turn", `{"ops": [{"op": "add_decision", "statement": "x"}]}`},
	{"empty statement", `{"ops": [{"op": "add_decision", "statement": "", "turn": 1}]}`},
	{"negative turn", `{"ops": [{"op": "add_question", "text": "x", "turn": -1}]}`},
	{"fractional turn", `{"ops": [{"op": "add_question", "text": "x", "turn": 1.5}]}`},
	{"wrong id prefix", `{"ops": [{"op": "supersede_decision", "id": "C1", "statement": "x", "turn": 1}]}`},
	{"bad plan status", `{"ops": [{"op": "set_plan", "status": "final", "source": "conversation", "steps": [{"text": "a", "status": "pending"}], "turn": 1}]}`},
	{"bad step status", `{"ops": [{"op": "set_step_status", "step": 1, "status": "done", "turn": 1}]}`},
	{"step zero", `{"ops": [{"op": "set_step_status", "step": 0, "status": "completed", "turn": 1}]}`},
	{"too many ops", `{"ops": [` + strings.Repeat(`{"op": "add_question", "text": "x", "turn": 1},`, MaxOps) + `{"op": "add_question", "text": "x", "turn": 1}]}`},
	{"too large", `{"ops": [{"op": "add_question", "text": "` + strings.Repeat("x", MaxOpsBytes) + `", "turn": 1}]}`},
}

func TestParseOpsRejects(t *testing.T) {
	for _, tc := range badOps {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := ParseOps([]byte(tc.in))
			if !errors.Is(err, ErrMalformed) || ops != nil {
				t.Fatalf("ParseOps = %v, %v; want ErrMalformed", ops, err)
			}
		})
	}
}

func TestParseOpsErrorsNeverCarryValues(t *testing.T) {
	_, err := ParseOps([]byte(`{"ops": [{"op": "add_decision", "statement": "SECRET-VALUE", "turn": "SECRET-TURN"}]}`))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseOps(f *testing.F) {
	if data, err := os.ReadFile("testdata/ops_inventory.json"); err == nil {
		f.Add(data)
	}
	for _, tc := range badOps {
		if len(tc.in) < 4096 {
			f.Add([]byte(tc.in))
		}
	}
	f.Add([]byte(`{"ops":[{"op":"supersede_decision","id":"D1","statement":"y","turn":3},{"op":"add_decision","statement":"x","reinstates":"D1","turn":5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := ParseOps(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			return
		}
		if len(ops) > MaxOps {
			t.Fatalf("%d ops accepted", len(ops))
		}
		// Whatever parses must be safe to apply: either valid or ErrInvalidOp.
		d := Delta{FromTurn: 0, ToTurn: 1 << 20}
		for i := range 16 {
			d.UserTurns = append(d.UserTurns, i)
		}
		c, err := Apply(nil, ops, d, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrInvalidOp) {
				t.Fatalf("Apply error does not wrap ErrInvalidOp: %v", err)
			}
			return
		}
		enc, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(enc); err != nil {
			t.Fatalf("Decode(Encode(Apply(ParseOps))): %v", err)
		}
		if _, n := Strip(Render(c)); n != 1 {
			t.Fatalf("rendered block strips as %d blocks", n)
		}
	})
}

func readSummaries(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open("testdata/summaries.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s string
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			tb.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestStripRealSummaries(t *testing.T) {
	block := Render(richCapsule(t))
	for _, s := range readSummaries(t) {
		if got, n := Strip(s); got != s || n != 0 {
			t.Errorf("Strip changed a summary without a block: %q", s)
		}
		merged := s + "\n\n" + block
		got, n := Strip(merged + "\n")
		if n != 1 || got != s+"\n\n" {
			t.Errorf("Strip(summary+block) = %q, %d", got, n)
		}
	}
}

func FuzzStrip(f *testing.F) {
	block := Render(richCapsule(f))
	for _, s := range readSummaries(f) {
		f.Add(s)
		f.Add(s + "\n" + block)
		f.Add(block + s + block[:len(block)/2])
	}
	f.Add("a<continuity-capsule><continuity-capsule>x</continuity-capsule>y</continuity-capsule>b")
	f.Add("</continuity-capsule><CONTINUITY-CAPSULE revision='1'")
	f.Fuzz(func(t *testing.T, s string) {
		out, n := Strip(s)
		if n < 0 || len(out) > len(s) {
			t.Fatalf("Strip grew the text or returned %d", n)
		}
		if indexOpen(out, 0, true) >= 0 || indexFold(out, closeTag, 0) >= 0 {
			t.Fatalf("Strip left a tag in %q", out)
		}
		if again, m := Strip(out); again != out || m != 0 {
			t.Fatalf("Strip is not idempotent")
		}
		// Streamed in pieces, the same text comes out.
		for _, size := range []int{1, 7, 64} {
			if got, m := stripInPieces(s, size); got != out || m != n {
				t.Fatalf("streamed in pieces of %d: %q, %d; Strip: %q, %d", size, got, m, out, n)
			}
		}
		if _, _, ok := Find(out); ok {
			t.Fatalf("Find found a block after Strip")
		}
		// Appending a fresh block always yields exactly one, found by Find.
		merged := out + "\n" + block
		if _, m := Strip(merged); m != 1 {
			t.Fatalf("merged text has %d blocks", m)
		}
		if _, _, ok := Find(merged); !ok {
			t.Fatalf("Find missed the appended block")
		}
	})
}
