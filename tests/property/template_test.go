package property

import (
	"fmt"

	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// templateProperties are the rules of the title template (DESIGN §4,
// "Identity, refined").
func templateProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P56_template_variables_share",
			"Two renderings of one event template that differ only in variable tokens share a template: numbers, signed numbers, numbers with units, durations, IPv4/IPv6 addresses with and without ports, URLs, paths, e-mail addresses, hex ids, UUIDs, pod names, CronJob runs, host names with an ordinal, timestamps (with month and weekday names), the values of key=value, key:value and key: value pairs, quoted numbers and paths, and the account after \"for user\" or \"invalid user\", an instance number (eth0, cn304), a grid position (Thunderbird_A3), a dotted host name (also as rhost's value), an empty or bracketed value, a size restated in other units, a bounded duration, a list of ids, a namespace's name and a sudo line's account; and Template is idempotent.",
			"TemplateCaseGen", gen.TemplateCaseGen(), func(c gen.TemplateCase) error {
				a, b := c.First(), c.Second()
				ta, tb := fingerprint.Template(a), fingerprint.Template(b)
				if ta != tb {
					return fmt.Errorf("variables: %q → %q but %q → %q (classes %v)", a, ta, b, tb, c.Classes())
				}
				if ta == "" {
					return fmt.Errorf("presence: %q has a word but no template", a)
				}
				if again := fingerprint.Template(ta); again != ta {
					return fmt.Errorf("idempotence: %q → %q → %q", a, ta, again)
				}
				return nil
			},
			pbt.Pin("a number, then a day-month-year timestamp", gen.TemplateCase{Shape: []int{10, 30}, A: []int{0, 0}, B: []int{3, 1}}),
			pbt.Classify(func(c gen.TemplateCase) []string {
				if len(c.Classes()) == 0 {
					return []string{"constant words only"}
				}
				return []string{"with variables"}
			}),
			pbt.Cover("with variables", 50),
		),
		pbt.ForAll("P57_template_names_separate",
			"Two titles that differ only in a constant word, the key of a key=value, key:value or key: value pair (or a word value of one), a quoted word, an HTTP method or the constant segments of its route, the kind of a numbered name (eth0, wlan0), a kind that ends in digits (ipv4, sha256), a catalogue id (T1059.001, CVE-2021-42278), the word before a dot leader or a reverse-DNS code name never share a template.",
			"ContrastCaseGen", gen.ContrastCaseGen(), func(c gen.ContrastCase) error {
				a, b := c.First(), c.Second()
				if ta, tb := fingerprint.Template(a), fingerprint.Template(b); ta == tb {
					return fmt.Errorf("separation (%s): %q and %q share the template %q", c.Kind(), a, b, ta)
				}
				return nil
			},
			pbt.Classify(func(c gen.ContrastCase) []string { return []string{c.Kind()} }),
			pbt.Cover("http method", 3), pbt.Cover("quoted word", 5), pbt.Cover("key of key=value", 3), pbt.Cover("catalogue id", 5),
		),
	}
}
