package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// decodeStrict decodes data into c, rejecting unknown fields. Its errors name
// the YAML path of the offending setting (compaction_continuity.barrier_timeout,
// providers[0].timeout) and its line, never a Go type or field name. lines
// maps each path present in the file to its line, for later validation errors.
func decodeStrict(data []byte, c *Config) (lines map[string]int, err error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fmt.Errorf("config: %s", yaml.FormatError(err, false, true))
	}
	ix := &pathIndex{lines: map[string]int{}, keys: map[pos]string{}, values: map[pos]string{}}
	for _, doc := range f.Docs {
		if doc.Body != nil {
			ix.walk(doc.Body, reflect.TypeOf(Config{}), "")
		}
	}
	if ix.err != nil {
		return nil, ix.err
	}
	if err := yaml.UnmarshalWithOptions(data, c, yaml.Strict()); err != nil {
		return nil, ix.explain(err)
	}
	return ix.lines, nil
}

// pos is a token's line and column.
type pos struct{ line, col int }

func posOf(tk *token.Token) pos {
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

// pathIndex maps token positions to YAML paths.
type pathIndex struct {
	lines  map[string]int
	keys   map[pos]string // a key's position → the path it names
	values map[pos]string // a value's first token → its path
	err    error          // the first malformed duration
}

var durationType = reflect.TypeOf(time.Duration(0))

func (ix *pathIndex) walk(n ast.Node, t reflect.Type, path string) {
	for {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
			continue
		case *ast.AnchorNode:
			n = v.Value
			continue
		}
		break
	}
	if n == nil {
		return
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if tk := n.GetToken(); tk != nil && path != "" {
		if _, ok := ix.values[posOf(tk)]; !ok || len(path) > len(ix.values[posOf(tk)]) {
			ix.values[posOf(tk)] = path
		}
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		for _, kv := range v.Values {
			ix.pair(kv, t, path)
		}
	case *ast.MappingValueNode:
		ix.pair(v, t, path)
	case *ast.SequenceNode:
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i, e := range v.Values {
			ix.walk(e, et, path+"["+strconv.Itoa(i)+"]")
		}
	case *ast.StringNode:
		if t == durationType && ix.err == nil {
			if _, err := time.ParseDuration(v.Value); err != nil {
				ix.err = fmt.Errorf("config: line %d: %s: must be a duration like 30s, 2m or 1h30m (got %q)", v.Token.Position.Line, path, v.Value)
			}
		}
	}
}

func (ix *pathIndex) pair(kv *ast.MappingValueNode, t reflect.Type, path string) {
	if kv == nil || kv.Key == nil {
		return
	}
	name := kv.Key.String()
	if tk := kv.Key.GetToken(); tk != nil {
		name = tk.Value
	}
	p := name
	if path != "" {
		p = path + "." + name
	}
	if tk := kv.Key.GetToken(); tk != nil {
		ix.keys[posOf(tk)] = p
		ix.lines[p] = tk.Position.Line
	}
	ix.walk(kv.Value, fieldType(t, name), p)
}

// fieldType is the type a YAML key decodes into: the struct field with that
// yaml tag, or a map's element type; nil when unknown.
func fieldType(t reflect.Type, key string) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		return t.Elem()
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == key {
				return f.Type
			}
		}
	}
	return nil
}

// explain rewrites a decoder error in terms of the file: path, line, what
// was expected.
func (ix *pathIndex) explain(err error) error {
	var (
		te *yaml.TypeError
		ue *yaml.UnknownFieldError
		oe *yaml.OverflowError
		ne *yaml.UnexpectedNodeTypeError
	)
	switch {
	case errors.As(err, &ue) && ue.Token != nil:
		p := ix.keys[posOf(ue.Token)]
		if p == "" {
			p = ue.Token.Value
		}
		return fmt.Errorf("config: line %d: %s: unknown setting (see docs/config.md)", ue.Token.Position.Line, p)
	case errors.As(err, &te) && te.Token != nil:
		return fmt.Errorf("config: line %d: %s: must be %s (got %s)", te.Token.Position.Line, ix.valuePath(te.Token), kindName(te.DstType), gotValue(te.Token))
	case errors.As(err, &oe) && oe.Token != nil:
		return fmt.Errorf("config: line %d: %s: %s is out of range", oe.Token.Position.Line, ix.valuePath(oe.Token), oe.SrcNum)
	case errors.As(err, &ne) && ne.Token != nil:
		return fmt.Errorf("config: line %d: %s: must be %s", ne.Token.Position.Line, ix.valuePath(ne.Token), nodeKindName(ne.Expected))
	}
	return fmt.Errorf("config: %s", yaml.FormatError(err, false, true))
}

func (ix *pathIndex) valuePath(tk *token.Token) string {
	if p := ix.values[posOf(tk)]; p != "" {
		return p
	}
	return "(top level)"
}

func gotValue(tk *token.Token) string {
	switch tk.Type {
	case token.SequenceStartType, token.SequenceEntryType:
		return "a list"
	case token.MappingStartType, token.MappingKeyType:
		return "a mapping"
	}
	return strconv.Quote(tk.Value)
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	if t == durationType {
		return "a duration like 30s, 2m or 1h30m"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping (key: value lines)"
	}
	return "another type"
}

func nodeKindName(k ast.NodeType) string {
	switch k {
	case ast.MappingType:
		return "a mapping (key: value lines)"
	case ast.SequenceType:
		return "a list"
	}
	return "a single value"
}

// withLines prefixes each validation error whose path appears in the file
// with its line number.
func withLines(err error, lines map[string]int) error {
	if err == nil || len(lines) == 0 {
		return err
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		path, _, _ := strings.Cut(e.Error(), ": ")
		if l, ok := lines[path]; ok {
			e = fmt.Errorf("line %d: %w", l, e)
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
