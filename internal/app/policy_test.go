package app

import (
	"net/http"
	"testing"

	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/config"
)

// Two keyless passthrough callers resolve to the same principal; continuity
// is off for it, so they can never share a capsule. A caller with a key
// keeps continuity.
func TestKeylessCallersGetNoContinuity(t *testing.T) {
	cfg, err := config.Parse([]byte("compaction_continuity: {enabled: true}\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a := auth.New(cfg, []byte("secret"))
	pol := &policies{cfg: cfg}
	keyless, err := a.Authenticate(http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if pol.For(keyless).Enabled {
		t.Errorf("continuity is on for keyless callers (principal %q): they would share capsules", keyless.ID)
	}
	keyed, _ := a.Authenticate(http.Header{"Authorization": {"Bearer sk-own-key"}})
	if !pol.For(keyed).Enabled {
		t.Errorf("continuity is off for a caller with its own key")
	}
}
