package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/dialect"
	"github.com/tether-dev/tether/internal/flow"
	"github.com/tether-dev/tether/internal/upstream"
	"github.com/tether-dev/tether/schema"
)

// Caller makes one extractor call: prompt is the system prompt, in.Text the
// user payload. raw is the model's JSON output (not yet validated). usage is
// what the provider reported, also when err is non-nil and a response was
// received.
type Caller interface {
	Extract(ctx context.Context, in Input, prompt string) (raw []byte, usage dialect.Usage, err error)
}

// Caller errors.
var (
	// ErrNoOutput: the provider answered without the structured output
	// (refusal, no choices, no record_ops tool call).
	ErrNoOutput = errors.New("extractor returned no structured output")
)

// StatusError carries the HTTP status of a provider error response.
type StatusError struct {
	Status int
	Err    error
}

func (e *StatusError) Error() string {
	return "extractor call: provider status " + strconv.Itoa(e.Status)
}
func (e *StatusError) Unwrap() error { return e.Err }

// RecordOpsTool is the single tool the Anthropic caller forces.
const RecordOpsTool = "record_ops"

// DefaultCallTimeout bounds one extractor request when the provider sets none.
const DefaultCallTimeout = 2 * time.Minute

// maxResponseBytes bounds the provider response the caller reads; an
// extractor answer is a few kilobytes of ops.
const maxResponseBytes = 8 << 20

// anthropicVersion is the Messages API version the caller speaks.
const anthropicVersion = "2023-06-01"

var (
	_ Caller = (*OpenAICaller)(nil)
	_ Caller = (*AnthropicCaller)(nil)
)

// httpCaller holds what both callers share: one POST of a JSON body to a
// fixed URL with fixed headers, no retries, a request timeout.
type httpCaller struct {
	hc      *http.Client
	url     string
	header  http.Header
	timeout time.Duration
	model   string
	maxOut  int
	secret  []byte // signs each call's marker (flow.SignAux)
}

func newHTTPCaller(p config.Provider, path, model string, maxOut int, hc *http.Client, auxSecret []byte) httpCaller {
	if hc == nil {
		hc = &http.Client{}
	}
	h := http.Header{}
	for k, v := range p.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set(upstream.HeaderAuxDepth, "1")
	return httpCaller{
		hc: hc, url: strings.TrimRight(p.BaseURL, "/") + path, header: h,
		timeout: callTimeout(p), model: model, maxOut: maxOut, secret: auxSecret,
	}
}

// post sends body and returns the response body of a 2xx answer. Nothing is
// read from the environment; the provider's error text is not carried into
// the error.
func (c *httpCaller) post(ctx context.Context, provider string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s extractor: %w", provider, err)
	}
	req.Header = c.header.Clone()
	// The marker proves this one call (its body, depth 1, a nonce and an
	// expiry of seconds) to a Tether that the route leads back through.
	req.Header.Set(upstream.HeaderAux, flow.SignAux(c.secret, 1, body, time.Now()))
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s extractor: %w", provider, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s extractor: read response: %w", provider, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s extractor: %w", provider, &StatusError{Status: resp.StatusCode})
	}
	if len(out) > maxResponseBytes {
		return nil, fmt.Errorf("%s extractor: response larger than %d bytes", provider, maxResponseBytes)
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("%s extractor: response: %w", provider, dialect.ErrInvalidJSON)
	}
	return out, nil
}

// OpenAICaller calls an OpenAI-compatible Chat Completions endpoint with
// JSON schema output (schema/ops.v2.json, validated on return) and no tools.
type OpenAICaller struct{ httpCaller }

