package dialect

import (
	"errors"
	"fmt"
)

// MaxDepth is the deepest nesting of arrays and objects a body may have.
// Real agent requests stay below 20; the recursive validators and decoders
// that read a body after this check (Parse, Valid) are safe well above it.
const MaxDepth = 512

// MaxTopLevelKeys bounds the fields of a request object (the duplicate-key
// check keeps one entry per field; real requests have a few dozen).
const MaxTopLevelKeys = 1024

// Errors of the structural check that runs before any recursive parse.
var (
	ErrTooDeep       = fmt.Errorf("JSON nests deeper than %d levels", MaxDepth)
	ErrDuplicateKey  = errors.New("a top-level field appears twice")
	ErrTooManyFields = fmt.Errorf("the request object has more than %d fields", MaxTopLevelKeys)
)

// Valid reports whether body is one valid JSON value nesting no deeper than
// MaxDepth. Use it, never gjson.ValidBytes alone, on bytes from a caller or
// provider: that validator recurses once per level.
func Valid(body []byte) bool {
	s := scanner{b: body, x: index{conv: -1}}
	s.space()
	if s.value(0) != nil {
		return false
	}
	s.space()
	return s.i == len(s.b)
}
