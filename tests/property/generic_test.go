package property

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// genericProperties are the laws of the generic reading of a JSON object
// that no sender maps (DESIGN §3, "The generic reading"; issue 35, point
// 4): nothing a person reads is dropped, a name is the title, and a
// recovery or an acknowledgement is a notice while the same shape firing
// is triaged.
func genericProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P143_generic_reading_drops_no_readable_string",
			"The generic reading never drops what a person reads (DESIGN §3): for a JSON object of a sender openrecall does not map — filler members at the top level and in nested objects holding words, numbers and booleans, with or without a name of its check, a message, an id and a time — read as one JSON line, one alert comes back and every string leaf that is not an id or a time is in its title or its text.",
			"GenericObjectGen", gen.GenericObjectGen(), checkGenericKeepsStrings,
			pbt.Classify(func(o gen.GenericObject) []string {
				labels := []string{fmt.Sprintf("%d readable strings", min(len(o.ReadableLeaves()), 4))}
				for _, m := range o.Members {
					if len(m.Nest) > 0 {
						return append(labels, "a nested object")
					}
				}
				return labels
			}),
			pbt.Cover("a nested object", 30), pbt.Cover("4 readable strings", 20),
		),
		pbt.ForAll("P144_generic_title_is_the_name",
			"A name is the title (DESIGN §3): a JSON object of a sender openrecall does not map that names its check once — check_name, monitor_friendly_name, alertName, ruleName, monitor_name, a top-level name, or the name, display name or title of a monitor, service, incident, check or alert object — among filler members, a message (description, message, output, …), an id and a time, is read with that name as its title: never its description or message, never a key=value rendering of its fields.",
			"GenericNamedGen", gen.GenericNamedGen(), checkGenericNameTitle,
			pbt.PinFunc("every place a name may be, with a description beside it", func() error {
				for i := range gen.GenericNameKeys() {
					o := gen.GenericObject{Name: i + 1, Message: 1,
						Members: []gen.GenericMember{{Key: 1, Word: 2}, {Key: 3, Nest: []gen.GenericLeafMember{{Key: 4, Word: 5}}}}}
					if err := checkGenericNameTitle(o); err != nil {
						return err
					}
				}
				return nil
			}),
			pbt.Classify(func(o gen.GenericObject) []string {
				o = o.Named()
				k := gen.GenericNameKeys()[(o.Name-1)%len(gen.GenericNameKeys())]
				labels := []string{}
				if k[0] != "" {
					labels = append(labels, "a nested name")
				}
				if o.Message > 0 {
					labels = append(labels, "a message beside it")
				}
				return labels
			}),
			pbt.Cover("a nested name", 20), pbt.Cover("a message beside it", 40),
		),
		pbt.ForAll("P145_generic_notice_never_triaged",
			"A recovery or an acknowledgement of a sender openrecall does not map is a notice, never triaged (DESIGN §3: a recovery is a notice, not a firing): a JSON object whose status-like key — status, state, current_state, event, eventType, alert_type_friendly_name, notification_type, new_status, a key ending in status, at the top or nested (incident.status, check_result.state, data.attributes.status) — holds a recovery or acknowledgement value (resolved, OK, UP, Recovered, CLEAR, closed, Available, ended, RECOVERY, DOWN -> UP, ALERT_NOTIFICATION_CLEAR, check.up, normal, operational, acknowledged, ack), or whose title is in a recovery form (RESOLVED:, OK:, X DOWN -> UP, [RECOVERED], recovered from, Health Rule Violation Ended, is back up, CRITICAL -> OK, Recovery:), reads as resolved or acknowledged, so the workflow records it and never triages it; liveness: the same shape firing (firing, CRITICAL, DOWN, Not Available, UP -> DOWN, ALERT_NOTIFICATION_TRIGGER, FIRING:, Alert for device …, Started) reads as firing and is triaged.",
			"GenericNoticeGen", gen.GenericNoticeGen(), checkGenericNotice,
			pbt.Found("the product's own object (id, text, timestamp, title) titled \"RESOLVED: checkout\", with no status of its own, was read as firing (fixed: a recovery form of its title makes it the notice)",
				gen.GenericNotice{Object: gen.GenericObject{Members: []gen.GenericMember{}, Message: 8, ID: 1, Time: 1}, Title: true}),
			pbt.PinFunc("every state value and title form, notice and twin", func() error {
				for i := range gen.GenericStateValues() {
					for _, firing := range []bool{false, true} {
						n := gen.GenericNotice{Key: i, Value: i, Firing: firing}
						if err := checkGenericNotice(n); err != nil {
							return err
						}
					}
				}
				for i := range gen.GenericTitleForms() {
					for _, firing := range []bool{false, true} {
						n := gen.GenericNotice{Object: gen.GenericObject{Message: 2, Members: []gen.GenericMember{{Key: 2, Word: 3}}}, Title: true, Form: i, Firing: firing}
						if err := checkGenericNotice(n); err != nil {
							return err
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(n gen.GenericNotice) []string {
				labels := []string{}
				if n.Firing {
					labels = append(labels, "the firing twin")
				} else {
					labels = append(labels, "a notice")
				}
				if n.Title {
					labels = append(labels, "a title form")
				} else if strings.Contains(gen.GenericStateKeys()[n.Key%len(gen.GenericStateKeys())], ".") {
					labels = append(labels, "a nested state")
				}
				return labels
			}),
			pbt.Cover("the firing twin", 30), pbt.Cover("a notice", 30), pbt.Cover("a title form", 30), pbt.Cover("a nested state", 10),
		),
	}
}

// readGeneric reads one generated object as a JSON Lines line and returns
// its one alert.
func readGeneric(line []byte) (openrecall.Alert, error) {
	recs, err := intake.ParseBytes(append(line, '\n'), intake.Options{})
	if err != nil {
		return openrecall.Alert{}, err
	}
	if len(recs) != 1 {
		return openrecall.Alert{}, fmt.Errorf("%s: %d records, want 1", line, len(recs))
	}
	if recs[0].Err != nil {
		return openrecall.Alert{}, fmt.Errorf("%s: rejected: %v", line, recs[0].Err)
	}
	return recs[0].Alert, nil
}

// checkGenericKeepsStrings checks P143.
func checkGenericKeepsStrings(o gen.GenericObject) error {
	a, err := readGeneric(o.JSON())
	if err != nil {
		return err
	}
	for path, s := range o.ReadableLeaves() {
		if !strings.Contains(a.Title, s) && !strings.Contains(a.Text, s) {
			return fmt.Errorf("%s: %s = %q is in neither the title %q nor the text %q", o.JSON(), path, s, a.Title, a.Text)
		}
	}
	return nil
}

// checkGenericNameTitle checks P144 on the object, named (gen.Named).
func checkGenericNameTitle(o gen.GenericObject) error {
	o = o.Named()
	a, err := readGeneric(o.JSON())
	if err != nil {
		return err
	}
	if a.Title != o.NameValue() {
		return fmt.Errorf("%s: title %q, want the check's name %q", o.JSON(), a.Title, o.NameValue())
	}
	return nil
}

// checkGenericNotice checks P145: the notice reads as its status, which
// openrecall.Triaged — the workflow's only test before it triages (P30) —
// refuses; its firing twin reads as firing and is triaged.
func checkGenericNotice(n gen.GenericNotice) error {
	a, err := readGeneric(n.JSON())
	if err != nil {
		return err
	}
	want := n.Want()
	if a.Status != want {
		return fmt.Errorf("%s: status %q, want %q", n.JSON(), a.Status, want)
	}
	if openrecall.Triaged(a.Status) == !n.Firing {
		return fmt.Errorf("%s: status %q triaged %v, want %v", n.JSON(), a.Status, openrecall.Triaged(a.Status), n.Firing)
	}
	return nil
}
