package property

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// P165 (issue #35, DESIGN §3 "Senders as data"): Alertmanager, the busiest
// sender, keeps a hand-written fast path (intake/item.go, streamed item by
// item) only while a property holds it equal to its mapping
// (intake/sender/mappings/alertmanager.yaml).

// amGroups are the ItemGroups that are Alertmanager webhooks whose status
// comes before their alerts, as Alertmanager writes it: the group's own
// fields, and a status alone. Not the group whose fields follow its alerts
// (ItemGroups()[1]): an item without a status of its own there is read
// firing by the stream, which has not yet seen the webhook's status, and
// by the webhook's status by the mapping, which reads the whole document
// (found by this property; Alertmanager's items always carry their own).
var amGroups = []int{0, 3}

// checkFastPathIsMapping reads body by intake (the fast path, with the
// format detected and forced) and by the alertmanager mapping, and
// compares the alerts. It reports whether it compared: a body that is not
// JSON (the stream rejects one item; the mapping reads a whole document)
// or whose items intake reads as Grafana's is not the mapping's.
//
// Nor is a webhook with a label or annotation that holds an object or an
// array: intake keeps that value's JSON text as sent (its escapes, its
// members' order), the mapping writes it anew (Value.Compact: keys sorted,
// HTML characters escaped) — Alertmanager's labels and annotations are
// strings; the difference is stated in docs/properties.md.
func checkFastPathIsMapping(body []byte) (bool, error) {
	if !json.Valid(body) || jsonLabelValue(body) {
		return false, nil
	}
	got, err := intake.MappedWebhook(body)
	for _, f := range []intake.Format{intake.FormatAuto, intake.FormatAlertmanager} {
		want, other, rerr := fastPathAlerts(body, f, "alertmanager")
		switch {
		case rerr != nil:
			return false, rerr
		case other != "":
			return false, nil // a Grafana item: Grafana's, not this mapping's
		}
		if cerr := sameAlerts(f, body, want, got, err); cerr != nil {
			return true, cerr
		}
	}
	return true, nil
}

// jsonLabelValue reports whether an item of the webhook has a label or an
// annotation whose value is an object or an array.
func jsonLabelValue(body []byte) bool {
	var w struct {
		Alerts []any `json:"alerts"`
	}
	if json.Unmarshal(body, &w) != nil {
		return false
	}
	for _, it := range w.Alerts {
		item, _ := it.(map[string]any)
		for _, k := range []string{"labels", "annotations"} {
			m, _ := item[k].(map[string]any)
			for _, v := range m {
				switch v.(type) {
				case map[string]any, []any:
					return true
				}
			}
		}
	}
	return false
}

// realWebhooks are the captured Alertmanager webhooks of the repository.
func realWebhooks() ([][]byte, error) {
	var out [][]byte
	for _, pat := range []string{"../../intake/testdata/senders/alertmanager/*.json", "../../intake/testdata/alertmanager_payload*.json"} {
		files, err := filepath.Glob(pat)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if filepath.Base(f) == "golden.json" || filepath.Base(f) == "identity.json" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	if len(out) < 5 {
		return nil, fmt.Errorf("found %d captured Alertmanager webhooks, want at least 5", len(out))
	}
	return out, nil
}

// mappedWebhookProperties is P165.
func mappedWebhookProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P165_alertmanager_fast_path_equals_its_mapping",
			"Alertmanager keeps its hand-written fast path only while it reads what its mapping (intake/sender/mappings/alertmanager.yaml) reads: for every Alertmanager webhook — generated items of every value kind, escape and white space, the group's fields before or after its alerts, the format detected or forced, and every captured webhook — the alerts intake reads are exactly those the mapping reads (intake.MappedWebhook), in order, every field equal but the position.",
			"WebhookItemsGen", gen.WebhookItemsGen(), func(w gen.WebhookItems) error {
				for _, g := range amGroups {
					if _, err := checkFastPathIsMapping([]byte(w.Body(g))); err != nil {
						return err
					}
				}
				return nil
			},
			pbt.PinFunc("every captured Alertmanager webhook", func() error {
				bodies, err := realWebhooks()
				if err != nil {
					return err
				}
				for _, b := range bodies {
					compared, err := checkFastPathIsMapping(b)
					if err != nil {
						return err
					}
					if !compared {
						return fmt.Errorf("a captured webhook was not compared: %.200s", b)
					}
				}
				return nil
			}),
			pbt.Classify(func(w gen.WebhookItems) []string {
				body := []byte(w.Body(0))
				compared, _ := checkFastPathIsMapping(body)
				if !compared {
					return []string{"not compared (broken JSON, a Grafana item, a label holding JSON)"}
				}
				got, _ := intake.MappedWebhook(body)
				if len(got) > 0 {
					return []string{"compared, alerts read"}
				}
				return []string{"compared, none read"}
			}),
			pbt.Cover("compared, alerts read", 30),
			pbt.Cover("compared, none read", 5),
		),
	}
}
