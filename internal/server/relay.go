package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
)

// errEventTooLong ends a relay whose upstream sends an SSE event larger than
// dialect.MaxSSELine.
var errEventTooLong = errors.New("SSE event exceeds the size limit")

const (
	relayReadBuffer = 16 << 10
	maxPooledBuffer = 1 << 20 // larger buffers are not kept for reuse
)

// relayBuffers are the buffers of one streamed answer, pooled on the Server
// so a stream costs no fresh large allocation.
type relayBuffers struct {
	rd   *bufio.Reader
	raw  []byte       // the current event block, as received
	data []byte       // joined data lines of a multi-line event
	out  bytes.Buffer // events re-encoded after a response hook changed them
}

func (s *Server) getRelay(r io.Reader) *relayBuffers {
	b, _ := s.relays.Get().(*relayBuffers)
	if b == nil {
		b = &relayBuffers{rd: bufio.NewReaderSize(r, relayReadBuffer)}
	}
	b.rd.Reset(r)
	return b
}

func (s *Server) putRelay(b *relayBuffers) {
	b.rd.Reset(nil)
	if cap(b.raw) > maxPooledBuffer {
		b.raw = nil
	}
	if cap(b.data) > maxPooledBuffer {
		b.data = nil
	}
	if b.out.Cap() > maxPooledBuffer {
		b.out = bytes.Buffer{}
	}
	s.relays.Put(b)
}

// relayStream copies an SSE stream event by event. An event no response hook
// changed is forwarded as the very bytes the upstream sent (comments and id
// lines included); one a hook changed, split or dropped is re-encoded. Events
// are flushed whenever the relay is about to wait for more upstream bytes:
// every complete event reaches the client before the relay blocks, and a
// burst of events that arrived together costs one flush, not one per event.
// A broken upstream stream ends the client stream with the dialect's error
// event.
func (s *Server) relayStream(ctx context.Context, w http.ResponseWriter, resp *http.Response, x *flow.Exchange, res *forwardResult) {
	copyResponseHeader(w.Header(), resp.Header)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	_ = rc.Flush()

	src := &flushBeforeRead{r: resp.Body, rc: rc}
	b := s.getRelay(src)
	defer s.putRelay(b)
	usage := dialect.NewUsageTracker(x.Dialect)
	hooked := x.HasResponseHooks()
	terminal := false
	endWithError := func(kind, msg string) {
		if kind != "" {
			s.noteFault(x, kind, resp.StatusCode)
			res.Err = fmt.Errorf("upstream protocol fault: %s", kind)
		}
		b.out.Reset()
		_ = dialect.WriteEvent(&b.out, dialect.ErrorEvent(x.Dialect, msg))
		_, _ = w.Write(b.out.Bytes())
		_ = rc.Flush()
	}
	for {
		raw, complete, err := b.next()
		if src.err != nil {
			res.Err = src.err // the client went away
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			res.Err = err
			if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
				return // client went away; upstream call is cancelled with ctx
			}
			endWithError("", "the upstream stream ended unexpectedly")
			return
		}
		ev, isEvent := b.parse(raw)
		if !wellFormed(x.Dialect, raw, ev, isEvent) {
			endWithError(faultStream, "the upstream provider sent a malformed event stream")
			return
		}
		terminal = terminal || (isEvent && dialect.IsTerminal(x.Dialect, ev))
		out := raw
		switch {
		case !isEvent && !complete:
			out = nil // a trailing fragment without any field
		case !isEvent:
			// comments, id and retry lines: forwarded as they came
		default:
			usage.Observe(ev)
			evs := []dialect.Event{ev}
			if hooked {
				ev.Data = bytes.Clone(ev.Data) // hooks may keep it; raw is reused
				evs = x.StreamEvent(ev)
			}
			if !complete || !unchanged(evs, ev) {
				b.out.Reset()
				for _, e := range evs {
					_ = dialect.WriteEvent(&b.out, e)
				}
				out = b.out.Bytes()
			}
		}
		if len(out) == 0 {
			continue
		}
		if _, err := w.Write(out); err != nil {
			res.Err = err
			return
		}
		res.bytesOut += int64(len(out))
		src.pending = true
	}
	res.Usage = usage.Usage()
	if !terminal {
		endWithError(faultTruncated, "the upstream stream ended before its final event")
		return
	}
	if err := rc.Flush(); err != nil {
		res.Err = err
		return
	}
}

