package extract

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/schema"
)

// captureBodies serves reply to every request and records the bodies.
func captureBodies(t *testing.T, reply string) (*httptest.Server, func() [][]byte) {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, func() [][]byte { mu.Lock(); defer mu.Unlock(); return bodies }
}

// The extractor's own Chat Completions request is the one the official
// OpenAI SDK builds for the same parameters, and the SDK reads the answer
// the caller reads.
func TestOpenAICallerWireMatchesSDK(t *testing.T) {
	reply := `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":` +
		jsonString(opsJSON) + `}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":3}}}`
	srv, bodies := captureBodies(t, reply)
	in := testInput()
	raw, u, err := NewOpenAICaller(config.Provider{BaseURL: srv.URL + "/v1"}, "small-model", 777, nil, testSecret).Extract(context.Background(), in, "the prompt")
	if err != nil {
		t.Fatal(err)
	}
	chat := openai.NewChatCompletionService(ooption.WithBaseURL(srv.URL+"/v1"), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
	resp, err := chat.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    shared.ChatModel("small-model"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("the prompt"), openai.UserMessage(in.Text)},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "continuity_ops", Strict: openai.Bool(false), Schema: json.RawMessage(schema.Ops())},
		}},
		MaxCompletionTokens: openai.Int(777),
	})
	if err != nil {
		t.Fatal(err)
	}
	b := bodies()
	if !sameRequest(t, b[0], b[1]) {
		t.Errorf("caller body differs from the SDK's:\ncaller %s\nsdk    %s", b[0], b[1])
	}
	if string(raw) != resp.Choices[0].Message.Content || u.InputTokens != resp.Usage.PromptTokens ||
		u.OutputTokens != resp.Usage.CompletionTokens || u.CacheReadTokens != resp.Usage.PromptTokensDetails.CachedTokens {
		t.Errorf("caller read %s %+v, SDK read %s %+v", raw, u, resp.Choices[0].Message.Content, resp.Usage)
	}
}

// The same for the Anthropic Messages request with the forced record_ops tool.
func TestAnthropicCallerWireMatchesSDK(t *testing.T) {
	reply := `{"id":"m1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"record_ops","input":` +
		opsJSON + `}],"usage":{"input_tokens":20,"output_tokens":7,"cache_read_input_tokens":4,"cache_creation_input_tokens":2}}`
	srv, bodies := captureBodies(t, reply)
	in := testInput()
	raw, u, err := NewAnthropicCaller(config.Provider{BaseURL: srv.URL}, "claude-small", 900, nil, testSecret).Extract(context.Background(), in, "the prompt")
	if err != nil {
		t.Fatal(err)
	}
	msgs := anthropic.NewMessageService(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
	resp, err := msgs.New(context.Background(), anthropic.MessageNewParams{
		Model:     anthropic.Model("claude-small"),
		MaxTokens: 900,
		System:    []anthropic.TextBlockParam{{Text: "the prompt"}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(in.Text))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        RecordOpsTool,
			Description: anthropic.String("Record the continuity operations found in the transcript. Call exactly once; use an empty ops list when nothing changes."),
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](json.RawMessage(schema.Ops())),
		}}},
		ToolChoice: anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: RecordOpsTool, DisableParallelToolUse: anthropic.Bool(true)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := bodies()
	if !sameRequest(t, b[0], b[1]) {
		t.Errorf("caller body differs from the SDK's:\ncaller %s\nsdk    %s", b[0], b[1])
	}
	var sdkInput json.RawMessage
	for _, c := range resp.Content {
		if c.Type == "tool_use" {
			sdkInput = c.Input
		}
	}
	if !jsonEqual(t, string(raw), string(sdkInput)) || u.InputTokens != resp.Usage.InputTokens || u.OutputTokens != resp.Usage.OutputTokens ||
		u.CacheReadTokens != resp.Usage.CacheReadInputTokens || u.CacheWriteTokens != resp.Usage.CacheCreationInputTokens {
		t.Errorf("caller read %s %+v, SDK read %s %+v", raw, u, sdkInput, resp.Usage)
	}
}

func sameRequest(t *testing.T, a, b []byte) bool {
	t.Helper()
	return jsonEqual(t, string(a), string(b))
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
