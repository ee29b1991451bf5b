package dialect

import "github.com/tidwall/gjson"

// ParseItems normalises raw conversation items (each a JSON object from the
// dialect's messages / input array), numbering them from 0. It lets callers
// read a bounded prefix of a history without parsing all of it.
func ParseItems(name Name, raw []string) []Message {
	parse := anthropicMessage
	switch name {
	case OpenAIChat:
		parse = chatMessage
	case OpenAIResponses:
		parse = responsesItem
	case Gemini:
		parse = geminiContent
	}
	out := make([]Message, 0, len(raw))
	for i, r := range raw {
		out = append(out, parse(i, gjson.Parse(r)))
	}
	return out
}
