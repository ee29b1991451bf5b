package server

import (
	"errors"
	"net/http"

	"github.com/tether-dev/tether/internal/dialect"
)

// writeError writes an error in the caller's own dialect (dialect.ErrorBody).
// All error responses of the proxy go through here.
func writeError(w http.ResponseWriter, d dialect.Name, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(dialect.ErrorBody(d, status, message))
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
