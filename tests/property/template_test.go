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
			"Two renderings of one event template that differ only in variable tokens share a template: numbers, signed numbers, numbers with units, durations, IPv4/IPv6 addresses with and without ports, URLs, paths, e-mail addresses, hex ids, UUIDs, pod names, CronJob runs, host names with an ordinal, timestamps (with month and weekday names), the values of key=value, key:value and key: value pairs, quoted numbers and paths, and the account after \"for user\" or \"invalid user\", an instance number (eth0, cn304), a grid position (Thunderbird_A3), a dotted host name (also as rhost's value), an empty or bracketed value, a size restated in other units, a bounded duration, a list of ids, a namespace's name, a sudo line's account, the account between \"for\" and \"from\" and the value of \"host:\"; every class is tried on every two of its values (a pinned sweep) besides the generated titles; and Template is idempotent.",
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
			pbt.PinFunc("every masked class, each pair of its values, between constant words", func() error {
				return everyTemplateClass(func(c gen.TemplateCase) error {
					if ta, tb := fingerprint.Template(c.First()), fingerprint.Template(c.Second()); ta != tb {
						return fmt.Errorf("variables (%v): %q → %q but %q → %q", c.Classes(), c.First(), ta, c.Second(), tb)
					}
					return nil
				})
			}),
			pbt.Classify(func(c gen.TemplateCase) []string {
				if len(c.Classes()) == 0 {
					return []string{"constant words only"}
				}
				return append([]string{"with variables"}, c.Classes()...)
			}),
			pbt.Cover("with variables", 50),
		),
		pbt.ForAll("P57_template_names_separate",
			"Two titles that differ only in a constant word, the key of a key=value, key:value or key: value pair (or a word value of one), a quoted word, an HTTP method or the constant segments of its route, the kind of a numbered name (eth0, wlan0), a kind that ends in digits (ipv4, sha256), a catalogue id (T1059.001, CVE-2021-42278), the word before a dot leader, a reverse-DNS code name, a word after \"user\" without an account lead, a word after \"for user\" that names no account, a word after \"for\" that no \"from\" follows, or a word after \"by\" never share a template; every contrast is tried at three places (a pinned sweep) besides the generated titles.",
			"ContrastCaseGen", gen.ContrastCaseGen(), func(c gen.ContrastCase) error {
				a, b := c.First(), c.Second()
				if ta, tb := fingerprint.Template(a), fingerprint.Template(b); ta == tb {
					return fmt.Errorf("separation (%s): %q and %q share the template %q", c.Kind(), a, b, ta)
				}
				return nil
			},
			pbt.PinFunc("every contrast, at the start, in the middle and at the end of a title", func() error {
				for k := range gen.TemplateContrasts() {
					for _, c := range []gen.ContrastCase{
						{Shape: []int{0}, Contrast: k},
						{Shape: []int{0, 1, 10, 2}, Values: []int{0, 0, 3, 0}, Contrast: k, At: 1},
						{Shape: []int{0, 10}, Values: []int{0, 5}, Contrast: k, At: 1},
					} {
						a, b := c.First(), c.Second()
						if ta, tb := fingerprint.Template(a), fingerprint.Template(b); ta == tb {
							return fmt.Errorf("separation (%s): %q and %q share the template %q", c.Kind(), a, b, ta)
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(c gen.ContrastCase) []string { return []string{c.Kind()} }),
			pbt.Cover("http method", 3), pbt.Cover("quoted word", 5), pbt.Cover("key of key=value", 3), pbt.Cover("catalogue id", 3),
		),
	}
}

// everyTemplateClass calls check with, for every variable slot of
// TemplateSlots and every two of its values, a title of constant words
// around that slot rendered with the two values: every masked class is
// tried on both sides whatever the generator draws.
func everyTemplateClass(check func(gen.TemplateCase) error) error {
	for i, slot := range gen.TemplateSlots() {
		for a := range slot.Values {
			for b := a + 1; b < len(slot.Values); b++ {
				for _, c := range []gen.TemplateCase{
					{Shape: []int{0, i, 1}, A: []int{0, a, 0}, B: []int{0, b, 0}},
					{Shape: []int{i, 2}, A: []int{a, 0}, B: []int{b, 0}},
				} {
					if err := check(c); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
