package dialect

import (
	"bytes"

	"github.com/tether-dev/tether/internal/capsule"
)

// Claude Code, Pi and other agents mark a prompt-cache breakpoint on the
// last content block of a request's last message ("cache_control") and
// take it off that block on the next request, which marks its own last
// message instead: the item that was last comes back changed, every turn.
// Nothing Tether reads of an item depends on the breakpoint (Message has
// no place for it; rules test block and item types and text), so an item's
// key is made of its bytes without it. The next request then shares every
// key and prefix id with its predecessor up to the predecessor's end, and
// the memos keyed by them (parsed items and lists, lineage digests,
// classification windows, plan harvests) answer its shared items at once.
//
// Only a cache_control member of a content block (the dialect's item
// object, its "content" array, a block object in it) is left out, with
// one comma joining it, and only when its value cannot hold a capsule tag
// (capsule.MayMention): the item without the breakpoint reads the same to
// every reader, even one that counts tags in raw bytes, so two items that
// share a key still read alike. A
// breakpoint written any other way (other whitespace, somewhere else) is
// kept and the key is only less often shared.

var cacheControlKey = []byte(`"cache_control"`)

// hasBreakpoints reports whether items of the dialect may carry block
// breakpoints: Anthropic Messages, and Chat Completions as the
// OpenAI-compatible gateways to Anthropic models accept it.
func hasBreakpoints(name Name) bool { return name == AnthropicMessages || name == OpenAIChat }

// withoutBreakpoints returns raw (one conversation item, valid JSON)
// without its content blocks' cache_control members, appended to buf, and
// true; or false when it has none.
func withoutBreakpoints(buf, raw []byte) ([]byte, bool) {
	if !bytes.Contains(raw, cacheControlKey) {
		return nil, false
	}
	cuts := breakpoints(raw)
	if len(cuts) == 0 {
		return nil, false
	}
	out, at := buf[:0], 0
	for _, c := range cuts {
		if c.start < at || c.end < c.start {
			return nil, false // never made so; the bytes are then their key
		}
		out = append(out, raw[at:c.start]...)
		at = c.end
	}
	return append(out, raw[at:]...), true
}

// breakpoints returns the spans of raw that its content blocks'
// cache_control members take, in order, each with the comma that joins it
// to the members kept: the one before it, or, when no member before it is
// kept, the one after it. A block's members all cut leave "{}". nil when
// raw is not an object or has none.
func breakpoints(raw []byte) []span {
	s := scanner{b: raw}
	var cuts []span
	s.space()
	if !s.at('{') {
		return nil
	}
	err := s.eachMember(1, func(key string, _ int) (bool, error) {
		if key != "content" || !s.at('[') {
			return false, nil
		}
		return true, s.eachElement(2, func() (bool, error) {
			if !s.at('{') {
				return false, nil
			}
			kept, cut := 0, 0 // ends of the last member kept and of the last cut
			return true, s.eachMember(3, func(key string, ks int) (bool, error) {
				vs := s.i
				if err := s.value(3); err != nil {
					return true, err
				}
				if key != "cache_control" || capsule.MayMention(raw[vs:s.i]) {
					// A value that may hold a capsule tag is kept: counts
					// of a prefix's tags read raw bytes, and stay exact.
					kept = s.i
					return true, nil
				}
				if kept > 0 {
					// ,"cache_control":{…} — from the end of what was kept
					// or cut before it.
					cuts = append(cuts, span{max(kept, cut), s.i})
					cut = s.i
					return true, nil
				}
				// {"cache_control":{…}, … — through the comma after it.
				end := s.i
				after := scanner{b: raw, i: end}
				after.space()
				if after.at(',') {
					end = after.i + 1
				}
				cuts = append(cuts, span{ks, end})
				cut = end
				return true, nil
			})
		})
	})
	if err != nil {
		return nil
	}
	return cuts
}

// at reports whether the byte at s.i is c.
func (s *scanner) at(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// eachMember reads the object at s.i (depth d), calling fn with each key
// and the key's offset before its value; fn reads the value itself and
// returns true, or returns false to have it skipped.
func (s *scanner) eachMember(d int, fn func(key string, ks int) (bool, error)) error {
	return s.each(d, '}', func() (bool, error) {
		if !s.at('"') {
			return false, ErrInvalidJSON
		}
		ks := s.i
		if err := s.str(); err != nil {
			return false, err
		}
		key := keyName(s.b[ks:s.i])
		s.space()
		if !s.at(':') {
			return false, ErrInvalidJSON
		}
		s.i++
		s.space()
		return fn(key, ks)
	})
}

// eachElement reads the array at s.i (depth d), calling fn at each
// element; fn reads it and returns true, or returns false to have it
// skipped.
func (s *scanner) eachElement(d int, fn func() (bool, error)) error { return s.each(d, ']', fn) }

// each reads the container at s.i (depth d) that end closes, calling fn
// at each of its entries; fn reads the entry and returns true, or returns
// false to have its value skipped.
func (s *scanner) each(d int, end byte, fn func() (bool, error)) error {
	if empty, err := s.open(d, end); empty || err != nil {
		return err
	}
	for {
		done, err := fn()
		if err == nil && !done {
			err = s.value(d)
		}
		if err != nil {
			return err
		}
		if last, err := s.next(end); last || err != nil {
			return err
		}
	}
}
