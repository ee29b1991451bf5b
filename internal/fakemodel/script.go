package fakemodel

import "sync"

// Script answers with replies in order, one per call; after the last it keeps
// repeating the last. With no replies it answers "ok". It is safe for
// concurrent use; concurrent calls get distinct replies in an unspecified
// order.
func Script(replies ...Reply) Responder {
	if len(replies) == 0 {
		return Static("ok")
	}
	var (
		mu   sync.Mutex
		next int
	)
	return func(*Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		r := replies[min(next, len(replies)-1)]
		next++
		r.ToolCalls = append([]ToolCall(nil), r.ToolCalls...)
		return r
	}
}

// Static answers every request with text.
func Static(text string) Responder {
	return func(*Request) Reply { return Reply{Text: text} }
}

// ByKind answers each request with the responder registered for its Classify
// label, or with fallback (nil: "ok") when none is.
func ByKind(byKind map[string]Responder, fallback Responder) Responder {
	if fallback == nil {
		fallback = Static("ok")
	}
	m := make(map[string]Responder, len(byKind))
	for k, v := range byKind {
		m[k] = v
	}
	return func(req *Request) Reply {
		if r, ok := m[Classify(req)]; ok && r != nil {
			return r(req)
		}
		return fallback(req)
	}
}
