package gen

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall/fingerprint/attack"
	"github.com/openrecall/openrecall/fingerprint/product"
)

// ------------------------------------------- ATT&CK in every encoding (P104)

// TechniqueEncodings name the ways a SIEM or forwarder writes a technique
// (DESIGN §4), by index.
func TechniqueEncodings() []string {
	return []string{"id", "id, underscore", "id, lower case underscore", "id, slash", "sigma tag", "sigma tag, underscore", "URL", "name"}
}

// TacticEncodings name the ways a SIEM or forwarder writes a tactic, by
// index.
func TacticEncodings() []string {
	return []string{"tactic id", "sigma tag of its id", "URL", "name", "CamelCase", "hyphens", "underscores", "upper case", "sigma tactic tag"}
}

// Containers name where an encoded reference is placed: an Alertmanager
// label or annotation, a nested object or an array element of a SIEM's own
// JSON alert, or an item of a list joined in one Alertmanager label.
func Containers() []string {
	return []string{"label", "annotation", "nested object", "array element", "joined list"}
}

// containerKeys are, per container, the keys (a path for a nested object)
// that say they hold ATT&CK, as real senders and forwarders name them.
var containerKeys = [][]string{
	{"mitre_attack_tactic", "tactics", "mitre_technique", "technique", "threat.technique.id", "mitre"},
	{"mitre_attack", "attack_technique", "tactic", "mitre_tactics"},
	{"threat.technique.id", "rule.mitre.id", "threat.tactic.name", "detection.mitre_attack.technique", "rule.mitre.technique"},
	{"tags", "tactics", "techniques", "rule.tags"},
	{"tags", "mitre_attack_tactic", "mitre", "techniques"},
}

// listJoins are the separators of a joined list; the last, a space, joins
// only items of one word that are no technique's name.
var listJoins = []string{", ", "; ", " | ", "\n", " "}

// EncodedRef is one ATT&CK item of AttackItems written in one encoding and
// placed in one container under one of its keys, on a neutral alert of one
// severity, with the memory that vouches for it.
type EncodedRef struct {
	Item, Encoding, Container, Key, Join, Title, Severity int
	Memory                                                BenignMemory
}

// encodingDraws is the range of EncodedRef.Encoding: a multiple of both
// encodings' counts.
const encodingDraws = 72

// Written returns the reference as written and its encoding's name.
func (r EncodedRef) Written() (string, string) {
	it := AttackItems()[r.Item%len(AttackItems())]
	if it.Tactic() {
		enc := TacticEncodings()[r.Encoding%len(TacticEncodings())]
		words := strings.Split(it.Shortname, "-")
		switch enc {
		case "tactic id":
			return it.ID, enc
		case "sigma tag of its id":
			return "attack." + strings.ToLower(it.ID), enc
		case "URL":
			return "https://attack.mitre.org/tactics/" + it.ID + "/", enc
		case "name":
			return it.Name, enc
		case "CamelCase":
			for i, w := range words {
				words[i] = strings.ToUpper(w[:1]) + w[1:]
			}
			return strings.Join(words, ""), enc
		case "hyphens":
			return it.Shortname, enc
		case "underscores":
			return strings.Join(words, "_"), enc
		case "upper case":
			return strings.ToUpper(it.Name), enc
		}
		return "attack." + strings.Join(words, "_"), enc
	}
	enc := TechniqueEncodings()[r.Encoding%len(TechniqueEncodings())]
	base, sub, _ := strings.Cut(it.ID, ".")
	with := func(sep string) string {
		if sub == "" {
			return base
		}
		return base + sep + sub
	}
	switch enc {
	case "id":
		return it.ID, enc
	case "id, underscore":
		return with("_"), enc
	case "id, lower case underscore":
		return strings.ToLower(with("_")), enc
	case "id, slash":
		return with("/"), enc
	case "sigma tag":
		return "attack." + strings.ToLower(it.ID), enc
	case "sigma tag, underscore":
		return "attack." + strings.ToLower(with("_")), enc
	case "URL":
		return "https://attack.mitre.org/techniques/" + with("/") + "/", enc
	}
	if name, ok := TechniqueName(it.ID); ok {
		return name, enc
	}
	return it.ID, "id" // no name names it alone
}

// TechniqueName returns the name a SIEM writes for a technique that gives
// it back through the table: its own name when no technique of other
// tactics shares it, else "Parent: Sub" for a sub-technique; false when
// neither does (a revoked technique whose name another of other tactics
// took).
func TechniqueName(id string) (string, bool) { return techniqueNames()[id], techniqueNames()[id] != "" }

