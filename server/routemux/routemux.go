// Package routemux is an http.ServeMux that remembers the patterns
// registered on it, so the API and the cockpit can each list the routes
// they serve (server.Server.Routes) for the tests that must cover them all.
package routemux

import (
	"net/http"
	"slices"
)

// Mux is an http.ServeMux that records every pattern registered on it, in
// registration order.
type Mux struct {
	*http.ServeMux
	patterns []string
}

// New returns an empty Mux.
func New() *Mux { return &Mux{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern, as http.ServeMux.Handle does, and records
// the pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers h for pattern, as http.ServeMux.HandleFunc does, and
// records the pattern.
func (m *Mux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Patterns returns a copy of the patterns registered, in order.
func (m *Mux) Patterns() []string { return slices.Clone(m.patterns) }
