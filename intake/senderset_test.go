package intake_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/internal/sendertest"
)

// loose is a team's mapping that matches any object: it must never take a
// payload a built-in sender recognises.
func loose() sender.Sender {
	return sender.Sender{Name: "catch-all",
		Match: func(sender.Value) bool { return true },
		Map: func(sender.Value) ([]sender.Event, error) {
			var e sender.Event
			e.Set(sender.PartTitle, "caught", "(constant)")
			return []sender.Event{e}, nil
		}}
}

// titleOverride replaces a built-in sender's reading: its title is
// "override: " and the payload's field.
func titleOverride(name, field string) sender.Sender {
	return sender.Sender{Name: name, Display: name + " (team override)",
		Match: func(v sender.Value) bool { return v.Has(field) },
		Map: func(v sender.Value) ([]sender.Event, error) {
			var e sender.Event
			e.Set(sender.PartTitle, "override: "+v.Path(field).String(), field)
			return []sender.Event{e}, nil
		}}
}

func mustMerge(t *testing.T, extra ...sender.Sender) sender.Set {
	t.Helper()
	set, err := sender.Merge(sender.All(), extra)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func readOne(t *testing.T, body []byte, opts intake.Options) intake.Record {
	t.Helper()
	recs, err := intake.ParseBytes(body, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1: %+v", len(recs), recs)
	}
	if recs[0].Err != nil {
		t.Fatalf("rejected: %v", recs[0].Err)
	}
	return recs[0]
}

func fixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/senders/" + path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const acmePayload = `{"monitor_id": "chk-42", "check": "Checkout latency above 2s", "level": "page", "app": "checkout", "region": "eu-west-1"}`

// TestAddedSenderIsDetectedAndNamed: a sender a set adds reads its payload
// when detected and when named (--format NAME), and only with that set:
// the built-ins alone read it generically.
func TestAddedSenderIsDetectedAndNamed(t *testing.T) {
	set := mustMerge(t, sendertest.AcmeMonitor())
	format, err := intake.ParseFormatIn("ACME-Monitor", set)
	if err != nil || format != "acme-monitor" {
		t.Fatalf("ParseFormatIn(ACME-Monitor) = %q, %v", format, err)
	}
	if _, err := intake.ParseFormat("acme-monitor"); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("ParseFormat(acme-monitor) without the set: %v, want ErrInvalid", err)
	}
	if f, ok := intake.SenderFormat(set, "acme-monitor"); !ok || f != "acme-monitor" {
		t.Errorf("SenderFormat(acme-monitor) = %q, %v", f, ok)
	}
	if got := intake.SenderFormatsIn(set); got[len(got)-1] != "acme-monitor" {
		t.Errorf("SenderFormatsIn ends with %q, want the added sender", got[len(got)-1])
	}
	for _, f := range []intake.Format{intake.FormatAuto, format} {
		rec := readOne(t, []byte(acmePayload), intake.Options{Format: f, Senders: set, Explain: true})
		a := rec.Alert
		if a.Sender != "acme-monitor" || a.Title != "Checkout latency above 2s" || a.Severity != openrecall.SeverityCritical ||
			a.Service != "checkout" || a.Rule != "chk-42" {
			t.Errorf("format %s: sender %q title %q severity %q service %q rule %q", f, a.Sender, a.Title, a.Severity, a.Service, a.Rule)
		}
		if a.Origin[sender.PartTitle] != "check" || a.Origin[sender.PartSeverity] != "level" {
			t.Errorf("format %s: origin %v", f, a.Origin)
		}
		if rec.SentSeverity != "page" {
			t.Errorf("format %s: sent severity %q, want page", f, rec.SentSeverity)
		}
	}
	if a := readOne(t, []byte(acmePayload), intake.Options{}).Alert; a.Sender != openrecall.SenderGeneric {
		t.Errorf("built-ins alone: sender %q, want the generic reading", a.Sender)
	}
}