var techniqueNames = sync.OnceValue(func() map[string]string {
	t := attack.Enterprise()
	out := map[string]string{}
	for _, tq := range t.Techniques() {
		names := []string{tq.Name}
		if base, _, ok := strings.Cut(tq.ID, "."); ok {
			if p, ok := t.Technique(base); ok {
				names = append(names, p.Name+": "+tq.Name)
			}
		}
		for _, n := range names {
			if got, ok := t.TechniqueByName(n); ok && firstPattern(got.Tactics) == firstPattern(tq.Tactics) {
				out[tq.ID] = n
				break
			}
		}
	}
	return out
})

// firstPattern is the attack_pattern of the first of shortnames' tactics in
// DESIGN §4's order.
func firstPattern(shortnames []string) string {
	best := -1
	order := attack.Patterns()
	for _, s := range shortnames {
		if i := slices.Index(order, attack.PatternOf(s)); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return order[best]
}

// ContainerName names the reference's container.
func (r EncodedRef) ContainerName() string { return Containers()[r.Container%len(Containers())] }

// KeyName is the key (or path) the reference is placed under.
func (r EncodedRef) KeyName() string {
	keys := containerKeys[r.Container%len(containerKeys)]
	return keys[r.Key%len(keys)]
}

// WantPattern is the attack_pattern of the item: the first of its tactics
// in DESIGN §4's order.
func (r EncodedRef) WantPattern() string {
	it := AttackItems()[r.Item%len(AttackItems())]
	ps := slices.Clone(it.Patterns)
	order := attack.Patterns()
	slices.SortFunc(ps, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return ps[0]
}

var refSeverities = []string{"critical", "high", "medium", "low"}

// Payload returns the delivery carrying the reference (with=true) or the
// same delivery without it (its liveness twin): an Alertmanager webhook for
// a label, an annotation or a joined list, a SIEM's own JSON alert for a
// nested object or an array element.
func (r EncodedRef) Payload(with bool) []byte {
	w, _ := r.Written()
	title := neutralTitles[r.Title%len(neutralTitles)]
	sev := refSeverities[r.Severity%len(refSeverities)]
	key := r.KeyName()
	switch r.ContainerName() {
	case "nested object", "array element":
		o := map[string]any{"title": title, "rule_name": "RuntimeDetection", "severity": sev, "service": "checkout-api", "host": "ws-0231"}
		if with {
			var v any = w
			if r.ContainerName() == "array element" {
				v = []any{"team.soc", w, "maturity.stable"}
			}
			path := strings.Split(key, ".")
			m := o
			for _, p := range path[:len(path)-1] {
				next := map[string]any{}
				m[p] = next
				m = next
			}
			m[path[len(path)-1]] = v
		}
		b, _ := json.Marshal(o)
		return append(b, '\n')
	}
	labels := map[string]string{"alertname": "RuntimeDetection", "severity": sev, "service": "checkout-api"}
	annotations := map[string]string{"summary": title}
	if with {
		switch r.ContainerName() {
		case "label":
			labels[key] = w
		case "annotation":
			annotations[key] = w
		default:
			join := listJoins[r.Join%len(listJoins)]
			if _, enc := r.Written(); join == " " && (strings.Contains(w, " ") || enc == "name") {
				// A technique's name, and a name of several words, is
				// an item of a list only whole: never joined by spaces.
				join = ", "
			}
			labels[key] = "container" + join + w + join + "shell"
		}
	}
	b, _ := json.Marshal(map[string]any{"version": "4", "status": "firing", "receiver": "soc", "groupLabels": map[string]string{},
		"alerts": []any{map[string]any{"status": "firing", "labels": labels, "annotations": annotations}}})
	return append(b, '\n')
}

// EncodedRefGen generates every tactic and technique of the embedded table
// (a tactic a third of the time), in every encoding, in every container
// under every key, at every severity, with 5 to 12 unanimous benign
// memories. It shrinks toward the first tactic's id in a label.
func EncodedRefGen() gopter.Gen {
	nTactics := len(attack.Enterprise().Tactics())
	item := gopter.DeriveGen(
		func(tactic int, t, q int) int {
			if tactic == 0 {
				return t
			}
			return nTactics + q
		},
		func(i int) (int, int, int) {
			if i < nTactics {
				return 0, i, 0
			}
			return 1, 0, i - nTactics
		},
		Index(3, 0), Index(nTactics, 0), Index(len(AttackItems())-nTactics, 0),
	)
	return gg.Struct(reflect.TypeOf(EncodedRef{}), map[string]gopter.Gen{
		"Item": item, "Encoding": Index(encodingDraws, 0), "Container": Index(len(Containers()), 0), "Key": Index(6, 0),
		"Join": Index(len(listJoins), 0), "Title": Index(len(neutralTitles), 0), "Severity": Index(len(refSeverities), 0),
		"Memory": benignMemoryGen(),
	})
}

// ValidEncodedRef reports a reference with indexes out of range.
func ValidEncodedRef(r EncodedRef) error {
	for _, c := range []struct {
		v, n int
		what string
	}{{r.Item, len(AttackItems()), "item"}, {r.Encoding, encodingDraws, "encoding"}, {r.Container, len(Containers()), "container"},
		{r.Key, 6, "key"}, {r.Join, len(listJoins), "join"}, {r.Title, len(neutralTitles), "title"}, {r.Severity, len(refSeverities), "severity"}} {
		if err := indexesIn([]int{c.v}, c.n, c.what); err != nil {
			return err
		}
	}
	return validMemory(r.Memory)
}

// ------------------------------------------ security products by name (P105)

// ProductVariants name how a spelling of the product list is written.
func ProductVariants() []string {
	return []string{"as listed", "upper case", "lower case", "hyphens", "underscores", "no spaces", "inside other words"}
}

// ProductKeys are the source-like keys (a path for a nested member) a
// product is named under.
func ProductKeys() []string {
	return []string{"source", "sender", "tool", "product", "vendor", "provider", "integration", "detector", "generator", "origin",
		"event.module", "observer.product", "alert_source"}
}

// ProductCase is a spelling of the product list, written in a variant,
// under a source-like key of an Alertmanager alert's labels or of a SIEM's
// own JSON alert, on an unmapped rule of a severity, with the memory that
// vouches for it.
type ProductCase struct {
	Spelling, Variant, Key, Container, Title, Severity int
	Memory                                             BenignMemory
}

// Spellings are the product list's spellings: the pool P105 draws from, so
// a new spelling widens the test space by itself.
func Spellings() []product.Spelling { return product.Default().Spellings() }

// Written returns the spelling as written and its variant's name. A
// spelling that counts only whole is never written inside other words.
func (c ProductCase) Written() (string, string) {
	sp := Spellings()[c.Spelling%len(Spellings())]
	v := ProductVariants()[c.Variant%len(ProductVariants())]
	s := sp.Spelling
	switch v {
	case "upper case":
		return strings.ToUpper(s), v
	case "lower case":
		return strings.ToLower(s), v
	case "hyphens":
		return strings.ReplaceAll(s, " ", "-"), v
	case "underscores":
		return strings.ReplaceAll(s, " ", "_"), v
	case "no spaces":
		return strings.ReplaceAll(s, " ", ""), v
	case "inside other words":
		if sp.Whole {
			return s, "as listed"
		}
		return s + " (eu-west-1)", v
	}
	return s, v
}

// ContainerName names where the product is named.
func (c ProductCase) ContainerName() string {
	return []string{"Alertmanager label", "SIEM JSON member"}[c.Container%2]
}

// Payload returns the delivery naming the product (with=true), or its twin
// naming prometheus in the same field.
func (c ProductCase) Payload(with bool) []byte {
	v, _ := c.Written()
	if !with {
		v = "prometheus"
	}
	key := ProductKeys()[c.Key%len(ProductKeys())]
	title := []string{"Unmapped rule 4711 fired", "Rule R-2093 matched", "Detection 88 triggered", "Policy violation 12 on host"}[c.Title%4]
	sev := refSeverities[c.Severity%len(refSeverities)]
	if c.ContainerName() == "Alertmanager label" {
		labels := map[string]string{"alertname": "Rule4711", "severity": sev, "service": "checkout-api", key: v}
		b, _ := json.Marshal(map[string]any{"version": "4", "status": "firing", "receiver": "soc", "groupLabels": map[string]string{},
			"alerts": []any{map[string]any{"status": "firing", "labels": labels, "annotations": map[string]string{"summary": title}}}})
		return append(b, '\n')
	}
	o := map[string]any{"title": title, "rule_name": "Rule4711", "severity": sev, "service": "checkout-api"}
	path := strings.Split(key, ".")
	m := o
	for _, p := range path[:len(path)-1] {
		next := map[string]any{}
		m[p] = next
		m = next
	}
	m[path[len(path)-1]] = v
	b, _ := json.Marshal(o)
	return append(b, '\n')
}

// ProductCaseGen generates every spelling of the product list in every
// variant under every source-like key, on an unmapped rule at every
// severity, with 5 to 12 unanimous benign memories.
func ProductCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ProductCase{}), map[string]gopter.Gen{
		"Spelling": Index(len(Spellings()), 0), "Variant": Index(len(ProductVariants()), 0), "Key": Index(len(ProductKeys()), 0),
		"Container": Index(2, 0), "Title": Index(4, 0), "Severity": Index(len(refSeverities), 0), "Memory": benignMemoryGen(),
	})
}

