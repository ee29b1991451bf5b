package server

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/tether-dev/tether/internal/dialect"
)

// relayEvents splits stream with the relay's reader, fed in small pieces.
func relayEvents(t *testing.T, stream []byte) []dialect.Event {
	t.Helper()
	s := &Server{}
	b := s.getRelay(iotest.HalfReader(bytes.NewReader(stream)))
	defer s.putRelay(b)
	var evs []dialect.Event
	for {
		raw, _, err := b.next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatalf("relay reader: %v", err)
		}
		if ev, ok := b.parse(raw); ok {
			ev.Data = bytes.Clone(ev.Data)
			evs = append(evs, ev)
		}
	}
}

// readerEvents splits stream with dialect.SSEReader, the reference.
func readerEvents(stream []byte) []dialect.Event {
	rd := dialect.NewSSEReader(bytes.NewReader(stream))
	var evs []dialect.Event
	for {
		ev, err := rd.Next()
		if err != nil {
			return evs
		}
		evs = append(evs, ev)
	}
}

var relaySeeds = []string{
	"event: message_start\ndata: {\"type\":\"message_start\"}\n\n: keep-alive\n\nevent: ping\ndata: {}\n\n",
	"data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n",
	"id: 7\nretry: 10\n\ndata: line one\ndata: line two\ndata:\ndata:three\n\n",
	"\n\n\ndata: x\n\nevent: only-name\n\ndata: unterminated",
	"data: " + strings.Repeat("y", 70<<10) + "\n\n",
	"data\ndata:\nevent\n\n",
}

// The relay reads the same events as dialect.SSEReader from any stream.
func FuzzRelayMatchesSSEReader(f *testing.F) {
	for _, s := range relaySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		want := readerEvents(stream)
		got := relayEvents(t, stream)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("relay events differ from SSEReader's (-want +got):\n%s", diff)
		}
	})
}

// Forwarding raw blocks reproduces the stream byte for byte, apart from
// blank lines outside any block.
func TestRelayBlocksReassemble(t *testing.T) {
	for _, s := range relaySeeds[:3] {
		srv := &Server{}
		b := srv.getRelay(iotest.OneByteReader(strings.NewReader(s)))
		var got []byte
		for {
			raw, _, err := b.next()
			if err != nil {
				break
			}
			got = append(got, raw...)
		}
		srv.putRelay(b)
		if string(got) != s {
			t.Errorf("reassembled %q, want %q", got, s)
		}
	}
}
