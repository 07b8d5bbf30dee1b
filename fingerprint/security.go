package fingerprint

import (
	"slices"
	"strings"

	"github.com/openrecall/openrecall"
)

// Sources of the attack_pattern evidence that does not come from the rules
// file (DESIGN §4).
const (
	// SourceATTACK is an ATT&CK technique or tactic found in the alert.
	SourceATTACK = "att&ck"
	// SourceSecuritySender is an alert of a security detection sender.
	SourceSecuritySender = "security sender"
)

// SecurityDetection is the attack_pattern of an alert from a security
// detection sender that names no ATT&CK tactic and no attack word: it is
// an attack all the same (DESIGN §4).
const SecurityDetection = "security_detection"

// attackOf returns the attack_pattern that DESIGN §4's first two kinds of
// evidence give an alert, with the rule that gave it: (1) an ATT&CK
// technique or tactic anywhere in the alert (title, text, rule, any label
// or annotation value; a label whose name says tactic is read as a tactic
// name: "Privilege Escalation") mapped to its tactic, the first in DESIGN
// §4's order; (2) a security detection sender, at least
// security_detection. words is the value the rules file's patterns gave
// (the third kind): it stands when (1) finds nothing, and it is kept for a
// security sender's alert when it names an attack. The result never
// depends on the order of labels.
func (e *Extractor) attackOf(a openrecall.Alert, words string) (value, rule string) {
	s := e.attack.NewScan()
	s.Text(a.Title)
	s.Text(a.Text)
	s.Text(a.Rule)
	scanMap := func(m map[string]string) {
		for k, v := range m {
			if strings.Contains(strings.ToLower(k), "tactic") {
				s.TacticName(v)
			} else {
				s.Text(v)
			}
		}
	}
	scanMap(a.Labels)
	scanMap(a.Annotations)
	if p := s.Pattern(); p != "" {
		techniques := s.Techniques()
		rule = "att&ck"
		if len(techniques) > 0 {
			rule += " " + strings.Join(techniques, ",")
		}
		return p, rule
	}
	switch {
	case words != "":
		return words, ""
	case a.Security:
		return SecurityDetection, "security sender " + a.Sender
	}
	return "", ""
}

// applyAttack sets the fingerprint's attack_pattern from attackOf and,
// with evidence, records where it came from.
func (e *Extractor) applyAttack(a openrecall.Alert, fp *openrecall.Fingerprint, ev *[]Evidence) {
	value, rule := e.attackOf(a, fp.AttackPattern)
	if rule == "" || value == fp.AttackPattern {
		return
	}
	*fp, _ = fp.With(openrecall.FieldAttackPattern, value)
	if ev == nil {
		return
	}
	source := SourceATTACK
	if strings.HasPrefix(rule, "security sender") {
		source = SourceSecuritySender
	}
	*ev = slices.DeleteFunc(*ev, func(x Evidence) bool { return x.Field == openrecall.FieldAttackPattern })
	*ev = append(*ev, Evidence{Field: openrecall.FieldAttackPattern, Value: value, Rule: rule, Source: source})
	slices.SortStableFunc(*ev, func(x, y Evidence) int {
		return slices.Index(openrecall.FingerprintFields, x.Field) - slices.Index(openrecall.FingerprintFields, y.Field)
	})
}

// detectionField reports whether an Alert DNA field of a security
// detection is read from its title and labels only, never from its text
// (DESIGN §4): the error class, the dependency and the signal shape. A
// detection's text is its evidence — the command line, the process, the
// file, the user — which changes from one firing to the next, and a
// process named postgres in a command line is evidence, not a database
// failure. So the same rule on another host, run by another user or
// process, keeps one Alert DNA.
func detectionField(field string) bool {
	switch field {
	case openrecall.FieldErrorClass, openrecall.FieldDependencyPattern, openrecall.FieldSignalShape:
		return true
	}
	return false
}
