package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/notify"
)

// pagesConfig writes a configuration whose notify section has two
// receivers and route (YAML indented under notify:), and returns its
// path. The receivers' secrets name environment variables that are not
// set: counting pages must not read them.
func pagesConfig(t *testing.T, route string) string {
	t.Helper()
	conf := `notify:
  receivers:
    - name: pager
      type: pagerduty
      routing_key: env:OPENRECALL_TEST_PAGES_UNSET_PD_KEY
    - name: chat
      type: slack
      token: env:OPENRECALL_TEST_PAGES_UNSET_SLACK_TOKEN
      channel: "#oncall"
` + route
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAnalyzePages: analyze's summary prints the pages of its JSON
// document, over the default paging route without a notify route and
// over the configured one with it (its secrets unset); a notify route
// that names no configured receiver is the configuration's error.
func TestAnalyzePages(t *testing.T) {
	everything := pagesConfig(t, "  route:\n    receiver: chat\n")
	tests := []struct {
		name      string
		config    []string
		wantRoute string
		// every says that every firing's notification pages with
		// openrecall as without.
		every bool
	}{
		{"default paging route", nil, `the default paging route (decision=~"escalated|real")`, false},
		{"configured route, secrets unset", []string{"--config", everything}, "the configuration's notify route", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := seededDB(t)
			r := runCLI(t, "", append(tt.config, "--db", db, "analyze", "-o", "json", "../../examples/queue.jsonl")...)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			var doc struct {
				Pages notify.Pages `json:"pages"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			p := doc.Pages
			if p.Firings == 0 || p.Without == 0 || p.Without > p.Firings || p.With > p.Firings {
				t.Errorf("pages %+v: want 0 < without <= firings and with <= firings", p)
			}
			// openrecall pages per alert episode: a route that sends every
			// result to one receiver pages each firing.
			if tt.every && (p.With != p.Firings || p.Notifications != p.Firings) {
				t.Errorf("pages %+v: a route that sends every result to one receiver pages and notifies once per firing", p)
			}
			if !tt.every && p.With == p.Without {
				t.Errorf("pages %+v: the default paging route avoided none on the example", p)
			}
			want := "  pages     " + p.String() + "; "
			if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "notifications by "+tt.wantRoute+"\n") {
				t.Errorf("summary lacks %q by %s:\n%s", want, tt.wantRoute, r.stderr)
			}
		})
	}

	t.Run("route naming no receiver", func(t *testing.T) {
		bad := pagesConfig(t, "  route:\n    receiver: email\n")
		r := runCLI(t, "", "--config", bad, "--db", seededDB(t), "analyze", "../../examples/queue.jsonl")
		if r.code == exitOK || !strings.Contains(r.stderr, `config: notify: line 11: route.receiver: no receiver "email" is configured`) {
			t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
		}
	})
}

// TestEvalPagesRoute: eval counts pages over the configured notify route
// when there is one, and says so.
func TestEvalPagesRoute(t *testing.T) {
	everything := pagesConfig(t, "  route:\n    receiver: chat\n")
	r := runCLI(t, "", "--config", everything, "eval", "--size", "300", "--seed", "11")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var line string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "PAGES: ") {
			line = l
		}
	}
	if !strings.Contains(line, ", with 300 (") || !strings.HasSuffix(line, "by the configuration's notify route") {
		t.Errorf("PAGES line %q: want every firing paged, by the configuration's notify route", line)
	}
}
