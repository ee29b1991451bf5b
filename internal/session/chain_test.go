package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/dialect"
)

// The history digests taken from the chain memo (links this process
// computed for an earlier request) are the digests computed from scratch:
// on every captured agent session, request by request, twice over, and for
// an item moved to another position of the chain.
func TestHistoryChainMemoMatchesFullDigest(t *testing.T) {
	for _, name := range []string{"claude", "codex", "codex-openai-provider", "opencode", "pi", "pi-anthropic-messages"} {
		caps := loadCaptures(t, name)
		seqs := make([]int, 0, len(caps))
		for s := range caps {
			seqs = append(seqs, s)
		}
		slices.Sort(seqs)
		links := 0
		for round := range 2 {
			for _, s := range seqs {
				v := caps[s].view(t)
				want := history(v.Messages(), nil, nil)
				got := history(v.Messages(), v.ItemKeys(), v.PrefixIDs())
				if len(got) != len(want) {
					t.Fatalf("%s seq %d round %d: %d entries, want %d", name, s, round, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s seq %d round %d: entry %d = %+v, want %+v", name, s, round, i, got[i], want[i])
					}
				}
				links += len(got)
			}
		}
		if links == 0 {
			t.Fatalf("%s: no history entries", name)
		}
	}
	// The same item after a different prefix is a different link.
	first := history(chatView(t, nil, u("one"), a("two"), u("same words here")).Messages(), nil, nil)
	v := chatView(t, nil, u("other"), a("two"), u("same words here"))
	moved := history(v.Messages(), v.ItemKeys(), v.PrefixIDs())
	if moved[2].chain == first[2].chain {
		t.Fatal("an item after another history digests like the first")
	}
	if again := history(v.Messages(), nil, nil); again[2].chain != moved[2].chain {
		t.Fatal("memoised link differs from the full digest")
	}
	// A fork: the remembered history's prefix, then other items.
	base := conversation("fork", 12)
	b := chatView(t, nil, base...)
	history(b.Messages(), b.ItemKeys(), b.PrefixIDs())
	for _, next := range [][]msg{
		append(base[:7:7], u("a different turn seven"), a("and eight")),
		append(base[:12:12], u("one more")),
		base[:5],
	} {
		f := chatView(t, nil, next...)
		got, want := history(f.Messages(), f.ItemKeys(), f.PrefixIDs()), history(f.Messages(), nil, nil)
		if len(got) != len(want) {
			t.Fatalf("fork of %d items: %d entries, want %d", len(next), len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("fork of %d items: entry %d = %+v, want %+v", len(next), i, got[i], want[i])
			}
		}
	}
}

// Entries extended in place (the first request to extend a remembered
// history appends to it) are never seen or overwritten by another
// extension of the same history: two turns forked from one history and a
// turn after the first fork each digest as from scratch, and the first
// fork's entries are unchanged after the others.
func TestHistoryExtendedInPlaceStaysOwn(t *testing.T) {
	base := conversation("inplace", 10)
	digest := func(ms []msg) []entry {
		// chatView's system prompt names the length; this one does not,
		// so the requests share their prefixes.
		var b strings.Builder
		b.WriteString(`{"model":"m","messages":[{"role":"system","content":"fixed"}`)
		for _, m := range ms {
			fmt.Fprintf(&b, `,{"role":%q,"content":%q}`, m.role, m.text)
		}
		b.WriteString("]}")
		v, err := dialect.Parse(dialect.OpenAIChat, "/v1/chat/completions", nil, []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		got, want := history(v.Messages(), v.ItemKeys(), v.PrefixIDs()), history(v.Messages(), nil, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("%d items: memoised entries differ from the full digest", len(ms))
		}
		return got
	}
	digest(base)
	b := append(base[:20:20], u("fork b"), a("b answers"))
	first := digest(b)
	kept := slices.Clone(first)
	digest(append(base[:20:20], u("fork c"), a("c answers"), u("c again")))
	digest(append(b[:22:22], u("after b")))
	digest(append(base[:20:20], u("fork d")))
	if !slices.Equal(first, kept) {
		t.Fatal("another extension overwrote the first fork's entries")
	}
}

// TestChainDigestFormat: head keys are made from the chain digests and
// stored, so a link's digest is a format: SHA-256 over the previous link
// and the message's fields (role, item type, normalised text, each tool
// call's name and compact arguments, each tool result's normalised text,
// an image mark), each written with its length. Recomputed here field by
// field over captured sessions of every agent.
func TestChainDigestFormat(t *testing.T) {
	field := func(h hash.Hash, b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	for _, name := range []string{"claude", "codex", "opencode", "pi"} {
		links := 0
		for _, c := range loadCaptures(t, name) {
			msgs := c.view(t).Messages()
			var prev [32]byte
			for _, e := range history(msgs, nil, nil) {
				m := msgs[e.raw]
				h := sha256.New()
				h.Write(prev[:])
				field(h, []byte(m.Role))
				field(h, []byte(itemType(m.Type)))
				field(h, []byte(normText(m.Text)))
				for _, tc := range m.ToolCalls {
					field(h, []byte("call"))
					field(h, []byte(tc.Name))
					var buf bytes.Buffer
					if json.Compact(&buf, tc.Arguments) == nil {
						field(h, buf.Bytes())
					} else {
						field(h, bytes.TrimSpace(tc.Arguments))
					}
				}
				for _, tr := range m.ToolResults {
					field(h, []byte("result"))
					field(h, []byte(normText(tr.Text)))
				}
				if m.HasImage {
					field(h, []byte("image"))
				}
				h.Sum(prev[:0])
				if e.chain != prev {
					t.Fatalf("%s: the link of message %d is not the documented digest", name, e.raw)
				}
				links++
			}
		}
		if links == 0 {
			t.Fatalf("%s: no links checked", name)
		}
	}
}
