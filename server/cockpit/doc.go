// Package cockpit is the analysts' web UI of `openrecall serve` (DESIGN
// §12a): a third adapter over the application layer (usecase), beside the
// command line and the JSON API, with no logic of its own beyond
// presentation. Pages are rendered on the server with html/template from
// templates embedded in the binary; the stylesheet and the one small script
// are served under content-hashed names with long cache lifetimes; every
// action is a plain form (POST, then redirect, then GET), so the cockpit
// works without JavaScript.
//
// Security: an analyst logs in with a named, scoped token of
// server.tokens (read sees, retain acts) and gets an HttpOnly,
// SameSite=Strict session cookie (Secure over TLS); cross-origin writes are
// refused (http.CrossOriginProtection); every response carries a strict
// Content-Security-Policy without inline script or style; untrusted text
// (alert titles, labels, notes, model output) reaches the page only through
// html/template; every action is an audit entry naming the analyst.
package cockpit