// wellFormed reports whether an event block holds only SSE fields and
// comments and, if it is an event, data that is JSON (or Chat's "[DONE]").
// Garbage lines, binary and non-JSON data are a provider's protocol fault.
func wellFormed(d dialect.Name, raw []byte, ev dialect.Event, isEvent bool) bool {
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		field, _, _ := bytes.Cut(line, []byte{':'})
		switch string(field) {
		case "event", "data", "id", "retry":
		default:
			return false
		}
	}
	if !isEvent || len(ev.Data) == 0 {
		return true
	}
	if d == dialect.OpenAIChat && string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
		return true
	}
	return dialect.Valid(ev.Data)
}

// unchanged reports whether the hooks gave back exactly ev.
func unchanged(evs []dialect.Event, ev dialect.Event) bool {
	return len(evs) == 1 && evs[0].Name == ev.Name && bytes.Equal(evs[0].Data, ev.Data)
}

// next returns the next event block: its lines up to and including the blank
// line that ends it. complete is false for a final block the stream ended
// without a blank line. Blank lines between blocks are skipped. The block is
// valid until the next call.
func (b *relayBuffers) next() (raw []byte, complete bool, err error) {
	b.raw = b.raw[:0]
	lineStart := 0
	for {
		chunk, err := b.rd.ReadSlice('\n')
		b.raw = append(b.raw, chunk...)
		if len(b.raw) > dialect.MaxSSELine {
			return nil, false, fmt.Errorf("read SSE: %w", errEventTooLong)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue // the same line goes on
		case errors.Is(err, io.EOF):
			if len(b.raw) == 0 {
				return nil, false, io.EOF
			}
			return b.raw, false, nil
		case err != nil:
			return nil, false, fmt.Errorf("read SSE: %w", err)
		}
		line := b.raw[lineStart:]
		if len(line) == 1 || (len(line) == 2 && line[0] == '\r') {
			if lineStart == 0 {
				b.raw = b.raw[:0] // a blank line outside any block
				continue
			}
			return b.raw, true, nil
		}
		lineStart = len(b.raw)
	}
}

// parse reads an event block's fields as dialect.SSEReader does: Name from
// "event:", Data from the "data:" lines joined with "\n". ok is false for a
// block with neither field. Data may alias raw.
func (b *relayBuffers) parse(raw []byte) (ev dialect.Event, ok bool) {
	dataLines := 0
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			ev.Name = string(value)
			ok = true
		case "data":
			switch dataLines {
			case 0:
				ev.Data = value
			case 1:
				b.data = append(append(append(b.data[:0], ev.Data...), '\n'), value...)
				ev.Data = b.data
			default:
				b.data = append(append(b.data, '\n'), value...)
				ev.Data = b.data
			}
			if ev.Data == nil {
				ev.Data = []byte{}
			}
			dataLines++
			ok = true
		}
	}
	return ev, ok
}

// flushBeforeRead flushes the client response, when it holds unflushed
// events, before each read of the upstream body, that is before the relay
// can block.
type flushBeforeRead struct {
	r       io.Reader
	rc      *http.ResponseController
	pending bool
	err     error // the flush error that ended the relay
}

func (f *flushBeforeRead) Read(p []byte) (int, error) {
	if f.pending {
		f.pending = false
		if err := f.rc.Flush(); err != nil {
			f.err = err
			return 0, err
		}
	}
	return f.r.Read(p)
}