// ValidProductCase reports a case with indexes out of range.
func ValidProductCase(c ProductCase) error {
	for _, x := range []struct {
		v, n int
		what string
	}{{c.Spelling, len(Spellings()), "spelling"}, {c.Variant, len(ProductVariants()), "variant"}, {c.Key, len(ProductKeys()), "key"},
		{c.Container, 2, "container"}, {c.Title, 4, "title"}, {c.Severity, len(refSeverities), "severity"}} {
		if err := indexesIn([]int{x.v}, x.n, x.what); err != nil {
			return err
		}
	}
	return validMemory(c.Memory)
}

// ------------------------------------- the declared tactic outranks text (P106)

// TextEvidence names what a detection's text says of another tactic.
func TextEvidence() []string {
	return []string{"a bare technique id", "a bare tactic id", "rules-file words and a bare technique id"}
}

// DeclaredCase is a tactic declared in one encoding and container (Ref,
// whose Item is taken among the tactics), and a title and description
// naming another item of the table (Other) as text does.
type DeclaredCase struct {
	Ref          EncodedRef
	Other, Words int
}

// Declared returns the reference declaring a tactic.
func (c DeclaredCase) Declared() EncodedRef {
	r := c.Ref
	r.Item %= len(attack.Enterprise().Tactics())
	return r
}

