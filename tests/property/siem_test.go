package property

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// siemProperties are the rules of security evidence wherever and however
// it is written (DESIGN §4): ATT&CK in every encoding, field and
// container; security products by any name; the declared tactic over the
// text; each with a liveness twin that memory does bypass.
func siemProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P104_attack_in_every_encoding_and_container_never_bypassed",
			"Every tactic and technique of the embedded ATT&CK table, written in every encoding a SIEM or forwarder uses (technique ids with '.', '_' or '/' before the sub-technique, in either case, Sigma tags, ATT&CK URLs, tactic ids, tactic names in any case and spelling — spaces, CamelCase, hyphens, underscores — and technique names) and placed under a key that says it holds ATT&CK in every kind of container (an Alertmanager label or annotation, a nested object or an array element of a SIEM's own JSON alert, an item of a list joined by commas, semicolons, pipes, lines or spaces), read through intake, gives that item's tactic (the first of its tactics in DESIGN §4's order) and is never bypassed nor sent to the cheap tier under 5 to 12 unanimous benign memories; liveness: the same delivery without the reference is bypassed under the same memory.",
			"EncodedRefGen", gen.EncodedRefGen(), func(r gen.EncodedRef) error {
				a, twin, err := readPair(r.Payload)
				if err != nil {
					return err
				}
				if err := wantPattern(ex, a, r.WantPattern()); err != nil {
					w, enc := r.Written()
					return fmt.Errorf("%v (%q, %s, in %s %s)", err, w, enc, r.ContainerName(), r.KeyName())
				}
				return neverBypassed(ex, r.Memory, []openrecall.Alert{a}, &twin)
			},
			pbt.PinFunc("every tactic and technique in every encoding and container", func() error {
				for item := range gen.AttackItems() {
					for enc := range gen.TacticEncodings() {
						if !gen.AttackItems()[item].Tactic() && enc >= len(gen.TechniqueEncodings()) {
							continue
						}
						for c := range gen.Containers() {
							r := gen.EncodedRef{Item: item, Encoding: enc, Container: c, Key: item + enc, Join: item}
							a, _, err := readPair(r.Payload)
							if err != nil {
								return err
							}
							if err := wantPattern(ex, a, r.WantPattern()); err != nil {
								w, enc := r.Written()
								return fmt.Errorf("%v (%q, %s, in %s %s)", err, w, enc, r.ContainerName(), r.KeyName())
							}
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(r gen.EncodedRef) []string {
				_, enc := r.Written()
				l := []string{"encoding " + enc, "container " + r.ContainerName()}
				if it := gen.AttackItems()[r.Item]; it.Tactic() {
					l = append(l, "tactic")
				} else if strings.Contains(it.ID, ".") {
					l = append(l, "sub-technique")
				}
				return l
			}),
			pbt.Cover("tactic", 15), pbt.Cover("sub-technique", 25), pbt.Cover("encoding URL", 5), pbt.Cover("encoding name", 5),
			pbt.Cover("encoding CamelCase", 1), pbt.Cover("encoding id, underscore", 3), pbt.Cover("container joined list", 10),
			pbt.Cover("container array element", 10), pbt.Cover("container nested object", 10), pbt.Cover("container annotation", 10),
			pbt.Expensive(2),
		),
		pbt.ForAll("P105_security_product_in_source_field_is_detection",
			"An alert whose source-like field (source, sender, tool, product, vendor, provider, integration, detector, generator, origin, event.module, observer.product, …) of an Alertmanager label or a SIEM's own JSON alert names any product of the embedded list in any listed spelling (as listed, in upper or lower case, with hyphens, underscores or no spaces, inside other words where the spelling allows) is a security detection — an unmapped rule at any severity has at least security_detection — and is never bypassed nor sent to the cheap tier under 5 to 12 unanimous benign memories; liveness: the same alert naming prometheus in that field is bypassed.",
			"ProductCaseGen", gen.ProductCaseGen(), func(c gen.ProductCase) error {
				a, twin, err := readPair(c.Payload)
				if err != nil {
					return err
				}
				if !ex.Extract(a).HasAttack() {
					w, v := c.Written()
					return fmt.Errorf("attack: %q (%s) under %s of an %s is no security detection: %s", w, v, gen.ProductKeys()[c.Key], c.ContainerName(), ex.Extract(a))
				}
				return neverBypassed(ex, c.Memory, []openrecall.Alert{a}, &twin)
			},
			pbt.PinFunc("every spelling in every variant", func() error {
				for s := range gen.Spellings() {
					for v := range gen.ProductVariants() {
						c := gen.ProductCase{Spelling: s, Variant: v, Key: s + v, Container: s + v}
						a, twin, err := readPair(c.Payload)
						if err != nil {
							return err
						}
						if !ex.Extract(a).HasAttack() || ex.Extract(twin).HasAttack() {
							w, _ := c.Written()
							return fmt.Errorf("%q under %s of an %s: %s, twin %s", w, gen.ProductKeys()[c.Key], c.ContainerName(), ex.Extract(a), ex.Extract(twin))
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(c gen.ProductCase) []string {
				_, v := c.Written()
				return []string{"variant " + v, "in " + c.ContainerName()}
			}),
			pbt.Cover("variant inside other words", 3), pbt.Cover("variant no spaces", 5), pbt.Cover("in SIEM JSON member", 30), pbt.Cover("in Alertmanager label", 30),
			pbt.Expensive(2),
		),
		pbt.ForAll("P106_declared_tactic_outranks_text",
			"A tactic a detection declares (in any encoding, under a key that says it holds ATT&CK, in any container) is its attack_pattern whatever its description says — a bare id of any other technique or tactic of the table, or the rules file's words for another attack (\"exfiltrate\") — even when that other tactic comes first in DESIGN §4's order; liveness: without the declaration the description's tactic is the attack_pattern.",
			"DeclaredCaseGen", gen.DeclaredCaseGen(), func(c gen.DeclaredCase) error {
				a, without, err := readPair(c.Payload)
				if err != nil {
					return err
				}
				if err := wantPattern(ex, a, c.Declared().WantPattern()); err != nil {
					w, enc := c.Declared().Written()
					return fmt.Errorf("%v: the declared %q (%s, %s %s) lost to the text %q", err, w, enc, c.Declared().ContainerName(), c.Declared().KeyName(), a.Text)
				}
				if got, want := ex.Extract(without).AttackPattern, c.TextPattern(); got != want {
					return fmt.Errorf("liveness: without the declaration attack_pattern %q, want the text's %q (text %q)", got, want, without.Text)
				}
				return nil
			},
			pbt.Classify(func(c gen.DeclaredCase) []string {
				l := []string{"text " + gen.TextEvidence()[c.Words], "container " + c.Declared().ContainerName()}
				if c.TextPattern() != c.Declared().WantPattern() {
					l = append(l, "text names another tactic")
				}
				return l
			}),
			pbt.Cover("text names another tactic", 70), pbt.Cover("text rules-file words and a bare technique id", 20),
		),
	}
}

// readPair reads a generator's delivery with its evidence and without it
// through intake: one alert each.
func readPair(payload func(bool) []byte) (with, without openrecall.Alert, err error) {
	for i, b := range [][]byte{payload(true), payload(false)} {
		recs, err := intake.ParseBytes(b, intake.Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			return with, without, fmt.Errorf("setup: %s: %v %+v", b, err, recs)
		}
		if i == 0 {
			with = recs[0].Alert
		} else {
			without = recs[0].Alert
		}
	}
	return with, without, nil
}

// wantPattern checks an alert's attack_pattern.
func wantPattern(ex *fingerprint.Extractor, a openrecall.Alert, want string) error {
	if got := ex.Extract(a).AttackPattern; got != want {
		return fmt.Errorf("pattern: attack_pattern %q, want %q (labels %q, annotations %q, fields %q)", got, want, a.Labels, a.Annotations, a.Fields)
	}
	return nil
}
