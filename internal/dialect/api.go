// Package dialect reads and edits the request and response bodies of the four
// wire dialects Tether speaks: OpenAI Chat Completions, OpenAI Responses,
// Anthropic Messages and Gemini generateContent. Reads are lazy and zero-copy (gjson); edits are
// surgical (sjson) so untouched bytes stay byte-identical.
package dialect

import (
	"errors"
)

// Name identifies a wire dialect.
type Name string

// The dialects Tether speaks.
const (
	OpenAIChat        Name = "openai-chat"
	OpenAIResponses   Name = "openai-responses"
	AnthropicMessages Name = "anthropic-messages"
	Gemini            Name = "gemini"
)

// ErrInvalidJSON is returned by Parse for a body that is not valid JSON or not
// a JSON object.
var ErrInvalidJSON = errors.New("request body is not a valid JSON object")

// Message is one normalised conversation item.
//
// Roles are normalised to "system", "developer", "user", "assistant", "tool".
// For OpenAI Responses, Type carries the item type ("message",
// "function_call", "function_call_output", "compaction", "compaction_trigger",
// "reasoning", …); for the other dialects it is "message".
type Message struct {
	Index       int    // position in the dialect's array (messages / input)
	Role        string // normalised role
	Type        string
	Text        string // concatenation of the item's text parts, "\n" between parts
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	HasImage    bool // an image / file / binary part was present (its bytes are never in Text)
}

// ToolCall is a model-issued tool invocation.
type ToolCall struct {
	ID        string
	Name      string
	Arguments []byte // raw JSON object (decoded from a JSON string where the dialect encodes it so)
}

// ToolResult is the client's answer to a tool call.
type ToolResult struct {
	CallID  string
	Text    string
	IsError bool
}

// ErrUnknownDialect is returned for a Name that is none of the known dialects.
var ErrUnknownDialect = errors.New("unknown dialect")
