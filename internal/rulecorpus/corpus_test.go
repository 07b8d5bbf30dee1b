package rulecorpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/internal/testenv"
)

func TestExpand(t *testing.T) {
	labels := map[string]string{"instance": "10.0.0.1:9100", "alertname": "X"}
	tests := []struct{ tmpl, want string }{
		{"down (instance {{ $labels.instance }})", "down (instance 10.0.0.1:9100)"},
		{"{{$labels.instance}}", "10.0.0.1:9100"},
		{"VALUE = {{ $value }}", "VALUE = 4.2"},
		{`{{ $value | printf "%.2f" }}%`, "4.2%"},
		{`{{ printf "%.2f" $value }}`, "4.2"},
		{"{{ $value | humanize }}", "4.2"},
		{"on {{ $labels.pod }}", "on <no value>"},
		{"LABELS = {{ $labels }}", "LABELS = map[alertname:X instance:10.0.0.1:9100]"},
		{"no template", "no template"},
	}
	for _, tt := range tests {
		if got := Expand(tt.tmpl, labels, "4.2"); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
}

func TestAlertmanagerFingerprint(t *testing.T) {
	// Computed by a real Alertmanager (intake/testdata/alertmanager_payload.json).
	real := map[string]string{"alertname": "HighErrorRate", "env": "prod", "namespace": "shop",
		"pod": "checkout-api-7d9f8b-q8k2", "service": "checkout-api", "severity": "critical"}
	if got := fingerprint(real); got != "c91d997d55db7a73" {
		t.Errorf("fingerprint = %s, want Alertmanager's c91d997d55db7a73", got)
	}
	a := fingerprint(map[string]string{"a": "1", "b": "2"})
	if a != fingerprint(map[string]string{"b": "2", "a": "1"}) || len(a) != 16 {
		t.Fatalf("fingerprint not stable: %s", a)
	}
	if a == fingerprint(map[string]string{"a": "1", "b": "3"}) {
		t.Fatal("fingerprint ignores a value")
	}
}

func TestCorpusRendersEveryRule(t *testing.T) {
	path, err := Path(".")
	if errors.Is(err, ErrAbsent) {
		testenv.Missing(t, err)
	}
	rules, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 600 {
		t.Fatalf("corpus has %d rules, want the 645 shipped", len(rules))
	}
	for i, r := range rules {
		a := Alert(r, Firing{N: i, Service: "svc"})
		body, err := Webhook(a)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Alerts []struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"alerts"`
		}
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatal(err)
		}
		for k, v := range back.Alerts[0].Annotations {
			if strings.Contains(v, "{{") {
				t.Errorf("rule %s: annotation %s left a template action: %q", r.Alert, k, v)
			}
		}
	}
}

// TestWriteQueue checks the fixed bench queue: one webhook per line, rules
// in turn, every firing with its own instance.
func TestWriteQueue(t *testing.T) {
	rules := []Rule{{Alert: "A", Exporter: "x", Summary: "s {{ $value }}"}, {Alert: "B", Exporter: "y"}}
	var buf bytes.Buffer
	if err := WriteQueue(&buf, rules, 5); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	seen := map[string]bool{}
	for i, l := range lines {
		var wh struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
			} `json:"alerts"`
		}
		if err := json.Unmarshal([]byte(l), &wh); err != nil || len(wh.Alerts) != 1 {
			t.Fatalf("line %d: %v, %d alerts", i+1, err, len(wh.Alerts))
		}
		lb := wh.Alerts[0].Labels
		if want := rules[i%2].Alert; lb["alertname"] != want {
			t.Errorf("line %d: alertname %q, want %q", i+1, lb["alertname"], want)
		}
		if seen[lb["instance"]] {
			t.Errorf("line %d: instance %q repeats", i+1, lb["instance"])
		}
		seen[lb["instance"]] = true
	}
	if err := WriteQueue(&buf, nil, 1); err == nil {
		t.Error("WriteQueue with no rules: no error")
	}
}
