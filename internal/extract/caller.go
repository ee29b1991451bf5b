package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

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

// DefaultCallTimeout bounds one SDK request when the provider sets none.
const DefaultCallTimeout = 2 * time.Minute

var (
	_ Caller = (*OpenAICaller)(nil)
	_ Caller = (*AnthropicCaller)(nil)
)

// OpenAICaller calls an OpenAI-compatible Chat Completions endpoint with
// JSON schema output (schema/ops.v1.json, validated on return) and no tools.
type OpenAICaller struct {
	chat   openai.ChatCompletionService
	model  string
	maxOut int
}

// NewOpenAICaller returns a caller for provider p (BaseURL ends in /v1) and
// model. Every SDK option is explicit: base URL, key (none when p.APIKey is
// empty), no retries, the request timeout, the given HTTP client, p.Headers
// and the internal aux marker headers derived from auxSecret. Nothing is
// read from the environment (OPENAI_BASE_URL, OPENAI_API_KEY, …).
func NewOpenAICaller(p config.Provider, model string, maxOut int, hc *http.Client, auxSecret []byte) *OpenAICaller {
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []ooption.RequestOption{
		ooption.WithBaseURL(p.BaseURL),
		ooption.WithHTTPClient(hc),
		ooption.WithMaxRetries(0),
		ooption.WithRequestTimeout(callTimeout(p)),
	}
	for k, v := range p.Headers {
		opts = append(opts, ooption.WithHeader(k, v))
	}
	if p.APIKey != "" {
		opts = append(opts, ooption.WithAPIKey(p.APIKey))
	} else {
		opts = append(opts, ooption.WithHeaderDel("Authorization"))
	}
	opts = append(opts,
		ooption.WithHeader(upstream.HeaderAux, flow.AuxMarker(auxSecret, 1)),
		ooption.WithHeader(upstream.HeaderAuxDepth, "1"))
	// The service is built directly, not through openai.NewClient, which
	// would first load defaults from the environment.
	return &OpenAICaller{chat: openai.NewChatCompletionService(opts...), model: model, maxOut: maxOut}
}

// Extract implements Caller.
func (c *OpenAICaller) Extract(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
	params := openai.ChatCompletionNewParams{
		Model: shared.ChatModel(c.model),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(prompt),
			openai.UserMessage(in.Text),
		},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name: "continuity_ops",
					// Not strict: OpenAI's strict mode requires every property
					// to be required and rejects pattern/length keywords, which
					// the ops schema uses. The output is validated against the
					// full schema by capsule.ParseOps either way.
					Strict: openai.Bool(false),
					Schema: json.RawMessage(schema.Ops()),
				},
			},
		},
	}
	if c.maxOut > 0 {
		params.MaxCompletionTokens = openai.Int(int64(c.maxOut))
	}
	resp, err := c.chat.New(ctx, params)
	if err != nil {
		return nil, dialect.Usage{}, callError("openai", err)
	}
	u := dialect.Usage{
		InputTokens:     resp.Usage.PromptTokens,
		OutputTokens:    resp.Usage.CompletionTokens,
		CacheReadTokens: resp.Usage.PromptTokensDetails.CachedTokens,
	}
	if len(resp.Choices) == 0 || resp.Choices[0].Message.Content == "" {
		return nil, u, fmt.Errorf("openai extractor: %w", ErrNoOutput)
	}
	return []byte(resp.Choices[0].Message.Content), u, nil
}

// AnthropicCaller calls an Anthropic Messages endpoint with one forced tool,
// record_ops, whose input schema is schema/ops.v1.json.
type AnthropicCaller struct {
	msgs   anthropic.MessageService
	model  string
	maxOut int
	tool   anthropic.ToolInputSchemaParam
}

// NewAnthropicCaller returns a caller for provider p (BaseURL without /v1)
// and model, with every SDK option explicit as for NewOpenAICaller; nothing
// is read from the environment (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, …).
func NewAnthropicCaller(p config.Provider, model string, maxOut int, hc *http.Client, auxSecret []byte) *AnthropicCaller {
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []aoption.RequestOption{
		aoption.WithoutEnvironmentDefaults(),
		aoption.WithBaseURL(p.BaseURL),
		aoption.WithHTTPClient(hc),
		aoption.WithMaxRetries(0),
		aoption.WithRequestTimeout(callTimeout(p)),
	}
	for k, v := range p.Headers {
		opts = append(opts, aoption.WithHeader(k, v))
	}
	// The key goes in x-api-key, as the Messages API and Tether's own
	// upstream requests send it; no SDK credential option is used, so no
	// credential chain (environment, profile files) is consulted.
	opts = append(opts, aoption.WithHeaderDel("Authorization"))
	if p.APIKey != "" {
		opts = append(opts, aoption.WithHeader("X-Api-Key", p.APIKey))
	} else {
		opts = append(opts, aoption.WithHeaderDel("X-Api-Key"))
	}
	opts = append(opts,
		aoption.WithHeader(upstream.HeaderAux, flow.AuxMarker(auxSecret, 1)),
		aoption.WithHeader(upstream.HeaderAuxDepth, "1"))
	if maxOut <= 0 {
		maxOut = 2000
	}
	return &AnthropicCaller{
		msgs:   anthropic.NewMessageService(opts...),
		model:  model,
		maxOut: maxOut,
		tool:   param.Override[anthropic.ToolInputSchemaParam](json.RawMessage(schema.Ops())),
	}
}

// Extract implements Caller.
func (c *AnthropicCaller) Extract(ctx context.Context, in Input, prompt string) ([]byte, dialect.Usage, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(c.model),
		MaxTokens: int64(c.maxOut),
		System:    []anthropic.TextBlockParam{{Text: prompt}},
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock(in.Text)),
		},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        RecordOpsTool,
			Description: anthropic.String("Record the continuity operations found in the transcript. Call exactly once; use an empty ops list when nothing changes."),
			InputSchema: c.tool,
		}}},
		ToolChoice: anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{
			Name:                   RecordOpsTool,
			DisableParallelToolUse: anthropic.Bool(true),
		}},
	}
	resp, err := c.msgs.New(ctx, params)
	if err != nil {
		return nil, dialect.Usage{}, callError("anthropic", err)
	}
	u := dialect.Usage{
		InputTokens:      resp.Usage.InputTokens,
		OutputTokens:     resp.Usage.OutputTokens,
		CacheReadTokens:  resp.Usage.CacheReadInputTokens,
		CacheWriteTokens: resp.Usage.CacheCreationInputTokens,
	}
	for _, b := range resp.Content {
		if b.Type == "tool_use" && b.Name == RecordOpsTool && len(b.Input) > 0 {
			return []byte(b.Input), u, nil
		}
	}
	return nil, u, fmt.Errorf("anthropic extractor: %w", ErrNoOutput)
}

func callTimeout(p config.Provider) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultCallTimeout
}

// callError wraps an SDK error with its HTTP status, when there is one,
// without carrying the provider's response text into the message.
func callError(provider string, err error) error {
	var oe *openai.Error
	if errors.As(err, &oe) {
		return fmt.Errorf("%s extractor: %w", provider, &StatusError{Status: oe.StatusCode, Err: err})
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return fmt.Errorf("%s extractor: %w", provider, &StatusError{Status: ae.StatusCode, Err: err})
	}
	return fmt.Errorf("%s extractor: %w", provider, err)
}
