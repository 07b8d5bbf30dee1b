package property

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// P171 (issue #35, DESIGN §3 "Senders as data"): Grafana's current
// webhook is read by Alertmanager's hand-written fast path (intake/item.go,
// streamed item by item, with source grafana) only while a property holds
// it equal to its mapping (intake/sender/mappings/grafana.yaml, its first
// version), as P165 holds Alertmanager's.

// checkGrafanaFastPathIsMapping reads body, a Grafana webhook around its
// alerts as g says, by intake (the fast path, with the format detected and
// forced) and by grafana's mapping (as detected, and as sent to Grafana's
// endpoint when forced), and compares the alerts. It reports whether it
// compared: not a body that is not JSON, nor one with a label or
// annotation holding an object or an array (for P165's reasons:
// checkFastPathIsMapping). With the group's fields before its alerts, as
// Grafana writes them, every alert intake reads is Grafana's. With the
// keys sorted (alerts first) the stream reads each item by its own
// members before it sees the webhook's: an item without Grafana's own
// members is read as Alertmanager's or as a Prometheus alert, and such a
// body is not the mapping's. A batch (an orgId and nothing else of a
// webhook) is, detected, no Grafana webhook for the mapping either.
func checkGrafanaFastPathIsMapping(body []byte, g gen.GrafanaGroup) (bool, error) {
	if !json.Valid(body) || jsonLabelValue(body) {
		return false, nil
	}
	for _, f := range []intake.Format{intake.FormatAuto, intake.FormatAlertmanager} {
		named := f == intake.FormatAlertmanager
		got, err := intake.MappedGrafanaWebhook(body, named)
		if g.Batch && !named {
			if err == nil {
				return true, fmt.Errorf("%q: a batch of alerts, read by the mapping as a Grafana webhook", body)
			}
			continue
		}
		want, other, rerr := fastPathAlerts(body, f, "grafana")
		switch {
		case rerr != nil:
			return false, rerr
		case other != "" && g.Before:
			return true, fmt.Errorf("format %q: %q: the fast path reads an alert of %s, not Grafana's", f, body, other)
		case other != "":
			return false, nil
		}
		if cerr := sameAlerts(f, body, want, got, err); cerr != nil {
			return true, cerr
		}
	}
	return true, nil
}

// realGrafanaWebhooks are the captured Grafana webhooks of the repository:
// every JSON file with an alerts array and an
// orgId or version "1" (Grafana's legacy notifications have no alerts
// array: grafana.yaml's other version reads them).
func realGrafanaWebhooks() ([][]byte, error) {
	var out [][]byte
	for _, pat := range []string{"../../intake/testdata/senders/grafana/*.json"} {
		files, err := filepath.Glob(pat)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var w struct {
				Alerts  []json.RawMessage `json:"alerts"`
				OrgID   json.RawMessage   `json:"orgId"`
				Version any               `json:"version"`
			}
			if json.Unmarshal(b, &w) != nil || w.Alerts == nil || (w.OrgID == nil && w.Version != "1") {
				continue
			}
			out = append(out, b)
		}
	}
	if len(out) < 3 {
		return nil, fmt.Errorf("found %d captured Grafana webhooks, want at least 3", len(out))
	}
	return out, nil
}

