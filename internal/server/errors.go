package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/tether-dev/tether/internal/dialect"
)

// writeError writes an error in the caller's own dialect: an OpenAI error
// object for Chat Completions and Responses, an Anthropic error envelope for
// Messages. All error responses of the proxy go through here.
func writeError(w http.ResponseWriter, d dialect.Name, status int, message string) {
	var body any
	if d == dialect.Gemini {
		body = map[string]any{
			"error": map[string]any{"code": status, "message": message, "status": geminiStatus(status)},
		}
	} else if d == dialect.AnthropicMessages {
		body = map[string]any{
			"type":  "error",
			"error": map[string]any{"type": anthropicErrorType(status), "message": message},
		}
	} else {
		body = map[string]any{
			"error": map[string]any{"message": message, "type": openAIErrorType(status), "param": nil, "code": openAIErrorCode(status)},
		}
	}
	data, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		if status == http.StatusRequestEntityTooLarge {
			return "request_too_large"
		}
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	default:
		return "api_error"
	}
}

func openAIErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusTooManyRequests:
		return "insufficient_quota"
	default:
		return "server_error"
	}
}

func openAIErrorCode(status int) any {
	switch status {
	case http.StatusUnauthorized:
		return "invalid_api_key"
	case http.StatusTooManyRequests:
		return "budget_exceeded"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusBadGateway:
		return "upstream_unreachable"
	case http.StatusGatewayTimeout:
		return "upstream_timeout"
	}
	return nil
}

// geminiStatus is the google.rpc status name Gemini's API pairs with an
// HTTP status.
func geminiStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// parseErrorMessage is the 400 message for a body dialect.Parse refused.
func parseErrorMessage(err error) string {
	switch {
	case errors.Is(err, dialect.ErrTooDeep):
		return "request body " + dialect.ErrTooDeep.Error()
	case errors.Is(err, dialect.ErrDuplicateKey):
		return "request body names a top-level field twice; send each field once"
	case errors.Is(err, dialect.ErrTooManyFields):
		return "request body: " + dialect.ErrTooManyFields.Error()
	}
	return "request body is not a valid JSON object"
}
