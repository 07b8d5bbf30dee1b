package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/usecase"
)

// actorTokens are alice's and bob's named tokens and an unnamed retain
// token (as OPENRECALL_RETAIN_TOKEN gives).
var actorTokens = []server.Token{
	{Name: "alice", Analyst: "alice", Secret: "alice-secret-0123456789", Scopes: []string{server.ScopeRead, server.ScopeRetain}},
	{Name: "bob", Analyst: "bob", Secret: "bob-secret-0123456789ab", Scopes: []string{server.ScopeRead, server.ScopeRetain}},
	{Name: "$OPENRECALL_RETAIN_TOKEN", Secret: "unnamed-secret-0123456", Scopes: []string{server.ScopeRetain}},
}

const (
	aliceSecret   = "alice-secret-0123456789"
	bobSecret     = "bob-secret-0123456789ab"
	unnamedSecret = "unnamed-secret-0123456"
)

// TestAPIWritesAsTheToken (issue 33, item 7): over the API the analyst of
// a retain, a group decision and an exception approved, written or
// revoked is the name of the token that authorised it. A body naming
// another analyst is refused with 403 and a reason, and nothing is
// written; the same name or none is the token's; an unnamed token cannot
// write decisions. Fails without the fix: alice's token stored a memory
// and an exception as bob's, and an omitted analyst was stored empty.
func TestAPIWritesAsTheToken(t *testing.T) {
	e := newEnv(t, options{noServe: true, tokens: actorTokens})
	alert := `"alert":{"title":"Disk almost full on db-1","labels":{"alertname":"DiskAlmostFull","service":"postgres","severity":"warning"}}`
	refused := func(what, path, secret, body, wantIn string) {
		t.Helper()
		var answer map[string]any
		resp := e.post(path, secret, body, &answer)
		if msg, _ := answer["error"].(string); resp.StatusCode != http.StatusForbidden || !strings.Contains(msg, wantIn) {
			t.Errorf("%s: %d %v, want 403 saying %q", what, resp.StatusCode, answer, wantIn)
		}
	}
	refused("alice retains as bob", "/api/v1/retain", aliceSecret,
		`{`+alert+`,"decision":"known_benign","note":"disk cleanup ran","analyst":"bob"}`, `analyst "bob" is not this token's name`)
	refused("an unnamed token retains", "/api/v1/retain", unnamedSecret,
		`{`+alert+`,"decision":"known_benign","note":"disk cleanup ran"}`, "this token has no name")
	refused("alice writes an exception as bob", "/api/v1/exceptions", aliceSecret,
		`{"rule":"DiskAlmostFull","service":"postgres","max_severity":"high","decision":"known_benign","expires":"4h","analyst":"bob"}`, `analyst "bob"`)
	refused("alice decides a group as bob", "/api/v1/groups/g-nothing/decision", aliceSecret,
		`{"decision":"known_benign","note":"n","analyst":"bob"}`, `analyst "bob"`)
	refused("an unnamed token decides a group", "/api/v1/groups/g-nothing/decision", unnamedSecret,
		`{"decision":"known_benign","note":"n"}`, "this token has no name")

	// Nothing was written by the refused requests.
	var list []usecase.ListedException
	e.do(http.MethodGet, "/api/v1/exceptions", aliceSecret, nil, nil, &list)
	if len(list) != 0 {
		t.Fatalf("exceptions after refusals: %+v", list)
	}

	// No analyst in the body: the token's name is recorded.
	var ret usecase.Retained
	if resp := e.post("/api/v1/retain", aliceSecret, `{`+alert+`,"decision":"known_benign","note":"disk cleanup ran"}`, &ret); resp.StatusCode != http.StatusCreated {
		t.Fatalf("alice retains: %d %+v", resp.StatusCode, ret)
	}
	if ret.Incident.Analyst != "alice" {
		t.Errorf("retained by %q, want alice", ret.Incident.Analyst)
	}
	// The same name as the token's is fine.
	var ch usecase.ExceptionChange
	if resp := e.post("/api/v1/exceptions", aliceSecret, `{"rule":"DiskAlmostFull","service":"postgres","max_severity":"high",
		"decision":"known_benign","expires":"4h","analyst":" alice "}`, &ch); resp.StatusCode != http.StatusCreated {
		t.Fatalf("alice writes an exception: %d %+v", resp.StatusCode, ch)
	}
	if ch.Exception.Analyst != "alice" {
		t.Errorf("exception approved by %q, want alice", ch.Exception.Analyst)
	}
	refused("bob revokes as alice", "/api/v1/exceptions/"+ch.Exception.ID+"/revoke", bobSecret,
		`{"analyst":"alice","reason":"the job was retired"}`, `analyst "alice"`)
	if resp := e.post("/api/v1/exceptions/"+ch.Exception.ID+"/revoke", bobSecret, `{"reason":"the job was retired"}`, &ch); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob revokes: %d %+v", resp.StatusCode, ch)
	}
	if ch.Exception.RevokedBy != "bob" {
		t.Errorf("revoked by %q, want bob", ch.Exception.RevokedBy)
	}
	// A group decision in alice's name passes the actor check (and finds
	// no such group).
	if resp := e.post("/api/v1/groups/g-nothing/decision", aliceSecret, `{"decision":"known_benign","note":"n","analyst":"alice"}`, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("alice decides an unknown group: %d, want 404", resp.StatusCode)
	}
}