// mappedGrafanaProperties is P171.
func mappedGrafanaProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P171_grafana_fast_path_equals_its_mapping",
			"Grafana's current webhook is read by the hand-written fast path only while it reads what Grafana's mapping (intake/sender/mappings/grafana.yaml, its webhook version) reads: for every Grafana webhook — generated items of Alertmanager's and Grafana's own members of every value kind, escape and white space, the group's fields before or after its alerts, the format detected or forced, and every captured Grafana webhook — the alerts intake reads are exactly those the mapping reads (intake.MappedGrafanaWebhook), in order, every field equal but the position; with the group's fields before its alerts, as Grafana writes them, every alert intake reads is Grafana's.",
			"GrafanaWebhookGen", gen.GrafanaWebhookGen(), func(w gen.GrafanaWebhook) error {
				_, err := checkGrafanaFastPathIsMapping([]byte(w.Body()), w.Kind())
				return err
			},
			pbt.Found("an orgId and alerts with no other member of a webhook: a batch of alerts of any shape to intake (the item without labels read by its own shape), a Grafana webhook to the mapping's first draft (fixed: the mapping recognises a webhook by its own members, as alertmanager.yaml does)",
				gen.GrafanaWebhook{Items: gen.WebhookItems{First: gen.WebhookItem{Core: []gen.ItemValue{}, Extra: []gen.ItemField{}},
					More: []gen.WebhookItem{{Core: []gen.ItemValue{{Entries: []gen.ItemEntry{}}}, Drop: 6, Extra: []gen.ItemField{}}}},
					Own: []gen.GrafanaItem{}, Group: 9}),
			pbt.PinFunc("every captured Grafana webhook", func() error {
				bodies, err := realGrafanaWebhooks()
				if err != nil {
					return err
				}
				for _, b := range bodies {
					compared, err := checkGrafanaFastPathIsMapping(b, gen.GrafanaGroup{Before: true})
					if err != nil {
						return err
					}
					if !compared {
						return fmt.Errorf("a captured Grafana webhook was not compared: %.200s", b)
					}
					got, _ := intake.MappedGrafanaWebhook(b, false)
					if len(got) == 0 {
						return fmt.Errorf("the mapping reads no alert of a captured Grafana webhook: %.200s", b)
					}
				}
				return nil
			}),
			pbt.Classify(func(w gen.GrafanaWebhook) []string {
				body := []byte(w.Body())
				compared, _ := checkGrafanaFastPathIsMapping(body, w.Kind())
				if !compared {
					return []string{"not compared (broken JSON, a label holding JSON, keys sorted and an item not Grafana's)"}
				}
				labels := []string{"compared, none read"}
				if got, _ := intake.MappedGrafanaWebhook(body, true); len(got) > 0 {
					labels[0] = "compared, alerts read"
				}
				var own, plain bool
				for i := range w.Items.Items() {
					if w.OwnFields(i) {
						own = true
					} else {
						plain = true
					}
				}
				if own {
					labels = append(labels, "compared, an item with Grafana's own members")
				}
				if plain {
					labels = append(labels, "compared, an item of Alertmanager's members only")
				}
				if !w.Kind().Before {
					labels = append(labels, "compared, keys sorted")
				}
				return labels
			}),
			pbt.Cover("compared, alerts read", 30),
			pbt.Cover("compared, none read", 5),
			pbt.Cover("compared, an item with Grafana's own members", 20),
			pbt.Cover("compared, an item of Alertmanager's members only", 20),
			pbt.Cover("compared, keys sorted", 1),
		),
	}
}

// fastPathAlerts reads body by intake with the format f and returns the
// alerts it reads, without their position: rejections and the notice of
// alerts the sender left out (truncatedAlerts, intake's report on the
// webhook, no alert of it) are none. other is the sender of the first
// alert that is not sender's ("" when all are).
func fastPathAlerts(body []byte, f intake.Format, sender string) (want []openrecall.Alert, other string, err error) {
	recs, err := intake.ParseBytes(body, intake.Options{Format: f})
	if err != nil {
		return nil, "", fmt.Errorf("read %q: %v", body, err)
	}
	for _, r := range recs {
		if r.Err != nil || r.Alert.Dropped > 0 {
			continue
		}
		if r.Alert.Sender != sender {
			return nil, r.Alert.Sender, nil
		}
		a := r.Alert
		a.Position = openrecall.Position{}
		want = append(want, a)
	}
	return want, "", nil
}

// sameAlerts compares the alerts the fast path read (want) with those the
// mapping read (got, or its error merr): equal, or none read by either.
func sameAlerts(f intake.Format, body []byte, want, got []openrecall.Alert, merr error) error {
	if merr != nil {
		if len(want) > 0 {
			return fmt.Errorf("format %q: %q: the fast path reads %d alerts, the mapping: %v", f, body, len(want), merr)
		}
		return nil
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("format %q: %q:\n fast path: %+v\n mapping:   %+v", f, body, want, got)
	}
	return nil
}