// TestAddedSenderNeverHijacksABuiltin: a team's loose mapping, tried after
// the built-in adapters, leaves their payloads to them (real fixtures).
func TestAddedSenderNeverHijacksABuiltin(t *testing.T) {
	set := mustMerge(t, loose())
	for path, want := range map[string]string{
		"datadog/cpu-high-web-1.json":             "datadog",
		"sentry/issue_alert_docs.json":            "sentry",
		"alertmanager/highlatency.json":           "alertmanager",
		"opsgenie/" + firstFixture(t, "opsgenie"): "opsgenie",
	} {
		recs, err := intake.ParseBytes(fixture(t, path), intake.Options{Senders: set})
		if err != nil || len(recs) == 0 || recs[0].Err != nil {
			t.Fatalf("%s: %v %+v", path, err, recs)
		}
		if got := recs[0].Alert.Sender; got != want {
			t.Errorf("%s: read by %q, want %q", path, got, want)
		}
	}
	// What no built-in recognises is the loose mapping's.
	if a := readOne(t, []byte(`{"whatever": 1}`), intake.Options{Senders: set}).Alert; a.Sender != "catch-all" || a.Title != "caught" {
		t.Errorf("unrecognised payload: sender %q title %q, want the added sender's", a.Sender, a.Title)
	}
}

func firstFixture(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir("testdata/senders/" + dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".json") && n != "golden.json" && n != "identity.json" {
			return n
		}
	}
	t.Fatalf("no fixture in %s", dir)
	return ""
}

// TestOverrideReplacesABuiltinsReading: a mapping named as a built-in
// sender reads its payloads in its place — detected, and named — for an
// adapter (Datadog) and for a sender intake reads itself (Alertmanager,
// named: its webhook is then not streamed as one).
func TestOverrideReplacesABuiltinsReading(t *testing.T) {
	dd := fixture(t, "datadog/cpu-high-web-1.json")
	set := mustMerge(t, titleOverride("datadog", "alert_id"))
	for _, f := range []intake.Format{intake.FormatAuto, "datadog"} {
		a := readOne(t, dd, intake.Options{Format: f, Senders: set}).Alert
		if a.Sender != "datadog" || a.Title != "override: 51840021" {
			t.Errorf("format %s: sender %q title %q, want the override's reading", f, a.Sender, a.Title)
		}
	}
	if a := readOne(t, dd, intake.Options{}).Alert; !strings.Contains(a.Title, "High CPU on api hosts") {
		t.Errorf("built-ins alone: title %q, want Datadog's own", a.Title)
	}

	am := fixture(t, "alertmanager/highlatency.json")
	set = mustMerge(t, titleOverride("alertmanager", "receiver"))
	format, ok := intake.SenderFormat(set, "alertmanager")
	if !ok {
		t.Fatal("no format for the overridden alertmanager")
	}
	a := readOne(t, am, intake.Options{Format: format, Senders: set}).Alert
	if a.Sender != "alertmanager" || !strings.HasPrefix(a.Title, "override: ") {
		t.Errorf("named alertmanager: sender %q title %q, want the override's reading of the whole webhook", a.Sender, a.Title)
	}
	if f, _ := intake.SenderFormat(sender.Set{}, "alertmanager"); f != intake.FormatAlertmanager {
		t.Errorf("built-in alertmanager's format %q, want %q", f, intake.FormatAlertmanager)
	}
}

// TestExplainKeepsTheSentSeverity: with Options.Explain each record keeps
// the severity as its payload gave it, whichever reader read it; without,
// nothing is kept.
func TestExplainKeepsTheSentSeverity(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"datadog adapter", fixture(t, "datadog/cpu-high-web-1.json"), "P2"},
		{"alertmanager label", fixture(t, "alertmanager/highlatency.json"), "warning"},
		{"pagerduty events v2", []byte(`{"event_action":"trigger","dedup_key":"k","payload":{"summary":"disk full","source":"db-1","severity":"error"}}`), "error"},
		{"own object", []byte(`{"title":"disk full","severity":"SEV2"}`), "SEV2"},
		{"generic reading", []byte(`{"check":"nightly-export","state":"failed","priority":"P1"}`), "P1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readOne(t, tt.body, intake.Options{Explain: true}).SentSeverity; got != tt.want {
				t.Errorf("sent severity %q, want %q", got, tt.want)
			}
			if got := readOne(t, tt.body, intake.Options{}).SentSeverity; got != "" {
				t.Errorf("without Explain: sent severity %q, want none", got)
			}
		})
	}
}
