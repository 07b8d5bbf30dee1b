package property

import (
	"fmt"

	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// identityProperties are the rules of alert identity (DESIGN §4).
func identityProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P26_identity_template_invariant",
			"Template invariance: two renderings of one rule that differ only in their variables (instance, value, pod, IP, numbers, timestamps, ids) and label order share one identity, whether the rule is an alertname or the title's masked template; alerts of two different rules never share an identity; an alert with neither a rule nor a word in its title has none.",
			"IdentityCaseGen", gen.IdentityCaseGen(), func(c gen.IdentityCase) error {
				a, b := c.First(), c.Second()
				ia, ib := ex.Identify(a), ex.Identify(b)
				name, anon := c.Name(), c.Anonymous()
				if again := ex.Identify(a); again != ia {
					return fmt.Errorf("determinism: one alert, two identities %v and %v", ia, again)
				}
				if ia != ib {
					return fmt.Errorf("invariance: family %s gave %v and %v for two renderings:\n  %q %v\n  %q %v", name, ia, ib, a.Title, a.Labels, b.Title, b.Labels)
				}
				if ia.IsZero() != anon {
					return fmt.Errorf("presence: family %s (anonymous: %v) has identity %v", name, anon, ia)
				}
				for other, o := range c.Others() {
					if !anon && ex.Identify(o) == ia {
						return fmt.Errorf("separation: families %s and %s share the identity %v:\n  %q\n  %q", name, other, ia, a.Title, o.Title)
					}
				}
				if r := ia.Rule; r != "" && fingerprint.Template(r) != fingerprint.Template(fingerprint.Template(r)) {
					return fmt.Errorf("template not idempotent on %q", r)
				}
				return nil
			},
			pbt.Classify(func(c gen.IdentityCase) []string {
				a := c.First()
				id, fp := ex.Identify(a), ex.Extract(a)
				switch {
				case id.IsZero():
					return []string{"no identity"}
				case fp.IsZero():
					return []string{"empty DNA with identity"}
				case a.Labels["alertname"] == "":
					return []string{"template rule"}
				}
				return []string{"alertname rule"}
			}),
			pbt.Cover("no identity", 3), pbt.Cover("empty DNA with identity", 3), pbt.Cover("template rule", 10),
		),
	}
}
