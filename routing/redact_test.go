package routing

import (
	"strings"
	"testing"
	"unicode"

	openrecall "github.com/openrecall/openrecall"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, secret, keep string
	}{
		{"authorization without a scheme", "authorization: abc123xyz", "abc123xyz", "authorization: "},
		{"bearer header", "curl -H 'Authorization: Bearer abcdef0123456789xyz' https://x", "abcdef0123456789xyz", "Authorization"},
		{"bare bearer", "sent bearer eyZZ1234567890abcdef to the api", "eyZZ1234567890abcdef", "bearer"},
		{"password pair", "login failed password=hunter2secret for admin", "hunter2secret", "password="},
		{"quoted password", `db_password: 'Tr0ub4dor&3'`, "Tr0ub4dor&3", "db_password"},
		{"api key pair", "api_key=AbC123xYz987 rejected", "AbC123xYz987", "api_key="},
		{"token query", "GET /cb?access_token=tok_9f8e7d6c5b4a&x=1", "tok_9f8e7d6c5b4a", "access_token="},
		{"postgres url", "dial postgres://app:s3cr3tpass@db-7:5432/orders failed", "s3cr3tpass", "@db-7:5432"},
		{"redis url", "redis://:p4ssw0rdonly@cache:6379/0", "p4ssw0rdonly", "cache:6379"},
		{"aws key", "key AKIAIOSFODNN7EXAMPLE leaked", "AKIAIOSFODNN7EXAMPLE", "leaked"},
		{"github token", "ghp_" + strings.Repeat("a1B2", 9) + " in logs", "ghp_" + strings.Repeat("a1B2", 9), "in logs"},
		{"openai key", "OPENAI sk-proj-" + strings.Repeat("Zx9", 10), "sk-proj-" + strings.Repeat("Zx9", 10), "OPENAI"},
		{"slack", "xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij", ""},
		{"jwt", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "cookie"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if strings.Contains(got, tt.secret) {
				t.Fatalf("Redact(%q) = %q: the secret is still there", tt.in, got)
			}
			if !strings.Contains(got, Redacted) || !strings.Contains(got, tt.keep) {
				t.Fatalf("Redact(%q) = %q: want %q kept and %q in its place", tt.in, got, tt.keep, Redacted)
			}
			if again := Redact(got); again != got {
				t.Fatalf("not idempotent: %q then %q", got, again)
			}
		})
	}
	for _, plain := range []string{
		"KubePodCrashLooping: pod api-7f9c restarting (auth_failure on login)",
		"Disk 91% full on db-7", "token bucket drained", "see https://runbooks.example.com/disk",
		"basic authentication failed for the bearer service",
	} {
		if got := Redact(plain); got != plain {
			t.Errorf("Redact(%q) = %q: text without a secret changed", plain, got)
		}
	}
}

func TestBuildPromptRedactsEverySource(t *testing.T) {
	const secret = "S3cretValue42"
	in := Input{
		Alert: openrecall.Alert{
			Title:       "login with password=" + secret,
			Text:        "postgres://svc:" + secret + "@db:5432/x and Authorization: Bearer " + secret + "abcdef",
			Labels:      map[string]string{"alertname": "X", "db_password": secret, "url": "https://u:" + secret + "@h/"},
			Annotations: map[string]string{"description": "token=" + secret},
		},
		Matches: []openrecall.Match{{Incident: openrecall.Incident{ID: "inc-1", Decision: openrecall.DecisionKnownBenign,
			Note: "rotated api_key=" + secret, DeadEnds: []string{"tried secret: " + secret}}, Score: 1}},
	}
	req := BuildPrompt(in)
	if strings.Contains(req.Prompt, secret) || strings.Contains(req.System, secret) {
		t.Fatalf("the prompt carries the secret:\n%s", req.Prompt)
	}
	if _, err := ParseCaseFile(req.Prompt); err != nil {
		t.Fatalf("the redacted case file does not parse: %v", err)
	}
}

func TestAnswerSchemaNamesEveryRequiredFieldAndTheClosedSet(t *testing.T) {
	s := AnswerSchema()
	props := s["properties"].(map[string]any)
	for _, f := range s["required"].([]any) {
		if _, ok := props[f.(string)]; !ok {
			t.Errorf("required field %v has no property", f)
		}
	}
	enum := props["decision"].(map[string]any)["enum"].([]any)
	if len(enum) != len(openrecall.Decisions) {
		t.Fatalf("decision enum %v, want the closed set %v", enum, openrecall.Decisions)
	}
	// Every schema field is a field ParseAnalysis accepts.
	if _, err := ParseAnalysis(`{"decision":"real","confidence":0.9,"summary":"s","hypotheses":[],"verification_commands":[],"next_steps":[],"skip_paths":[],"cited_memory_ids":[]}`); err != nil {
		t.Fatalf("an answer of the schema's shape does not parse: %v", err)
	}
}

// TestFoldsToASCIIIsComplete checks the premise of Redact's prefilter: the
// only letters outside ASCII that case-insensitive matching folds to an
// ASCII letter are the two foldsToASCII looks for.
func TestFoldsToASCIIIsComplete(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < 0x80 && !foldsToASCII(string(r)) {
				t.Errorf("%U folds to %q, and foldsToASCII does not see it", r, f)
			}
		}
	}
}

// TestRedactQuotedValueWithTrailer pins P42's second counterexample: a
// quoted secret value followed by more text is redacted once and for all.
func TestRedactQuotedValueWithTrailer(t *testing.T) {
	got := Redact("password: 'Tr0ub4dor&3': next")
	if want := "password: [REDACTED] next"; got != want {
		t.Fatalf("Redact = %q, want %q", got, want)
	}
	if again := Redact(got); again != got {
		t.Fatalf("not idempotent: %q then %q", got, again)
	}
}
