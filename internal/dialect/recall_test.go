package dialect

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// agentBody is an Anthropic Messages request as Claude Code sends one: the
// history (turns tool calls long), then system prompt, tools and metadata.
// The cache_control breakpoint rides on the newest user item, so the item
// that carried it in the previous request changes.
func agentBody(session, turns int, stream bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"model":"claude-x","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"Session %d: add a reservation endpoint. Make a plan first."}]}`, session)
	for i := range turns {
		cc := ""
		if i == turns-1 {
			cc = `,"cache_control":{"type":"ephemeral"}`
		}
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"text","text":"Looking at file %d."},{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"/repo/f%d.go"}}]}`, i, i, i)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q%s}]}`, i, strings.Repeat("func reserve() error { return nil }\n", 8), cc)
	}
	b.WriteString(`],"system":[{"type":"text","text":"You are Claude Code."}],"tools":[{"name":"Read","input_schema":{"type":"object"}}],"metadata":{"user_id":"u"}`)
	if stream {
		b.WriteString(`,"stream":true`)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// sameParse checks that ParseFrom answered exactly what Parse answers for
// body: the same index (fields, spans, items), the same item keys, or the
// same error.
func sameParse(t *testing.T, scope string, name Name, body []byte) *View {
	t.Helper()
	got, gerr := ParseFrom(scope, name, "/p", nil, body)
	want, werr := Parse(name, "/p", nil, body)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("ParseFrom error %v, Parse error %v, body %q", gerr, werr, body)
	}
	if werr != nil {
		for _, e := range []error{ErrInvalidJSON, ErrTooDeep, ErrDuplicateKey, ErrTooManyFields} {
			if errors.Is(gerr, e) != errors.Is(werr, e) {
				t.Fatalf("ParseFrom error %v, Parse error %v", gerr, werr)
			}
		}
		return nil
	}
	if !reflect.DeepEqual(got.idx, want.idx) {
		t.Fatalf("ParseFrom index %+v\nParse index %+v\nbody %q", got.idx, want.idx, body)
	}
	if !reflect.DeepEqual(got.ItemKeys(), want.ItemKeys()) {
		t.Fatalf("ParseFrom item keys differ from Parse's")
	}
	if !reflect.DeepEqual(got.PrefixIDs(), want.PrefixIDs()) {
		t.Fatalf("ParseFrom prefix ids differ from Parse's")
	}
	return got
}

// recallSmall lets a fresh recall take bodies of any size, compared in
// blocks of 16 bytes, for one test.
func recallSmall(t testing.TB) {
	n, r := recallMin, recalled
	recallMin, recalled = 0, newRecall(16, 16<<20)
	t.Cleanup(func() { recallMin, recalled = n, r })
}

func TestParseFromAgreesWithParse(t *testing.T) {
	recallSmall(t)
	scope := t.Name()
	var prev *View
	for turn := 1; turn <= 40; turn++ {
		body := agentBody(1, turn, turn%3 == 0)
		v := sameParse(t, scope, AnthropicMessages, body)
		if prev != nil && turn > 2 {
			// The test is about resuming: the request must be found again,
			// with nearly all its items (the last block may be short).
			from, shared := recalled.best(recalled.head(scope, AnthropicMessages, body), new(newBlockSums(recalled, body)))
			if from != v.rec || shared < len(v.idx.items)-1 {
				t.Fatalf("turn %d: the recall does not hold the newest request", turn)
			}
		}
		prev = v
	}
	// A fork from turn 10, a retry, an edit in the middle, the tail
	// changed, broken and duplicated tails: each the same as Parse.
	base := agentBody(1, 30, false)
	sameParse(t, scope, AnthropicMessages, agentBody(1, 10, false))
	sameParse(t, scope, AnthropicMessages, base)
	sameParse(t, scope, AnthropicMessages, []byte(strings.Replace(string(base), "f12.go", "f12_renamed.go", 1)))
	sameParse(t, scope, AnthropicMessages, []byte(strings.Replace(string(base), `"metadata":{"user_id":"u"}`, `"metadata":{"user_id":"v"},"temperature":0.5`, 1)))
	for _, tail := range []string{`,"messages":[]}`, `,"system":1}`, `,}`, `}}`, `,"x":[[[}`, ` `, `,"x":"\u00"}`} {
		bad := append(base[:len(base)-1:len(base)-1], tail...)
		sameParse(t, scope, AnthropicMessages, bad)
	}
	// Broken right after the shared items.
	at := strings.Index(string(base), `,{"role":"assistant","content":[{"type":"text","text":"Looking at file 20."`)
	for _, mid := range []string{`,`, `,]`, ` ]`, `,{"role":"user"`, `,{}]`, `]`} {
		sameParse(t, scope, AnthropicMessages, append(append([]byte{}, base[:at]...), mid...))
	}
}

