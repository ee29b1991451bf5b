package dialect

import "github.com/tidwall/gjson"

// Usage is the token usage of one upstream call.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
}

// ParseUsage reads the usage of a non-streamed response body.
func ParseUsage(name Name, body []byte) Usage {
	if name == Gemini {
		return geminiUsage(gjson.GetBytes(body, "usageMetadata"))
	}
	return usageFrom(name, gjson.GetBytes(body, "usage"))
}

func usageFrom(name Name, u gjson.Result) Usage {
	switch name {
	case OpenAIChat:
		return Usage{
			InputTokens:     u.Get("prompt_tokens").Int(),
			OutputTokens:    u.Get("completion_tokens").Int(),
			CacheReadTokens: u.Get("prompt_tokens_details.cached_tokens").Int(),
		}
	case OpenAIResponses:
		return Usage{
			InputTokens:     u.Get("input_tokens").Int(),
			OutputTokens:    u.Get("output_tokens").Int(),
			CacheReadTokens: u.Get("input_tokens_details.cached_tokens").Int(),
		}
	case AnthropicMessages:
		return Usage{
			InputTokens:      u.Get("input_tokens").Int(),
			OutputTokens:     u.Get("output_tokens").Int(),
			CacheReadTokens:  u.Get("cache_read_input_tokens").Int(),
			CacheWriteTokens: u.Get("cache_creation_input_tokens").Int(),
		}
	}
	return Usage{}
}

// UsageTracker accumulates the usage reported along one SSE stream. It is
// not safe for concurrent use.
type UsageTracker struct {
	name Name
	u    Usage
}

// NewUsageTracker returns a tracker for a stream of the given dialect.
func NewUsageTracker(name Name) *UsageTracker { return &UsageTracker{name: name} }

// Observe reads the usage, if any, carried by one event.
func (t *UsageTracker) Observe(ev Event) {
	switch t.name {
	case Gemini:
		// Each chunk may report the counts so far: the latest wins.
		if u := gjson.GetBytes(ev.Data, "usageMetadata"); u.IsObject() {
			t.u = geminiUsage(u)
		}
	case OpenAIChat:
		if u := gjson.GetBytes(ev.Data, "usage"); u.IsObject() {
			t.u = usageFrom(t.name, u)
		}
	case OpenAIResponses:
		switch eventType(ev) {
		case "response.completed", "response.incomplete", "response.failed":
			if u := gjson.GetBytes(ev.Data, "response.usage"); u.IsObject() {
				t.u = usageFrom(t.name, u)
			}
		}
	case AnthropicMessages:
		switch eventType(ev) {
		case "message_start":
			if u := gjson.GetBytes(ev.Data, "message.usage"); u.IsObject() {
				t.u = usageFrom(t.name, u)
			}
		case "message_delta":
			// Counts in message_delta are cumulative: the latest wins.
			u := gjson.GetBytes(ev.Data, "usage")
			if v := u.Get("output_tokens"); v.Exists() {
				t.u.OutputTokens = v.Int()
			}
			if v := u.Get("input_tokens"); v.Exists() && v.Int() > 0 {
				t.u.InputTokens = v.Int()
			}
			if v := u.Get("cache_read_input_tokens"); v.Exists() && v.Int() > 0 {
				t.u.CacheReadTokens = v.Int()
			}
			if v := u.Get("cache_creation_input_tokens"); v.Exists() && v.Int() > 0 {
				t.u.CacheWriteTokens = v.Int()
			}
		}
	}
}

// Usage returns the usage observed so far.
func (t *UsageTracker) Usage() Usage { return t.u }

// eventType returns the event's type: the "type" field of its data, or its
// SSE event name.
func eventType(ev Event) string {
	if t, ok := leadingType(ev.Data); ok {
		return t
	}
	if t := gjson.GetBytes(ev.Data, "type"); t.Type == gjson.String {
		return t.String()
	}
	return ev.Name
}

// leadingType reads the type of an event's data whose first member it is,
// written plainly ({"type":"name", or {"type":"name"}), as providers write
// every event: the type of every event of a stream is asked for, and
// gjson's general path costs about a microsecond an event. Any other
// writing (spaces, escapes, a type not first) is left to gjson, which also
// answers the first "type" member.
func leadingType(data []byte) (string, bool) {
	const head = `{"type":"`
	if len(data) <= len(head) || string(data[:len(head)]) != head {
		return "", false
	}
	rest := data[len(head):]
	for i, c := range rest {
		switch {
		case c == '"':
			if i+1 < len(rest) && (rest[i+1] == ',' || rest[i+1] == '}') {
				return string(rest[:i]), true
			}
			return "", false
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}
