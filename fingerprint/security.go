package fingerprint

import (
	"slices"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint/product"
)

// Sources of the attack_pattern evidence that does not come from the rules
// file (DESIGN §4).
const (
	// SourceATTACK is an ATT&CK technique or tactic found in the alert.
	SourceATTACK = "att&ck"
	// SourceSecuritySender is an alert of a security detection sender, of
	// a security product a source-like field names, or shaped as a
	// detection.
	SourceSecuritySender = "security sender"
)

// SecurityDetection is the attack_pattern of an alert from a security
// detection sender that names no ATT&CK tactic and no attack word: it is
// an attack all the same (DESIGN §4).
const SecurityDetection = "security_detection"

// attackOf returns the attack_pattern that DESIGN §4's kinds of evidence
// give an alert, with the rule that gave it: (1) ATT&CK in any string of
// the alert (title, text, rule, every label, annotation and field value)
// mapped to its tactic, the first in DESIGN §4's order — what a detection
// declares (in a field whose key says it holds ATT&CK: attackKey; as a
// Sigma or Falco tag; as an ATT&CK URL) outranking a bare id its text
// mentions; (2) a security detection (why: its sender, a security product
// named in a source-like field, a detection's shape), at least
// security_detection. words is the value the rules file's patterns gave
// (the third kind): it stands when (1) finds nothing, and it is kept for a
// security detection when it names an attack. The result never depends on
// the order of labels.
func (e *Extractor) attackOf(a openrecall.Alert, words, why string) (value, rule string) {
	s := e.attack.NewScan()
	s.Text(a.Title)
	s.Text(a.Text)
	s.Text(a.Rule)
	scanMap := func(m map[string]string) {
		for k, v := range m {
			if attackKey(k) {
				s.Value(v)
			} else {
				s.Text(v)
			}
		}
	}
	scanMap(a.Labels)
	scanMap(a.Annotations)
	scanMap(a.Fields)
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
	case why != "":
		return SecurityDetection, why
	}
	return "", ""
}

// attackKey reports whether a key (a label, an annotation, a flattened
// field path) says its value holds ATT&CK: it names mitre, a tactic, a
// technique or attack (mitre_attack_tactic, tactics, technique_id,
// rule.mitre.id), is ECS's threat or under it (threat.tactic.name), or is
// a tags list or one of its elements (tags, tags.0, rule.tags.3).
func attackKey(k string) bool {
	if containsFold(k, "mitre") || containsFold(k, "tactic") || containsFold(k, "techni") || containsFold(k, "attack") {
		return true
	}
	if hasPrefixFold(k, "threat") && (len(k) == len("threat") || k[len("threat")] == '.') {
		return true
	}
	for k != "" {
		seg := k
		if i := strings.IndexByte(k, '.'); i >= 0 {
			seg, k = k[:i], k[i+1:]
		} else {
			k = ""
		}
		if equalFold(seg, "tags") || equalFold(seg, "tag") {
			return true
		}
	}
	return false
}

// detection says whether an alert that no security sender delivered is a
// security detection all the same, and why (DESIGN §4): a source-like
// field — a label, an annotation or a field whose key says it names the
// tool (product.SourceKey), or the source of the product's own alert
// object — names a security product; or the alert has a detection's
// shape: a Sigma logsource, an ECS threat field, a rule with a level and
// ATT&CK tags.
func (e *Extractor) detection(a openrecall.Alert) (string, bool) {
	if a.Sender == openrecall.SenderOwn && a.Source != "" {
		if p, ok := e.products.Match(a.Source); ok {
			return "security product " + p + " (source)", true
		}
	}
	var level, tags bool
	for _, m := range [...]map[string]string{a.Labels, a.Annotations, a.Fields} {
		for k, v := range m {
			if product.SourceKey(k) {
				if p, ok := e.products.Match(v); ok {
					return "security product " + p + " (" + k + ")", true
				}
			}
			switch {
			case hasPrefixFold(k, "logsource") && (len(k) == len("logsource") || k[len("logsource")] == '.'):
				return "detection shape: a Sigma logsource (" + k + ")", true
			case hasPrefixFold(k, "threat.") && (hasPrefixFold(k, "threat.tactic") || hasPrefixFold(k, "threat.technique") || hasPrefixFold(k, "threat.framework")):
				return "detection shape: an ECS threat field (" + k + ")", true
			case equalFold(k, "rule.level") || equalFold(k, "rule.severity") || equalFold(k, "level"):
				level = true
			}
			if !tags && attackKey(k) && containsFold(v, "attack.") {
				tags = true
			}
		}
	}
	if level && tags {
		return "detection shape: a rule with a level and ATT&CK tags", true
	}
	return "", false
}

// equalFold reports whether s is word (lower case ASCII) in any ASCII case.
func equalFold(s, word string) bool { return len(s) == len(word) && hasPrefixFold(s, word) }

// containsFold reports whether s contains sub (lower case ASCII), in any
// case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if hasPrefixFold(s[i:], sub) {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with prefix (lower case ASCII), in
// any case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// applyAttack sets the fingerprint's attack_pattern from attackOf and,
// with evidence, records where it came from.
func (e *Extractor) applyAttack(a openrecall.Alert, why string, fp *openrecall.Fingerprint, ev *[]Evidence) {
	value, rule := e.attackOf(a, fp.AttackPattern, why)
	if rule == "" || value == fp.AttackPattern {
		return
	}
	*fp, _ = fp.With(openrecall.FieldAttackPattern, value)
	if ev == nil {
		return
	}
	source := SourceATTACK
	if !strings.HasPrefix(rule, "att&ck") {
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
// or field values (DESIGN §4): the error class, the dependency, the signal
// shape and the attack pattern. A detection's text is its evidence — the
// command line, the process, the file, the user — which changes from one
// firing to the next: a process named postgres in a command line is
// evidence, not a database failure, and a file-integrity event on
// /etc/passwd is the same rule as one on /etc/hosts, not a path traversal.
// So the same rule on another host, run by another user or process, on
// another file, keeps one Alert DNA. The attack pattern loses nothing a
// detection needs: it is an attack whatever its text says (at least
// security_detection, from attackOf), and its ATT&CK references are read
// from every field by attackOf.
func detectionField(field string) bool {
	switch field {
	case openrecall.FieldErrorClass, openrecall.FieldDependencyPattern, openrecall.FieldSignalShape, openrecall.FieldAttackPattern:
		return true
	}
	return false
}
