package property

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// intakeProperties are the laws of intake's normalization.
func intakeProperties() []pbt.Property {
	ex := newExtractor()
	severities := map[openrecall.Severity]bool{"critical": true, "high": true, "medium": true, "low": true, "info": true, "unknown": true}
	return []pbt.Property{
		pbt.ForAll("P28_severity_normalization_total_idempotent",
			"Severity normalization is total and idempotent: every string maps to one of critical, high, medium, low, info (or unknown), normalizing a normalized severity changes nothing, and every documented alias maps to its severity whatever its case, padding or separator (\"SEV-1\", \"P 2\").",
			"SeveritySpellingGen", gen.SeveritySpellingGen(), func(s gen.SeveritySpelling) error {
				in := s.String()
				got := intake.NormalizeSeverity(in)
				if !severities[got] {
					return fmt.Errorf("total: %q normalizes to %q, not a severity", in, got)
				}
				if again := intake.NormalizeSeverity(string(got)); again != got {
					return fmt.Errorf("idempotent: %q gives %q, then %q", in, got, again)
				}
				if want := s.Want(); want != "" && string(got) != want {
					return fmt.Errorf("alias: %q normalizes to %q, want %q", in, got, want)
				}
				return nil
			},
			pbt.Pin("sev-1 split", gen.SeveritySpelling{Spelling: gen.Spelling{Alias: 5, Sep: 2, Case: 1}}),
			pbt.Classify(func(s gen.SeveritySpelling) []string {
				if s.Free {
					return []string{"free text"}
				}
				return []string{"alias"}
			}),
			pbt.Cover("alias", 40), pbt.Cover("free text", 10),
		),
		pbt.ForAll("P29_environment_normalization_total_idempotent",
			"Environment normalization is total and idempotent: every string maps to prod, staging, dev or \"\" (unknown), normalizing a normalized environment changes nothing, and a known environment word between neutral words (\"shop-PROD-eu\") gives its environment.",
			"EnvironmentSpellingGen", gen.EnvironmentSpellingGen(), func(s gen.EnvironmentSpelling) error {
				in := s.String()
				got := intake.NormalizeEnvironment(in)
				switch got {
				case "prod", "staging", "dev", "":
				default:
					return fmt.Errorf("total: %q normalizes to %q, not an environment", in, got)
				}
				if again := intake.NormalizeEnvironment(got); again != got {
					return fmt.Errorf("idempotent: %q gives %q, then %q", in, got, again)
				}
				if want := s.Want(); want != "" && got != want {
					return fmt.Errorf("word: %q normalizes to %q, want %q", in, got, want)
				}
				return nil
			},
			pbt.Pin("preprod after a word", gen.EnvironmentSpelling{Spelling: gen.Spelling{Alias: 7, Pre: 1, Join: 0}}),
			pbt.Classify(func(s gen.EnvironmentSpelling) []string {
				if s.Free {
					return []string{"free text"}
				}
				return []string{"word"}
			}),
			pbt.Cover("word", 40), pbt.Cover("free text", 10),
		),
		pbt.ForAll("P30_resolved_never_triaged",
			"A resolved alert is recorded, never triaged: its result has outcome resolved, no decision, no model step and no cost; and every firing alert of the same queue is triaged.",
			"WorkflowInputGen", gen.WorkflowInputGen(), func(in gen.WorkflowInput) error {
				out, err := runWorkflow(ex, in, in.Workers)
				if err != nil {
					return err
				}
				for _, r := range out.results {
					kind := gen.RecordKinds()[in.AllRecords()[r.Position.Line-1].Kind%len(gen.RecordKinds())]
					resolved := kind == "resolved webhook"
					switch {
					case resolved && r.Outcome != openrecall.ResultResolved:
						return fmt.Errorf("resolved: %s (%s) has outcome %s", r.Position, kind, r.Outcome)
					case resolved && (r.Decision != "" || r.Cost != 0 || r.Analysis != nil):
						return fmt.Errorf("resolved: %s was triaged: decision %q, cost %d", r.Position, r.Decision, r.Cost)
					case r.Alert.Status == openrecall.StatusResolved && r.Outcome == openrecall.ResultTriaged:
						return fmt.Errorf("resolved: %s has status resolved and was triaged", r.Position)
					case r.Outcome == openrecall.ResultResolved && r.Alert.Status != openrecall.StatusResolved:
						return fmt.Errorf("firing: %s (%s) was recorded as resolved", r.Position, kind)
					}
					if r.Outcome == openrecall.ResultResolved {
						for _, s := range r.Steps {
							if s.Model != "" || s.Cost != 0 {
								return fmt.Errorf("resolved: %s has a model step %+v", r.Position, s)
							}
						}
					}
				}
				return nil
			},
			pbt.Found("a webhook whose alerts come before its status (Go sorts map keys): its resolved items were read as firing Prometheus alerts and triaged",
				gen.WorkflowInput{Vouch: 1, Records: []gen.QueueRecord{{Kind: 4}}, Workers: 4}),
			pbt.Found("a resolved item with null labels and a summary, alerts first: rejected as an empty alert",
				gen.WorkflowInput{Vouch: 1, Records: []gen.QueueRecord{{Kind: 4, Alert: gen.RawAlert{Family: 7}}}, Workers: 4}),
			pbt.Expensive(2),
			pbt.Classify(classifyRun),
			pbt.Cover("a resolved record", 10),
		),
		pbt.ForAll("P46_webhook_item_fast_path_equals_general",
			"Reading an alerts[] item by the fast path for the common item shape changes nothing: every record of a webhook (its alert, or its rejection with position and reason) is exactly what the general path, which decodes each item into a map of raw values, gives — whatever the escapes, surrogates, invalid UTF-8, repeated keys, value kinds, broken JSON, white space, group fields before or after the alerts, and forced format.",
			"WebhookItemsGen", gen.WebhookItemsGen(), func(w gen.WebhookItems) error {
				for g := range gen.ItemGroups() {
					body := []byte(w.Body(g))
					for _, f := range gen.ItemFormats() {
						opts := intake.Options{Format: intake.Format(f)}
						got, err := intake.ParseBytes(body, opts)
						want, werr := intake.ParseBytesGeneral(body, opts)
						if err != nil || werr != nil {
							return fmt.Errorf("read %q: %v, general path: %v", body, err, werr)
						}
						if !reflect.DeepEqual(got, want) {
							return fmt.Errorf("read %q (format %q):\n fast path: %s\n general:   %s", body, f, recordsText(got), recordsText(want))
						}
					}
				}
				return nil
			},
			pbt.Classify(func(w gen.WebhookItems) []string {
				var labels []string
				for i := range w.Items() {
					if w.Common(i) {
						labels = append(labels, "common item")
					} else {
						labels = append(labels, "other item")
					}
				}
				recs, _ := intake.ParseBytesGeneral([]byte(w.Body(0)), intake.Options{})
				for _, r := range recs {
					if r.Err == nil {
						labels = append(labels, "an alert read")
					} else {
						labels = append(labels, "a record rejected")
					}
				}
				return labels
			}),
			pbt.Found(`labels " severity " and "sev\u0065rity" (which cleans to the same key) kept whichever map order put last: one webhook read twice gave two alerts (fixed: the key written clean wins, else the first in byte order)`,
				gen.WebhookItems{First: gen.WebhookItem{Core: []gen.ItemValue{{}, {Entries: []gen.ItemEntry{{Key: 8}, {Key: 9, Value: gen.ItemLeaf{Kind: 2}}}}}}}),
			pbt.Cover("common item", 40), pbt.Cover("other item", 20),
			pbt.Cover("an alert read", 30), pbt.Cover("a record rejected", 20),
		),
	}
}

// recordsText prints records for a failure message: each alert in full, or
// the rejection.
func recordsText(recs []intake.Record) string {
	var b strings.Builder
	for _, r := range recs {
		if r.Err != nil {
			fmt.Fprintf(&b, "[rejected %s] ", r.Err)
			continue
		}
		fmt.Fprintf(&b, "[%+v] ", r.Alert)
	}
	return b.String()
}
