package extract

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// A memo answers what its function answers, for any text, from many
// workers at once, and asks the function again only for texts it has not
// kept (a slot taken by another text, or a text too long to keep).
func TestMemoAnswersAsItsFunction(t *testing.T) {
	var calls atomic.Int64
	m := newMemo(func(s string) string {
		calls.Add(1)
		return strings.ToUpper(s) + fmt.Sprint(len(s))
	})
	texts := []string{"", "use Redis, not Memcached", strings.Repeat("x", memoMaxKey+1)}
	for i := range 3 * memoSlots { // more texts than slots: some share one
		texts = append(texts, fmt.Sprintf("decision %d: keep PostgreSQL", i))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				for _, s := range texts {
					if got, want := m.get(s), strings.ToUpper(s)+fmt.Sprint(len(s)); got != want {
						t.Errorf("get(%.30q) = %.30q, want %.30q", s, got, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()

	calls.Store(0)
	const short = "keep every change behind the repository interface"
	m.get(short)
	m.get(short)
	if n := calls.Load(); n != 1 {
		t.Errorf("a text asked twice in a row ran the function %d times, want 1", n)
	}
	long := strings.Repeat("y", memoMaxKey+1)
	m.get(long)
	m.get(long)
	if n := calls.Load(); n != 3 {
		t.Errorf("a text too long to keep ran the function %d times in all, want 3", n)
	}
}

// foldOld reads as it did before it was memoised, on texts that fold and
// texts that do not.
func TestFoldOldMemoised(t *testing.T) {
	for _, tc := range []struct{ s, choice, old string }{
		{"Keep PostgreSQL as the store, not MongoDB", "Keep PostgreSQL as the store", "MongoDB"},
		{"use Redis rather than Memcached for the cache", "use Redis", "Memcached"},
		{"use Redis for the cache", "use Redis for the cache", ""},
		{"", "", ""},
	} {
		for range 2 {
			choice, old := foldOld(tc.s)
			if choice != tc.choice || old != tc.old {
				t.Errorf("foldOld(%q) = %q, %q; want %q, %q", tc.s, choice, old, tc.choice, tc.old)
			}
		}
	}
}
