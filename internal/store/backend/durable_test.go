package backend

import (
	"regexp"
	"testing"
	"time"
)

// Call ids sort by the time they were made (so the ledger's index of them
// grows at its end) and stay apart within one millisecond.
func TestCallIDsSortByTime(t *testing.T) {
	shape := regexp.MustCompile(`^bl_[0-9a-f]{28}$`)
	t0 := time.UnixMilli(1796400000000)
	seen := map[string]bool{}
	prev := ""
	for i := range 2000 {
		at := t0.Add(time.Duration(i/100) * time.Millisecond) // 100 ids a millisecond
		id := NewCallID(at)
		if !shape.MatchString(id) {
			t.Fatalf("id %q is not bl_ and 28 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
		if i%100 == 0 && id <= prev {
			t.Fatalf("id %q of a later millisecond sorts before %q", id, prev)
		}
		prev = id
	}
	if a, b := NewCallID(time.UnixMilli(0xfffffffff)), NewCallID(time.UnixMilli(0x1000000000)); a >= b {
		t.Errorf("%q sorts after %q", a, b)
	}
}
