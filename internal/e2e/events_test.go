package e2e

import (
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/compaction"
	"github.com/tether-dev/tether/internal/demo"
	"github.com/tether-dev/tether/internal/fakemodel"
)

// The compaction events the assembled proxy emits (not just the Event type)
// carry ids, enums and numbers only: no string field holds text from the
// request, whatever the detector and the lifecycle put there.
func TestEmittedCompactionEventsCarryNoRequestText(t *testing.T) {
	var mu sync.Mutex
	var events []compaction.Event
	observe := compaction.ObserverFunc(func(ev compaction.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	})
	fake := fakemodel.Start(demo.Model())
	t.Cleanup(fake.Close)
	e := accountingServe(t, fake, baseYAML+continuityYAML, nil, func(o *app.Options) {
		o.Observers = append(o.Observers, observe)
	})
	const canary = "zebra-canary-7731"
	a := e.agent("events-" + canary)
	say(t, a, "Decision: use PostgreSQL, not MongoDB, "+canary+".", "Please make a plan "+canary+" and track it with your todo list.")
	compact(t, a)
	say(t, a, "Continue "+canary+".")

	// The lifecycle ends when the B-leg's relay returns, which may be just
	// after the client read the answer.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	types := map[compaction.EventType]int{}
	id := regexp.MustCompile(`^[A-Za-z0-9_.:-]{0,96}$`)
	for _, ev := range events {
		types[ev.Type]++
		v := reflect.ValueOf(ev)
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Kind() != reflect.String {
				continue
			}
			s := f.String()
			if strings.Contains(s, canary) || !id.MatchString(s) {
				t.Errorf("%s event: %s = %q is not an id", ev.Type, v.Type().Field(i).Name, s)
			}
		}
	}
	if types[compaction.EventDetected] != 1 || types[compaction.EventStarted] != 1 || types[compaction.EventCompleted]+types[compaction.EventFailed] != 1 {
		t.Errorf("events %v, want one detected, started and completed (or failed)", types)
	}
}
