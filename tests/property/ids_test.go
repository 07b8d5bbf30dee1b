package property

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// idProperties are the laws of alert ids (DESIGN §3; issue 33): an id
// drives duplicate detection, so two alerts that differ must never share
// one unless it is the sender's own, and a redelivery must always keep it.
func idProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P120_missing_sender_id_never_shared",
			"An alert's id is the sender's own only when read from fields its payload has; else it is the payload's hash, and two payloads that differ anywhere never share it: for every adapter sender's fixture with the fields its id came from removed (origin[\"id\"], each '+'-joined path, until the alert has no sender id), no id names a removed field, and the payload with one value changed (a string, number, boolean, null, object or array) or removed reads as alerts whose ids all differ from the first's.",
			"IDChangeGen", gen.IDChangeGen(), func(c gen.IDChange) error {
				_, err := checkIDChange(c)
				return err
			},
			pbt.PinFunc("every top-level member of every adapter fixture without its id, changed and removed", func() error {
				for s, dir := range gen.AdapterFixtureDirs() {
					for f := range gen.FixturesOf(dir) {
						ref := gen.FixtureRef{Pool: gen.AdapterSenders, Sender: s, Fixture: f}
						base, _, err := withoutID(ref.Get())
						if err != nil {
							return err
						}
						for i, pl := range base.Places() {
							if len(pl.Steps) > 1 {
								continue
							}
							for _, remove := range []bool{false, true} {
								if _, err := checkIDChange(gen.IDChange{Fixture: ref, Leaf: i, Remove: remove}); err != nil {
									return err
								}
							}
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(c gen.IDChange) []string {
				class, _ := checkIDChange(c)
				return []string{class}
			}),
			pbt.Cover("ids differ", 50),
		),
		pbt.ForAll("P121_redelivery_keeps_id",
			"A redelivery of the same alert always gets the same id: every adapter sender's fixture, without its id fields (so its id is the payload's hash) and with one value changed or removed, written again with its object members reversed, sorted or shuffled and compact, indented or spaced, reads as alerts with the same ids as the payload written compact.",
			"IDChangeGen", gen.IDChangeGen(), func(c gen.IDChange) error {
				return checkIDRedelivery(c)
			},
			pbt.Classify(func(c gen.IDChange) []string {
				return []string{"order " + gen.Orders()[c.Order], gen.Layouts()[c.Layout]}
			}),
			pbt.Cover("order shuffled", 15),
		),
		pbt.ForAll("P122_alertmanager_id_is_labels_and_start",
			"An Alertmanager, Grafana or Prometheus alert's id is openrecall's own hash of its label set plus startsAt: two alerts (each as a webhook of Alertmanager or Grafana or as a Prometheus postable alert, firing or resolved, with any annotations and endsAt) share an id exactly when their label sets and startsAt (to the second) are equal, whatever fingerprint either sends — none, another alert's, a number, an object — and an alert's fingerprint sent as a string is kept as sent.",
			"AMPairGen", gen.AMPairGen(), func(p gen.AMPair) error {
				_, err := checkAMPair(p)
				return err
			},
			pbt.Classify(func(p gen.AMPair) []string {
				class, _ := checkAMPair(p)
				return []string{class}
			}),
			pbt.Cover("same alert", 10), pbt.Cover("another alert", 30), pbt.Cover("another alert's fingerprint", 2),
		),
	}
}

// readBody reads a payload as a file named as the fixture.
func readBody(f gen.SenderFixture, body []byte) []intake.Record {
	recs, err := intake.ParseBytes(body, intake.Options{Source: f.Name})
	if err != nil {
		panic(err)
	}
	return recs
}

// readIDAlerts reads a payload and reports whether it read as alerts only.
func readIDAlerts(f gen.SenderFixture, body []byte) ([]intake.Record, bool) {
	recs := readBody(f, body)
	for _, r := range recs {
		if r.Err != nil {
			return recs, false
		}
	}
	return recs, len(recs) > 0
}

// withoutID returns the fixture's tree without the fields its first alert's
// id came from, removed round after round until that alert has no sender
// id (origin["id"] empty), and whether it got there (an id from fields no
// path names, such as "rule.id+alert.id+date", cannot be removed). An id
// that names a removed field is an error: it was made of a field the
// payload no longer has, a constant.
func withoutID(f gen.SenderFixture) (gen.JSONNode, bool, error) {
	tree := f.Tree
	removed := map[string]bool{}
	for range 8 {
		recs, ok := readIDAlerts(f, tree.Write(0, 0, 0))
		if !ok {
			return tree, false, nil
		}
		a := recs[0].Alert
		origin := a.Origin["id"]
		if origin == "" {
			return tree, true, nil
		}
		progress := false
		for _, path := range strings.Split(origin, "+") {
			steps, found := findAnywhere(tree, path)
			if !found && removed[path] {
				return tree, false, fmt.Errorf("%s/%s without %s: id %q still names it (origin %q)", f.Dir, f.Name, strings.Join(sortedKeys(removed), ", "), a.ID, origin)
			}
			if found {
				tree, removed[path], progress = tree.Remove(steps), true, true
			}
		}
		if !progress {
			return tree, false, nil
		}
	}
	return tree, false, nil
}

// findAnywhere returns the steps to the value a dotted path names from the
// root or, failing that, from the first object inside the tree where it
// does (an adapter reads its fields from inside an envelope or wrapper),
// and whether there is one.
func findAnywhere(tree gen.JSONNode, path string) ([]int, bool) {
	if steps, ok := tree.Find(path); ok && len(steps) > 0 {
		return steps, true
	}
	for _, pl := range tree.Places() {
		if pl.Node.Kind != '{' {
			continue
		}
		if rest, ok := pl.Node.Find(path); ok && len(rest) > 0 {
			return append(append([]int(nil), pl.Steps...), rest...), true
		}
	}
	return nil, false
}

// sameJSON reports whether two payloads decode to equal values.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// checkIDChange is P120 for one case; it returns the case's class.
func checkIDChange(c gen.IDChange) (string, error) {
	f := c.Fixture.Get()
	base, ok, err := withoutID(f)
	if err != nil {
		return "an id of a removed field", err
	}
	if !ok {
		return "id not removable", nil
	}
	changed, path := c.Changed(base)
	b0, b1 := base.Write(0, 0, 0), changed.Write(0, 0, 0)
	if sameJSON(b0, b1) {
		return "same value", nil
	}
	r0, ok0 := readIDAlerts(f, b0)
	r1, ok1 := readIDAlerts(f, b1)
	if !ok0 || !ok1 {
		return "rejected", nil
	}
	for _, x := range r0 {
		for _, y := range r1 {
			if x.Alert.ID == y.Alert.ID {
				return "shared", fmt.Errorf("%s/%s without its id fields, and again with %s %s: both read as id %q (origins %q, %q)",
					f.Dir, f.Name, path, map[bool]string{true: "removed", false: "changed"}[c.Remove], x.Alert.ID, x.Alert.Origin["id"], y.Alert.Origin["id"])
			}
		}
	}
	return "ids differ", nil
}

// checkIDRedelivery is P121 for one case.
func checkIDRedelivery(c gen.IDChange) error {
	f := c.Fixture.Get()
	base, ok, err := withoutID(f)
	if err != nil || !ok {
		return err
	}
	changed, _ := c.Changed(base)
	for _, tree := range []gen.JSONNode{base, changed} {
		r0 := readBody(f, tree.Write(0, 0, 0))
		r1 := readBody(f, tree.Write(c.Order, c.Seed, c.Layout))
		if len(r0) != len(r1) {
			return fmt.Errorf("%s/%s read as %d records, written again as %d", f.Dir, f.Name, len(r0), len(r1))
		}
		for i := range r0 {
			if r0[i].Alert.ID != r1[i].Alert.ID {
				return fmt.Errorf("%s/%s without its id fields: id %q, written again (%s, %s) %q", f.Dir, f.Name, r0[i].Alert.ID,
					gen.Orders()[c.Order], gen.Layouts()[c.Layout], r1[i].Alert.ID)
			}
		}
	}
	return nil
}

// checkAMPair is P122 for one pair; it returns the case's class.
func checkAMPair(p gen.AMPair) (string, error) {
	read := func(a gen.AMAlert) (intake.Record, error) {
		recs, err := intake.ParseBytes(a.Body(), intake.Options{})
		if err != nil {
			return intake.Record{}, err
		}
		if len(recs) != 1 || recs[0].Err != nil {
			return intake.Record{}, fmt.Errorf("%s read as %s", a.Body(), recordsText(recs))
		}
		return recs[0], nil
	}
	ra, err := read(p.A)
	if err != nil {
		return "rejected", err
	}
	second := p.Second()
	rb, err := read(second)
	if err != nil {
		return "rejected", err
	}
	for _, x := range []struct {
		a   gen.AMAlert
		rec intake.Record
	}{{p.A, ra}, {second, rb}} {
		shape := gen.AMShapes()[x.a.Shape%len(gen.AMShapes())]
		fp := gen.AMFingerprints()[x.a.Fingerprint%len(gen.AMFingerprints())]
		var want string
		if shape != "prometheus" && strings.HasPrefix(fp, `"`) {
			_ = json.Unmarshal([]byte(fp), &want)
		}
		if got := x.rec.Alert.SentFingerprint; got != want && (want != "" || shape != "prometheus") {
			if shape == "prometheus" || fp != "123" || got != "123" {
				return "fingerprint lost", fmt.Errorf("%s: sent fingerprint %q kept as %q", x.a.Body(), fp, got)
			}
		}
	}
	same := reflect.DeepEqual(p.A.LabelSet(), second.LabelSet()) && p.A.Start%len(gen.AMStarts()) == second.Start%len(gen.AMStarts())
	class := "another alert"
	if same {
		class = "same alert"
	} else if ra.Alert.SentFingerprint != "" && ra.Alert.SentFingerprint == rb.Alert.SentFingerprint {
		class = "another alert's fingerprint"
	}
	if shared := ra.Alert.ID == rb.Alert.ID; shared != same {
		return class, fmt.Errorf("labels %v start %d and labels %v start %d: ids %q and %q (fingerprints %q, %q)",
			p.A.LabelSet(), p.A.Start, second.LabelSet(), second.Start, ra.Alert.ID, rb.Alert.ID, ra.Alert.SentFingerprint, rb.Alert.SentFingerprint)
	}
	return class, nil
}
