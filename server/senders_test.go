package server_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/openrecall/openrecall/server"
)

// TestSenderTokens: senders that cannot set a header authenticate with
// HTTP basic authentication or ?token=, on the detecting endpoint and on
// a named sender's; the token never reaches a log line, the access log
// included.
func TestSenderTokens(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	e := newEnv(t, options{noServe: true, log: zap.New(core), tokens: []server.Token{
		{Name: "senders", Secret: "s3cret-ingest-token", Scopes: []string{server.ScopeIngest}},
	}})
	sns, err := os.ReadFile("../intake/testdata/senders/sns/backup-failed.json")
	if err != nil {
		t.Fatal(err)
	}
	generic := `{"check": "nightly-export", "state": "failed", "host": "etl-3"}`
	tests := []struct {
		name, path, body string
		basic            bool
		want             int
	}{
		{"query token, detected sender", "/api/v1/alerts?token=s3cret-ingest-token", string(sns), false, http.StatusAccepted},
		{"query token, named sender", "/api/v1/alerts/sns?token=s3cret-ingest-token", string(sns), false, http.StatusAccepted},
		{"basic auth password", "/api/v1/alerts/sns", string(sns), true, http.StatusAccepted},
		{"wrong query token", "/api/v1/alerts/sns?token=guess", string(sns), false, http.StatusUnauthorized},
		{"no token", "/api/v1/alerts/sns", string(sns), false, http.StatusUnauthorized},
		{"generic JSON of no sender", "/api/v1/alerts?token=s3cret-ingest-token", generic, false, http.StatusAccepted},
		{"unknown sender", "/api/v1/alerts/nosuchsender?token=s3cret-ingest-token", generic, false, http.StatusNotFound},
		{"named builtin sender", "/api/v1/alerts/openrecall?token=s3cret-ingest-token", `{"title":"disk full on db-1"}`, false, http.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.url+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.basic {
				req.SetBasicAuth("openrecall", "s3cret-ingest-token")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if logs.Len() == 0 {
		t.Fatal("no log line at all: the access log is not observed")
	}
	for _, entry := range logs.All() {
		line := entry.Message
		for k, v := range entry.ContextMap() {
			line += " " + k + "=" + toString(v)
		}
		if strings.Contains(line, "s3cret-ingest-token") {
			t.Errorf("a log line holds the token: %s", line)
		}
	}
	if got := e.metric(`openrecall_sender_alerts_total{sender="sns"}`); got != "3" {
		t.Errorf(`openrecall_sender_alerts_total{sender="sns"} = %q, want 3 (three deliveries read as SNS)`, got)
	}
	if got := e.metric(`openrecall_sender_alerts_total{sender="json"}`); got != "1" {
		t.Errorf(`openrecall_sender_alerts_total{sender="json"} = %q, want 1`, got)
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// TestTruncatedReported: a webhook Alertmanager cut with max_alerts is
// heard: the alerts it left out are counted per sender.
func TestTruncatedReported(t *testing.T) {
	e := newEnv(t, options{noServe: true})
	body, err := os.ReadFile("../intake/testdata/senders/alertmanager/alertmanager_payload_truncated.json")
	if err != nil {
		t.Fatal(err)
	}
	var acc server.Accepted
	if resp := e.post("/api/v1/alerts/alertmanager", "", string(body), &acc); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if acc.Accepted != 3 {
		t.Errorf("accepted %d, want the 2 alerts and the notice of the 2 left out", acc.Accepted)
	}
	if got := e.metric(`openrecall_sender_dropped_alerts_total{sender="alertmanager"}`); got != "2" {
		t.Errorf("dropped alerts metric = %q, want 2", got)
	}
}

// TestEverySenderOverHTTP posts every sender's fixtures as HTTP bodies,
// to the detecting endpoint and to the sender's own: each is accepted
// (202) with its alerts, and counted under its sender.
func TestEverySenderOverHTTP(t *testing.T) {
	e := newEnv(t, options{noServe: true})
	const root = "../intake/testdata/senders/"
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	posted := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := os.ReadDir(root + d.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := f.Name()
			if !strings.HasSuffix(name, ".json") || name == "golden.json" || name == "identity.json" {
				continue
			}
			body, err := os.ReadFile(root + d.Name() + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"/api/v1/alerts", "/api/v1/alerts/" + d.Name()} {
				var acc server.Accepted
				resp := e.post(path, "", string(body), &acc)
				if resp.StatusCode != http.StatusAccepted {
					t.Errorf("%s/%s to %s: status %d", d.Name(), name, path, resp.StatusCode)
					continue
				}
				if d.Name() != "pagerduty" && acc.Accepted+acc.Duplicates == 0 {
					t.Errorf("%s/%s to %s: nothing accepted: %+v", d.Name(), name, path, acc)
				}
				posted++
			}
		}
	}
	if posted < 300 {
		t.Errorf("%d bodies posted, want every fixture twice", posted)
	}
	for _, sender := range []string{"datadog", "falcosidekick", "cloudwatch", "wazuh", "zabbix"} {
		if got := e.metric(`openrecall_sender_alerts_total{sender="` + sender + `"}`); got == "" || got == "0" {
			t.Errorf("no alerts counted for %s", sender)
		}
	}
}
