package server_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/fakemodel"
	"github.com/tether-dev/tether/internal/ledger"
	"github.com/tether-dev/tether/internal/store/memstore"
)

const budgetKey = "alice-proxy-key-0123456789"

// A budget refusal is final until the period resets: the 429 says so
// (x-should-retry: false, Retry-After up to the next UTC midnight), and
// the official SDKs, which retry a plain 429 twice, send the call once.
func TestBudget429IsNotRetriedBySDKs(t *testing.T) {
	fake := startFake(t, fakemodel.Script(scripted))
	cfg := passthroughConfig(t, fake.URL, func(c *config.Config) {
		c.Principals = []config.Principal{{ID: "alice", Keys: []string{budgetKey}}}
		for i := range c.Providers {
			c.Providers[i].APIKey = "upstream-key"
		}
	})
	now := time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)
	led := ledger.New(ledger.Options{Store: memstore.New(memstore.Options{}), Now: func() time.Time { return now },
		Budgets: []config.Budget{{Principal: "alice", Period: "day", MaxTokens: 10}}})
	p := startProxy(t, proxyOpts{cfg: cfg, admitter: led})

	var attempts atomic.Int64
	var last *http.Response
	count := func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		attempts.Add(1)
		resp, err := next(req)
		last = resp
		return resp, err
	}
	oc := openai.NewClient(option.WithBaseURL(p.URL+"/v1"), option.WithAPIKey(budgetKey), option.WithMiddleware(count),
		option.WithRequestTimeout(10*time.Second))
	_, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(userText)},
	})
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("over budget: err %v, want a 429", err)
	}
	if n := attempts.Load(); n != 1 {
		t.Errorf("the OpenAI SDK sent the refused call %d times, want 1", n)
	}
	if got := last.Header.Get("X-Should-Retry"); got != "false" {
		t.Errorf("x-should-retry = %q", got)
	}
	if got, _ := strconv.Atoi(last.Header.Get("Retry-After")); got != 3600 {
		t.Errorf("Retry-After = %q, want 3600 (seconds to the next UTC midnight)", last.Header.Get("Retry-After"))
	}

	var aAttempts atomic.Int64
	ac := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(p.URL), aoption.WithAPIKey(budgetKey),
		aoption.WithMiddleware(func(req *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
			aAttempts.Add(1)
			return next(req)
		}))
	_, err = ac.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: "claude-test", MaxTokens: 100, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(userText))},
	})
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("over budget: err %v, want a 429", err)
	}
	if n := aAttempts.Load(); n != 1 {
		t.Errorf("the Anthropic SDK sent the refused call %d times, want 1", n)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("refused calls reached the provider %d times", n)
	}

	// Counting tokens is free at the provider and is not held against the
	// budget either.
	if _, err := ac.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model: "claude-test", Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(userText))},
	}); err != nil {
		t.Errorf("count_tokens refused by the budget: %v", err)
	}
}