// OtherItem is the item the text names: a technique for the bare ids, a
// tactic for the bare tactic id.
func (c DeclaredCase) OtherItem() AttackItem {
	nTactics := len(attack.Enterprise().Tactics())
	if TextEvidence()[c.Words%len(TextEvidence())] == "a bare tactic id" {
		return AttackItems()[c.Other%nTactics]
	}
	return AttackItems()[nTactics+c.Other%(len(AttackItems())-nTactics)]
}

// TextPattern is what the text alone gives: the first tactic of the other
// item.
func (c DeclaredCase) TextPattern() string {
	it := c.OtherItem()
	return EncodedRef{Item: slices.IndexFunc(AttackItems(), func(x AttackItem) bool { return x.ID == it.ID })}.WantPattern()
}

// Payload returns the delivery with the declaration (with=true) or without
// it, its description naming the other item.
func (c DeclaredCase) Payload(with bool) []byte {
	r := c.Declared()
	var o map[string]any
	if err := json.Unmarshal(r.Payload(with), &o); err != nil {
		panic(err)
	}
	text := "seen with " + c.OtherItem().ID + " on this host"
	if TextEvidence()[c.Words%len(TextEvidence())] == "rules-file words and a bare technique id" {
		text = "a process tried to exfiltrate data (" + c.OtherItem().ID + ")"
	}
	if alerts, ok := o["alerts"].([]any); ok {
		alerts[0].(map[string]any)["annotations"].(map[string]any)["description"] = text
	} else {
		o["description"] = text
	}
	b, _ := json.Marshal(o)
	return append(b, '\n')
}

// DeclaredCaseGen generates a tactic declared in every encoding and
// container and a text naming any other technique or tactic of the table.
func DeclaredCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(DeclaredCase{}), map[string]gopter.Gen{
		"Ref": EncodedRefGen(), "Other": Index(len(AttackItems()), 0), "Words": Index(len(TextEvidence()), 0),
	})
}

// ValidDeclaredCase reports a case with indexes out of range.
func ValidDeclaredCase(c DeclaredCase) error {
	if err := ValidEncodedRef(c.Ref); err != nil {
		return err
	}
	if err := indexesIn([]int{c.Other}, len(AttackItems()), "other"); err != nil {
		return err
	}
	return indexesIn([]int{c.Words}, len(TextEvidence()), "words")
}
