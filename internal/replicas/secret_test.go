package replicas

import (
	"context"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/app"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/store/storetest"
)

// TestReplicaWithAnotherSecretRefusesToStart: replicas on one PostgreSQL
// store must share the secret; one configured with a different secret would
// derive other lineage keys and epoch tokens and silently split every
// conversation, so it refuses to start, while a replica with the same secret
// starts.
func TestReplicaWithAnotherSecretRefusesToStart(t *testing.T) {
	storeURL := storetest.FreshSearchPath(t, storetest.PostgresURL(t), "tether_replicas")
	yaml := func(secret string) *config.Config {
		c, err := config.Parse([]byte(sprintf("store: %q\nsecret: %s\n", storeURL, secret)), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	first, err := app.New(ctx, yaml("the-deployment-secret-0123456789"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close(ctx)
	if _, err := app.New(ctx, yaml("another-secret-0123456789abcdef"), app.Options{}); err == nil || !strings.Contains(err.Error(), "secret: differs") {
		t.Fatalf("a replica with another secret: %v, want a refusal", err)
	}
	same, err := app.New(ctx, yaml("the-deployment-secret-0123456789"), app.Options{})
	if err != nil {
		t.Fatalf("a replica with the same secret: %v", err)
	}
	_ = same.Close(ctx)
}
