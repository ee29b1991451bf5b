package dialect

import (
	"net/http"

	"github.com/tidwall/gjson"
)

// View is a lazy, read-only view of one request. It validates the body once
// (Parse) and then reads fields on demand; Messages() is parsed once and
// cached; LastUserText and LastItemType read from the tail without walking
// the whole history.
type View struct {
	name   Name
	path   string
	header http.Header
	body   []byte
}

// Parse validates body once and returns a View over it. path is the URL path
// (with query) of the request, header its headers (may be nil).
func Parse(name Name, path string, header http.Header, body []byte) (*View, error) {
	panic("unimplemented")
}

func (v *View) Dialect() Name       { return v.name }
func (v *View) Path() string        { return v.path }
func (v *View) Header() http.Header { return v.header }
func (v *View) Body() []byte        { return v.body }

// Get reads a raw gjson path from the body (used by data-driven rules).
func (v *View) Get(path string) gjson.Result { return gjson.GetBytes(v.body, path) }

// Model returns the "model" field.
func (v *View) Model() string { panic("unimplemented") }

// Stream reports whether the client asked for SSE.
func (v *View) Stream() bool { panic("unimplemented") }

// System returns the system prompt text: Anthropic "system" (string or text
// blocks), Chat Completions leading system/developer messages, Responses
// "instructions" plus a leading system/developer input item.
func (v *View) System() string { panic("unimplemented") }

// Messages returns every conversation item except the system prompt parts
// that System() reports... (leading system/developer items ARE included with
// their role so callers can skip them).
func (v *View) Messages() []Message { panic("unimplemented") }

// NumMessages returns the length of the messages / input array without
// parsing its items.
func (v *View) NumMessages() int { panic("unimplemented") }

// LastUserText returns the text of the last user-role message (tool results
// excluded), reading only the tail of the array.
func (v *View) LastUserText() string { panic("unimplemented") }

// LastItemType returns the "type" of the last input item (Responses) or ""
// for the other dialects.
func (v *View) LastItemType() string { panic("unimplemented") }

// ToolNames returns the names of the declared tools, in order.
func (v *View) ToolNames() []string { panic("unimplemented") }
