package gen

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// IdentityFamilies returns the alert families of the identity properties,
// each a different rule: the AlertFamilies; those of them with an alertname
// once more without it (their rule is then the title's template); two
// families of one service; families whose Alert DNA is empty but which have
// an identity; and families whose alerts have no identity (no rule, no word
// in the title).
func IdentityFamilies() []Family {
	var out []Family
	base := AlertFamilies()
	out = append(out, base...)
	for _, f := range base {
		var labels [][2]string
		for _, kv := range f.Labels {
			if kv[0] != "alertname" {
				labels = append(labels, kv)
			}
		}
		if len(labels) == len(f.Labels) {
			continue // no alertname: already a template rule
		}
		f.Name += "-template"
		f.Labels = labels
		out = append(out, f)
	}
	return append(out,
		// Two rules of one service (the case of issue #7): only the rule
		// tells them apart.
		Family{Name: "same-service-restart", Labels: [][2]string{{"alertname", "MysqlRestarted"}, {"job", "db"}, {"instance", "{ip}:9104"}},
			Title: "MySQL restarted (instance {ip}:9104)", Text: "MySQL has just been restarted, less than one minute ago on {ip}.", Severity: "info"},
		Family{Name: "same-service-member", Labels: [][2]string{{"alertname", "MongodbReplicaMemberUnhealthy"}, {"job", "db"}, {"instance", "{ip}:9216"}},
			Title: "Mongodb replica member unhealthy (instance {ip}:9216)", Text: "MongoDB replica member is not healthy on {ip}.", Severity: "critical"},
		Family{Name: "empty-dna-label", Labels: [][2]string{{"alertname", "FrobnicatorIdle"}, {"job", "frobnicator"}, {"instance", "{ip}:7000"}},
			Title: "Frobnicator idle on {ip}", Text: "frobnicator {uuid} idle since {ts}", Severity: "low"},
		Family{Name: "empty-dna-text", Title: "Nightly ledger summary for {uuid} mailed {n} rows at {ts}", Text: "batch {hex} posted",
			Service: "ledger-reports", Severity: "info"},
		Family{Name: "empty-dna-pod", Title: "Widget pod ledger-{pod} rebalanced from {ip} ({n} shards)", Severity: ""},
		Family{Name: "anonymous-noise", Title: "{n} {ip} {uuid}", Text: "{hex} at {ts}", Anonymous: true},
		Family{Name: "anonymous-labels", Labels: [][2]string{{"instance", "{ip}"}, {"pod", "x-{pod}"}}, Title: "{n}", Anonymous: true},
	)
}

// IdentityCase is two renderings of one identity family with different
// noise (and labels in reverse order for the second).
type IdentityCase struct {
	Family int
	A, B   Noise
}

// First renders the family with noise A.
func (c IdentityCase) First() openrecall.Alert { return c.family(c.Family).Render(c.A, false) }

// Second renders the family with noise B, labels in reverse.
func (c IdentityCase) Second() openrecall.Alert { return c.family(c.Family).Render(c.B, true) }

// Others renders every other identity family with noise B, by name.
func (c IdentityCase) Others() map[string]openrecall.Alert {
	out := map[string]openrecall.Alert{}
	for i, f := range IdentityFamilies() {
		if i != c.Family {
			out[f.Name] = f.Render(c.B, false)
		}
	}
	return out
}

// Name returns the name of the case's family.
func (c IdentityCase) Name() string { return c.family(c.Family).Name }

// Anonymous reports whether the family's alerts have no identity.
func (c IdentityCase) Anonymous() bool { return c.family(c.Family).Anonymous }

func (c IdentityCase) family(i int) Family {
	fs := IdentityFamilies()
	return fs[i%len(fs)]
}

// IdentityCaseGen generates identity cases over IdentityFamilies.
func IdentityCaseGen() gopter.Gen {
	n := len(IdentityFamilies())
	return gg.Struct(reflect.TypeOf(IdentityCase{}), map[string]gopter.Gen{
		"Family": Index(n, 0), "A": noiseGen(), "B": noiseGen(),
	})
}

// ValidIdentityCase checks that the case's indexes are in range and that the
// families are distinct by name.
func ValidIdentityCase(c IdentityCase) error {
	fs := IdentityFamilies()
	if c.Family < 0 || c.Family >= len(fs) {
		return fmt.Errorf("family %d out of range [0, %d)", c.Family, len(fs))
	}
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.Name] || strings.TrimSpace(f.Name) == "" {
			return fmt.Errorf("family name %q repeated or empty", f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}
