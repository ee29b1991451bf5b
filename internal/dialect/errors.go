package dialect

import (
	"encoding/json"
	"net/http"
)

// ErrorBody is an error response body in the dialect's own format: an
// OpenAI error object for Chat Completions and Responses (and Tether's own
// APIs), an Anthropic error envelope for Messages, a google.rpc status for
// Gemini.
func ErrorBody(d Name, status int, message string) []byte {
	var body any
	switch d {
	case Gemini:
		body = map[string]any{
			"error": map[string]any{"code": status, "message": message, "status": geminiStatus(status)},
		}
	case AnthropicMessages:
		body = map[string]any{
			"type":  "error",
			"error": map[string]any{"type": anthropicErrorType(status), "message": message},
		}
	default:
		body = map[string]any{
			"error": map[string]any{"message": message, "type": openAIErrorType(status), "param": nil, "code": openAIErrorCode(status)},
		}
	}
	data, _ := json.Marshal(body)
	return data
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
