package fakemodel

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// Gemini generateContent wire shapes (GenerateContentResponse).

type gemPart struct {
	Text         *string      `json:"text,omitempty"`
	FunctionCall *gemFunction `json:"functionCall,omitempty"`
}

type gemFunction struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gemContent struct {
	Role  string    `json:"role"`
	Parts []gemPart `json:"parts"`
}

type gemCandidate struct {
	Content      gemContent `json:"content"`
	FinishReason string     `json:"finishReason,omitempty"`
	Index        int        `json:"index"`
}

type gemUsage struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	TotalTokenCount         int64 `json:"totalTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount,omitempty"`
}

type gemResponse struct {
	Candidates    []gemCandidate `json:"candidates"`
	UsageMetadata *gemUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

// geminiPath reports whether path is a Gemini model call
// (/v1beta/models/{model}:{method}, or /v1 or /v1alpha).
func geminiPath(path string) bool {
	for _, v := range []string{"/v1beta/models/", "/v1/models/", "/v1alpha/models/"} {
		if rest, ok := strings.CutPrefix(path, v); ok {
			return strings.Contains(rest, ":")
		}
	}
	return false
}

// geminiCall splits a Gemini path into model and method.
func geminiCall(path string) (model, method string) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", ""
	}
	model, method, _ = strings.Cut(path[i+len("/models/"):], ":")
	return model, method
}

func (a *answer) gemParts() []gemPart {
	var parts []gemPart
	if a.reply.Text != "" || len(a.calls) == 0 {
		text := a.reply.Text
		parts = append(parts, gemPart{Text: &text})
	}
	for _, tc := range a.calls {
		args := json.RawMessage(tc.Arguments)
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		parts = append(parts, gemPart{FunctionCall: &gemFunction{ID: tc.ID, Name: tc.Name, Args: args}})
	}
	return parts
}

func (a *answer) gemUsage() *gemUsage {
	return &gemUsage{
		PromptTokenCount:        a.inTokens,
		CandidatesTokenCount:    a.outTokens,
		TotalTokenCount:         a.inTokens + a.outTokens,
		CachedContentTokenCount: a.cacheTokens,
	}
}

// gemini answers generateContent with one GenerateContentResponse and
// streamGenerateContent with data-only SSE chunks (the alt=sse form), text in
// word pieces, function calls whole, finishReason and usage on the last one.
func (a *answer) gemini(ctx context.Context, w http.ResponseWriter) {
	id := randomID()
	if !a.req.Stream() {
		setRequestID(w.Header(), DialectGemini)
		writeJSON(w, http.StatusOK, gemResponse{
			Candidates:    []gemCandidate{{Content: gemContent{Role: "model", Parts: a.gemParts()}, FinishReason: "STOP"}},
			UsageMetadata: a.gemUsage(), ModelVersion: a.model, ResponseID: id,
		})
		return
	}
	e := a.startSSE(ctx, w)
	var chunks [][]gemPart
	for _, p := range a.gemParts() {
		if p.Text == nil {
			chunks = append(chunks, []gemPart{p})
			continue
		}
		for _, piece := range splitWords(*p.Text) {
			chunks = append(chunks, []gemPart{{Text: &piece}})
		}
	}
	if len(chunks) == 0 {
		empty := ""
		chunks = [][]gemPart{{{Text: &empty}}}
	}
	for i, parts := range chunks {
		resp := gemResponse{Candidates: []gemCandidate{{Content: gemContent{Role: "model", Parts: parts}}}, ModelVersion: a.model, ResponseID: id}
		if i == len(chunks)-1 {
			e.beforeEnd()
			resp.Candidates[0].FinishReason = "STOP"
			resp.UsageMetadata = a.gemUsage()
			_ = e.event("", resp)
			return
		}
		if !e.delta("", resp) {
			return
		}
	}
}