func TestParseFromOtherDialects(t *testing.T) {
	recallSmall(t)
	for _, name := range []Name{OpenAIChat, OpenAIResponses, Gemini} {
		key := convKey(name)
		for turn := 1; turn < 12; turn++ {
			var b strings.Builder
			fmt.Fprintf(&b, `{"model":"m","%s":[`, key)
			for i := range turn {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"role":"user","content":%q}`, strings.Repeat("x", 3000+i))
			}
			b.WriteString(`],"stream":true}`)
			sameParse(t, "s", name, []byte(b.String()))
		}
	}
	if _, err := ParseFrom("s", "nope", "/", nil, agentBody(1, 40, false)); !errors.Is(err, ErrUnknownDialect) {
		t.Fatalf("unknown dialect: %v", err)
	}
}

// TestParseFromScoped: a body is resumed only from bodies of its own scope.
func TestParseFromScoped(t *testing.T) {
	body := agentBody(7, 30, false)
	sameParse(t, "alice", AnthropicMessages, body)
	if from, _ := recalled.best(recalled.head("mallory", AnthropicMessages, body), new(newBlockSums(recalled, body))); from != nil {
		t.Fatal("another scope's request is a candidate")
	}
}

// TestRecallBounded: the bodies kept stay within the budget however many
// conversations arrive.
func TestRecallBounded(t *testing.T) {
	defer func(c *recall) { recalled = c }(recalled)
	recalled = newRecall(4<<10, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 600 {
		body := agentBody(1000+i, 60+r.IntN(60), false) // ~60–120 KiB
		if _, err := ParseFrom("bounded", AnthropicMessages, "/p", nil, body); err != nil {
			t.Fatal(err)
		}
	}
	recalled.mu.Lock()
	defer recalled.mu.Unlock()
	n, held := 0, 0
	for _, b := range recalled.m {
		for _, cd := range b {
			n += cd.r.size
			held++
		}
	}
	if n != recalled.size || n > recalled.budget || n < recalled.budget/2 {
		t.Fatalf("recall holds %d bytes (counted %d), budget %d", n, recalled.size, recalled.budget)
	}
	if held != recalled.held {
		t.Fatalf("recall holds %d records, counted %d", held, recalled.held)
	}
	// What the order keeps of records gone keeps them alive: it is
	// pruned once it is twice what the recall holds.
	if len(recalled.order) > 2*held+64+1 {
		t.Fatalf("eviction order grew to %d for %d records", len(recalled.order), held)
	}
}

// FuzzParseFrom: a body made from an earlier one (a cut, bytes inserted,
// the rest kept) parses with ParseFrom exactly as with Parse.
func FuzzParseFrom(f *testing.F) {
	recallSmall(f)
	f.Add([]byte(`{"model":"m","messages":[{"a":1},{"b":2}],"system":"s"}`), 22, []byte(`{"c":3},`))
	f.Add([]byte(`{"model":"m","messages":[{"a":1},{"b":2}],"system":"s"}`), 38, []byte(`,{"c":[3]}`))
	f.Add([]byte(`{"model":"m","messages":[{"a":1},{"b":2}],"system":"s"}`), 39, []byte(`,"x":1`))
	f.Add([]byte(`{"messages":[1,2,3]}`), 18, []byte(`,4,"messages"`))
	f.Add([]byte(`{"messages":[{"a":"\u0041"},{"b":[]}],"messages":1}`), 30, []byte(`]`))
	// A number, the last item the requests share whole blocks up to,
	// goes on in the next.
	f.Add([]byte(`{"p":"`+strings.Repeat("x", 300)+`","messages":[1,`+strings.Repeat(" ", 20)+`123],"s":"`+strings.Repeat("y", 100)+`"}`), 345, []byte(`4`))
	f.Fuzz(func(t *testing.T, prev []byte, cut int, insert []byte) {
		scope := fmt.Sprint(rand.Uint64())
		if _, err := ParseFrom(scope, AnthropicMessages, "/p", nil, prev); err != nil {
			return
		}
		if cut < 0 || cut > len(prev) {
			cut = len(prev)
		}
		next := append(append(append([]byte{}, prev[:cut]...), insert...), prev[cut:]...)
		sameParse(t, scope, AnthropicMessages, next)
	})
}

// TestParseFromSharesAllButTheChangedItem: an agent's next request resends
// its previous one with the cache breakpoint moved off the last item. The
// scan resumes at that item, not at the start of the 4 KiB block it lies
// in, and every item before it keeps the key it had (nothing before it is
// scanned or hashed again).
func TestParseFromSharesAllButTheChangedItem(t *testing.T) {
	scope := t.Name()
	var prev *View
	for turn := 30; turn <= 36; turn++ {
		v := sameParse(t, scope, AnthropicMessages, agentBody(3, turn, false))
		if prev != nil {
			if want := len(prev.idx.items) - 1; len(v.known) != want {
				t.Fatalf("turn %d: resumed after %d items, want %d (all but the one whose breakpoint moved)", turn, len(v.known), want)
			}
		}
		prev = v
	}
	// A request that repeats the previous one whole (a retry) shares
	// every item.
	v := sameParse(t, scope, AnthropicMessages, agentBody(3, 36, false))
	if len(v.known) != len(prev.idx.items) {
		t.Fatalf("a retry resumed after %d of %d items", len(v.known), len(prev.idx.items))
	}
}

// TestParseFromManyConversationsOpeningAlike: a caller's conversations
// whose bodies open with the same kilobytes (every Claude Code session's
// first message opens with the same system reminders) share the recall's
// candidates for that opening; eighty of them taking turns each resume
// their own previous request.
func TestParseFromManyConversationsOpeningAlike(t *testing.T) {
	scope := t.Name()
	opener := strings.Repeat("<system-reminder>the same reminders in every session</system-reminder> ", 90)
	body := func(conv, turns int) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":%q},{"type":"text","text":"Session %d"}]}`, opener, conv)
		for i := range turns {
			cc := ""
			if i == turns-1 {
				cc = `,"cache_control":{"type":"ephemeral"}`
			}
			fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"n":%d}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q%s}]}`,
				i, i, i, strings.Repeat("x", 500), cc)
		}
		b.WriteString(`],"system":"s"}`)
		return []byte(b.String())
	}
	const convs = 80
	prev := make([]*View, convs)
	for turn := 20; turn < 24; turn++ {
		for c := range convs {
			v, err := ParseFrom(scope, AnthropicMessages, "/v1/messages", nil, body(c, turn))
			if err != nil {
				t.Fatal(err)
			}
			v.ItemKeys() // as every request's readers make them
			if p := prev[c]; p != nil && len(v.known) < len(p.idx.items)-1 {
				t.Fatalf("conversation %d, turn %d: resumed after %d of the previous request's %d items", c, turn, len(v.known), len(p.idx.items))
			}
			prev[c] = v
		}
	}
}

// FuzzRecallBest: the recall picks the request an earlier reading picked,
// one that compared every candidate's whole blocks (the bytes themselves
// here, not their sums) and searched each candidate's items; the recall
// instead keeps the sums only up to each record's last item, and settles
// most candidates from copies of their first sums and item counts.
// Bodies are made from one by cutting it and inserting bytes, after 256
// bytes they all open with (a candidate shares the body's first
// recallHead bytes), in blocks of 16 to 143 bytes (numbers that end at a
// block's edge are where a record's last item could read differently).
func FuzzRecallBest(f *testing.F) {
	f.Add(byte(0), []byte(`"messages":[{"a":"0123456789"},{"b":"0123456789abcdef"},12345678901,2],"s":1}`), []byte{40, 60, 200, 80}, []byte(`,7`))
	f.Add(byte(80), []byte(`"messages":[1234567890123,45678901234567,89,0],"system":"012345678901234567890123456789"}`), []byte{120, 121, 122}, []byte(`9`))
	f.Add(byte(100), []byte(`"messages":[{"a":1},{"b":2},{"c":3},{"d":4}],"system":"s"}`), []byte{100, 150, 250, 10}, []byte(`{"e":5},`))
	f.Add(byte(16), []byte(`"messages":[`+strings.Repeat(`{"text":"0123456789"},123456,`, 20)+`0],"system":"s"}`), []byte{10, 100, 200, 250, 255}, []byte(`78,`))
	// A number that ends at a block's edge, then goes on in a more recent
	// request.
	f.Add(byte(0), []byte(`"messages":[1,`+strings.Repeat(" ", 15)+`123],"s":"`+strings.Repeat("y", 100)+`"}`), []byte{0, 59}, []byte(`4`))
	n := recallMin
	defer func() { recallMin = n }()
	recallMin = 0
	pad := `{"p":"` + strings.Repeat("x", recallHead-8) + `",`
	f.Fuzz(func(t *testing.T, block byte, base, cuts, insert []byte) {
		c := newRecall(16+int(block)%128, 16<<20)
		defer func(r *recall) { recalled = r }(recalled)
		recalled = c
		bodies := map[*recallRec][]byte{}
		variant := func(i int, c byte) []byte {
			cut := int(c) * len(base) / 256
			return append(append(append([]byte(pad), base[:cut]...), insert[:min(len(insert), i)]...), base[cut:]...)
		}
		for i, cut := range cuts[:min(len(cuts), 8)] {
			body := variant(i, cut)
			if r := remember(c, body); r != nil {
				bodies[r] = body
			}
		}
		for i, body := range [][]byte{variant(0, 0), variant(len(cuts), 128)} {
			h := c.head("s", AnthropicMessages, body)
			got, gotShared := c.best(h, new(newBlockSums(c, body)))
			want, wantShared := bestByBytes(t, c, h, body, bodies)
			if got != want || gotShared != wantShared {
				t.Fatalf("body %d: best picked %p sharing %d items, want %p sharing %d\nbody %q", i, got, gotShared, want, wantShared, body)
			}
		}
	})
}

// TestRecallBestNumberAtBlockEdge: a record whose last item is a number
// that ends at a block's edge keeps the sum of the block after it, which
// says whether the number ends there in a body that shares the blocks
// before: the request resent whole is its own best candidate, not a more
// recent one in which the number goes on.
func TestRecallBestNumberAtBlockEdge(t *testing.T) {
	defer func(r *recall) { recalled = r }(recalled)
	c := newRecall(16, 16<<20)
	recalled = c
	head := `{"p":"` + strings.Repeat("x", recallHead) + `","messages":[1,`
	head += strings.Repeat(" ", 16+(16-(len(head)+3)%16)%16)
	older := []byte(head + `123],"s":"` + strings.Repeat("y", 100) + `"}`)
	newer := []byte(head + `1234],"s":"` + strings.Repeat("y", 100) + `"}`)
	if at := len(head) + 3; at%c.block != 0 {
		t.Fatalf("the number ends at %d, not at a block's edge", at)
	}
	bodies := map[*recallRec][]byte{}
	for _, body := range [][]byte{older, newer} {
		bodies[remember(c, body)] = body
	}
	h := c.head("s", AnthropicMessages, older)
	got, shared := c.best(h, new(newBlockSums(c, older)))
	want, wantShared := bestByBytes(t, c, h, older, bodies)
	if got != want || shared != wantShared || bodies[got] == nil || string(bodies[got]) != string(older) {
		t.Fatalf("best picked %q sharing %d items, want the request itself sharing %d", bodies[got], shared, wantShared)
	}
}

// remember makes the record of body and puts it first among its head's
// candidates (none replaced), as ParseFrom does; nil when body has no
// conversation.
func remember(c *recall, body []byte) *recallRec {
	idx, err := scanBody(body, "messages")
	if err != nil || idx.conv < 0 {
		return nil
	}
	r := newRecallRec(body, idx, new(newBlockSums(c, body)).upTo(c.useful(len(body), idx.items)), nil)
	c.put(c.head("s", AnthropicMessages, body), r, nil, false)
	return r
}

// bestByBytes is recall.best as it read before records kept their sums
// only up to their last item, with the bytes of the candidates' bodies in
// place of their sums.
func bestByBytes(t *testing.T, c *recall, h uint64, body []byte, bodies map[*recallRec][]byte) (*recallRec, int) {
	c.mu.Lock()
	cands := slices.Clone(c.m[h])
	c.mu.Unlock()
	var best *recallRec
	most, mostBlocks := 0, 0
	for _, cd := range cands {
		old, ok := bodies[cd.r]
		if !ok {
			t.Fatal("a candidate of another test")
		}
		full := min(len(body), len(old)) / c.block
		n := 0
		for n < full && bytes.Equal(body[n*c.block:(n+1)*c.block], old[n*c.block:(n+1)*c.block]) {
			n++
		}
		if n <= mostBlocks {
			continue
		}
		items := cd.r.idx.items
		k := sort.Search(len(items), func(i int) bool { return items[i].end > n*c.block })
		if k > most {
			best, most, mostBlocks = cd.r, k, n
		}
	}
	return best, most
}
