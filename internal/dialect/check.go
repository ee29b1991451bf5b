package dialect

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// MaxDepth is the deepest nesting of arrays and objects a body may have.
// Real agent requests stay below 20; the recursive validators and decoders
// that read a body after this check are safe well above it.
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

// checkDepth reports ErrTooDeep when arrays and objects in body nest deeper
// than MaxDepth. It is one linear pass with constant extra memory and does
// not validate: brackets inside strings are skipped, and a body it passes
// nests no deeper than MaxDepth for any parser that agrees with JSON's string
// syntax up to the first error.
func checkDepth(body []byte) error {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			i = stringEnd(body, i) - 1
		case '[', '{':
			depth++
			if depth > MaxDepth {
				return ErrTooDeep
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// Valid reports whether body is valid JSON nesting no deeper than MaxDepth.
// Use it, never gjson.ValidBytes alone, on bytes from a caller or provider:
// the validator recurses once per level.
func Valid(body []byte) bool {
	return checkDepth(body) == nil && gjson.ValidBytes(body)
}

// checkObject checks a request body before it is parsed: nesting no deeper
// than MaxDepth, valid JSON, an object, and no top-level field named twice
// (the proxy reads the first "model", a provider may read the last).
func checkObject(body []byte) error {
	if err := checkDepth(body); err != nil {
		return err
	}
	if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
		return ErrInvalidJSON
	}
	seen := make(map[string]struct{}, 16)
	var err error
	gjson.ParseBytes(body).ForEach(func(k, _ gjson.Result) bool {
		name := k.Str // escapes decoded: "mod\u0065l" is "model"
		if _, dup := seen[name]; dup {
			err = ErrDuplicateKey
			return false
		}
		if len(seen) == MaxTopLevelKeys {
			err = ErrTooManyFields
			return false
		}
		seen[name] = struct{}{}
		return true
	})
	return err
}
