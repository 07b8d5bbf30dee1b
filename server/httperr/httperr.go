// Package httperr maps the domain's errors to HTTP statuses, once for the
// JSON API and the cockpit alike (as wtf's one Error function does for
// every handler): a handler asks Status for the code and writes its own
// body, the error's text for a 4xx and a request id or a page for a 5xx.
package httperr

import (
	"errors"
	"net/http"

	"github.com/openrecall/openrecall"
)

// Status returns the HTTP status that answers err: 404 for
// openrecall.ErrNotFound, 400 for ErrInvalid, 409 for ErrIntegrity (a
// stored row that does not match its seal; not transient) and
// ErrGroupDecided, 410 for ErrPruned (the analysis existed; its documents
// are gone for good), 500 otherwise. An error that wraps more than one is
// answered by the first in that order.
func Status(err error) int {
	switch {
	case errors.Is(err, openrecall.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, openrecall.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, openrecall.ErrIntegrity), errors.Is(err, openrecall.ErrGroupDecided):
		return http.StatusConflict
	case errors.Is(err, openrecall.ErrPruned):
		return http.StatusGone
	default:
		return http.StatusInternalServerError
	}
}

// Shown reports whether the answer with code shows the error's text: a
// client's error does, a server's error is logged and not shown.
func Shown(code int) bool { return code < http.StatusInternalServerError }
