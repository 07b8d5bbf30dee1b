package openrecall

// Token is one bearer token the server accepts and the scopes it grants:
// the one type the server, its cockpit and the configuration's resolved
// tokens share. Secret is compared in constant time and never shown.
type Token struct {
	Name   string
	Secret string
	Scopes []string
	// Analyst is the name the configuration gave the token: an analyst
	// logs in to the cockpit with it (with the read or retain scope) and
	// every action records it. A token without one (an environment token,
	// an unnamed entry) cannot log in.
	Analyst string
}

// Token scopes: ingest posts alerts, read sees, retain acts (decides,
// takes a memory back, approves and revokes exceptions).
const (
	ScopeIngest = "ingest"
	ScopeRetain = "retain"
	ScopeRead   = "read"
)