// NewOpenAICaller returns a caller for provider p (BaseURL ends in /v1) and
// model. It sends the configured key as a bearer token (none when p.APIKey
// is empty), p.Headers and the internal aux marker headers derived from
// auxSecret, with no retries and the provider's timeout. Nothing is read
// from the environment (OPENAI_BASE_URL, OPENAI_API_KEY, …).
func NewOpenAICaller(p config.Provider, model string, maxOut int, hc *http.Client, auxSecret []byte) *OpenAICaller {
	c := &OpenAICaller{newHTTPCaller(p, "/chat/completions", model, maxOut, hc, auxSecret)}
	c.header.Del("Authorization")
	if p.APIKey != "" {
		c.header.Set("Authorization", "Bearer "+p.APIKey)
	}
	return c
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatJSONSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

type chatResponseFormat struct {
	Type       string         `json:"type"`
	JSONSchema chatJSONSchema `json:"json_schema"`
}

type chatRequest struct {
	Model               string             `json:"model"`
	Messages            []chatMessage      `json:"messages"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	ResponseFormat      chatResponseFormat `json:"response_format"`
}

// Extract implements Caller.
func (c *OpenAICaller) Extract(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
	body, err := json.Marshal(chatRequest{
		Model:               c.model,
		Messages:            []chatMessage{{Role: "system", Content: prompt}, {Role: "user", Content: in.Text}},
		MaxCompletionTokens: max(c.maxOut, 0),
		ResponseFormat: chatResponseFormat{Type: "json_schema", JSONSchema: chatJSONSchema{
			Name: "continuity_ops",
			// Not strict: OpenAI's strict mode requires every property to be
			// required and rejects pattern/length keywords, which the ops
			// schema uses. The output is validated against the full schema by
			// capsule.ParseOps either way.
			Strict: false,
			Schema: json.RawMessage(schema.Ops()),
		}},
	})
	if err != nil {
		return nil, dialect.Usage{}, fmt.Errorf("openai extractor: %w", err)
	}
	resp, err := c.post(ctx, "openai", body)
	if err != nil {
		return nil, dialect.Usage{}, err
	}
	u := dialect.ParseUsage(dialect.OpenAIChat, resp)
	text := dialect.ResponseText(dialect.OpenAIChat, resp)
	if text == "" {
		return nil, u, fmt.Errorf("openai extractor: %w", ErrNoOutput)
	}
	return []byte(text), u, nil
}

// AnthropicCaller calls an Anthropic Messages endpoint with one forced tool,
// record_ops, whose input schema is schema/ops.v2.json.
type AnthropicCaller struct{ httpCaller }

// NewAnthropicCaller returns a caller for provider p (BaseURL without /v1)
// and model, configured as for NewOpenAICaller except that the key goes in
// x-api-key, as the Messages API and Tether's own upstream requests send it;
// nothing is read from the environment (ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY, …).
func NewAnthropicCaller(p config.Provider, model string, maxOut int, hc *http.Client, auxSecret []byte) *AnthropicCaller {
	if maxOut <= 0 {
		maxOut = config.DefaultExtractor().MaxOutputTokens
	}
	c := &AnthropicCaller{newHTTPCaller(p, "/v1/messages", model, maxOut, hc, auxSecret)}
	c.header.Del("Authorization")
	c.header.Del("X-Api-Key")
	if p.APIKey != "" {
		c.header.Set("X-Api-Key", p.APIKey)
	}
	if c.header.Get("Anthropic-Version") == "" {
		c.header.Set("Anthropic-Version", anthropicVersion)
	}
	return c
}

type anthropicText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content []anthropicText `json:"content"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

type anthropicRequest struct {
	Model      string              `json:"model"`
	MaxTokens  int                 `json:"max_tokens"`
	System     []anthropicText     `json:"system"`
	Messages   []anthropicMessage  `json:"messages"`
	Tools      []anthropicTool     `json:"tools"`
	ToolChoice anthropicToolChoice `json:"tool_choice"`
}

// Extract implements Caller.
func (c *AnthropicCaller) Extract(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
	body, err := json.Marshal(anthropicRequest{
		Model:     c.model,
		MaxTokens: c.maxOut,
		System:    []anthropicText{{Type: "text", Text: prompt}},
		Messages:  []anthropicMessage{{Role: "user", Content: []anthropicText{{Type: "text", Text: in.Text}}}},
		Tools: []anthropicTool{{
			Name:        RecordOpsTool,
			Description: "Record the continuity operations found in the transcript. Call exactly once; use an empty ops list when nothing changes.",
			InputSchema: json.RawMessage(schema.Ops()),
		}},
		ToolChoice: anthropicToolChoice{Type: "tool", Name: RecordOpsTool, DisableParallelToolUse: true},
	})
	if err != nil {
		return nil, dialect.Usage{}, fmt.Errorf("anthropic extractor: %w", err)
	}
	resp, err := c.post(ctx, "anthropic", body)
	if err != nil {
		return nil, dialect.Usage{}, err
	}
	u := dialect.ParseUsage(dialect.AnthropicMessages, resp)
	if raw := dialect.ResponseToolInput(dialect.AnthropicMessages, resp, RecordOpsTool); raw != nil {
		return raw, u, nil
	}
	return nil, u, fmt.Errorf("anthropic extractor: %w", ErrNoOutput)
}

func callTimeout(p config.Provider) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultCallTimeout
}
