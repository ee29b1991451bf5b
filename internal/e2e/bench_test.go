package e2e

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/tether-dev/tether/internal/demo"
)

// BenchmarkCompactionPath measures one streamed Claude Code compaction
// request through the proxy, end to end over loopback, with continuity off
// (plain pass-through) and on with a current capsule (lineage lookup,
// capsule load, augmentation, summary merge; no barrier wait). The
// difference is the added latency of the preservation path.
func BenchmarkCompactionPath(b *testing.B) {
	for _, bc := range []struct {
		name, yaml string
	}{
		{"continuity_off", ""},
		{"continuity_on", "\ncompaction_continuity: {enabled: true}\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnv(b, envOptions{yaml: bc.yaml})
			a := e.agent("bench-" + bc.name)
			ctx := context.Background()
			for _, s := range []string{"We're building an inventory service. Please make a plan and track it with your todo list.", "Yes, go ahead."} {
				if _, err := a.Say(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
			client := &http.Client{}
			b.ResetTimer()
			for b.Loop() {
				req, err := a.CompactionRequest(ctx)
				if err != nil {
					b.Fatal(err)
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := demo.ReadAnthropicStream(resp.Body); err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
