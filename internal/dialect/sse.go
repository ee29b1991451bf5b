package dialect

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"
)

// MaxSSELine bounds the length of one SSE line.
const MaxSSELine = 16 << 20

// ErrBadEventName is returned by WriteEvent for a name holding a line break.
var ErrBadEventName = errors.New("SSE event name contains a line break")

// Event is one server-sent event. Name is the "event:" field ("" if absent);
// Data is the "data:" lines joined with "\n".
type Event struct {
	Name string
	Data []byte
}

// SSEReader reads server-sent events from a stream.
type SSEReader struct {
	sc *bufio.Scanner
}

// NewSSEReader returns a reader of the events of r. Lines may end in "\n" or
// "\r\n"; a line longer than MaxSSELine fails the read.
func NewSSEReader(r io.Reader) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxSSELine)
	return &SSEReader{sc: sc}
}

// Next returns the next event, or io.EOF at the end of the stream. An event
// not closed by a blank line before the end is still returned. Comments,
// "id:" and "retry:" fields are ignored.
func (r *SSEReader) Next() (Event, error) {
	var (
		ev      Event
		data    []byte
		hasData bool
		seen    bool
	)
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if seen {
				ev.Data = data
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			ev.Name = string(value)
			seen = true
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			if data == nil {
				data = []byte{}
			}
			hasData, seen = true, true
		}
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, fmt.Errorf("read SSE: %w", err)
	}
	if seen {
		ev.Data = data
		return ev, nil
	}
	return Event{}, io.EOF
}

// WriteEvent writes ev in SSE form: an "event:" line when Name is set, one
// "data:" line per line of Data, and a blank line.
func WriteEvent(w io.Writer, ev Event) error {
	if strings.ContainsAny(ev.Name, "\r\n") {
		return fmt.Errorf("write SSE event: %w", ErrBadEventName)
	}
	var b bytes.Buffer
	b.Grow(len(ev.Data) + len(ev.Name) + 24)
	if ev.Name != "" {
		b.WriteString("event: ")
		b.WriteString(ev.Name)
		b.WriteByte('\n')
	}
	data := ev.Data
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte{'\r'}))
		b.WriteByte('\n')
		if !more {
			break
		}
		data = rest
	}
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write SSE event: %w", err)
	}
	return nil
}

// IsTerminal reports whether ev ends the stream of the dialect: Chat
// "[DONE]"; Responses response.completed / incomplete / failed; Anthropic
// message_stop.
func IsTerminal(name Name, ev Event) bool {
	switch name {
	case OpenAIChat:
		return string(bytes.TrimSpace(ev.Data)) == "[DONE]"
	case OpenAIResponses:
		switch eventType(ev) {
		case "response.completed", "response.incomplete", "response.failed":
			return true
		}
	case AnthropicMessages:
		return eventType(ev) == "message_stop"
	case Gemini:
		return geminiFinished(ev.Data)
	}
	return false
}

// ErrorEvent returns the dialect's in-stream error event carrying message:
// Anthropic an "error" event with an api_error; Responses an "error" event
// (the ResponseErrorEvent shape); Chat a data chunk with an "error" object,
// which the OpenAI SDKs raise as a stream error.
func ErrorEvent(name Name, message string) Event {
	m := jsonString(message)
	switch name {
	case AnthropicMessages:
		return Event{Name: "error", Data: []byte(`{"type":"error","error":{"type":"api_error","message":` + m + `}}`)}
	case OpenAIResponses:
		return Event{Name: "error", Data: []byte(`{"type":"error","code":"upstream_error","message":` + m + `,"param":null}`)}
	case Gemini:
		return Event{Data: []byte(`{"error":{"code":502,"message":` + m + `,"status":"UNAVAILABLE"}}`)}
	default:
		return Event{Data: []byte(`{"error":{"message":` + m + `,"type":"upstream_error"}}`)}
	}
}

// EventText returns the answer text an event of the dialect adds: Chat
// choices[0].delta.content, Responses response.output_text.delta, Anthropic
// text_delta; "" for every other event.
func EventText(name Name, ev Event) string {
	switch name {
	case OpenAIChat:
		return gjson.GetBytes(ev.Data, "choices.0.delta.content").String()
	case OpenAIResponses:
		if eventType(ev) == "response.output_text.delta" {
			return gjson.GetBytes(ev.Data, "delta").String()
		}
	case AnthropicMessages:
		if eventType(ev) == "content_block_delta" && gjson.GetBytes(ev.Data, "delta.type").String() == "text_delta" {
			return gjson.GetBytes(ev.Data, "delta.text").String()
		}
	case Gemini:
		return geminiEventText(ev.Data)
	}
	return ""
}
