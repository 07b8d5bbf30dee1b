package attack_test

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/fingerprint/attack"
	"github.com/openrecall/openrecall/internal/detectcorpus"
	"github.com/openrecall/openrecall/internal/testenv"
)

func corpus(t *testing.T) []detectcorpus.Rule {
	t.Helper()
	dir, err := detectcorpus.Find(".")
	if errors.Is(err, detectcorpus.ErrAbsent) {
		testenv.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rules, err := detectcorpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// TestCorpusTags: on the real Falco and Sigma rules, the recognizer finds an
// attack pattern in the tags of exactly the rules that have ATT&CK tags.
func TestCorpusTags(t *testing.T) {
	rules := corpus(t)
	patterns := map[string]int{}
	unknown := map[string]int{}
	for _, r := range rules {
		p, techs := attack.Tactic(r.Tags...)
		if r.HasATTACK() != (p != "") {
			t.Errorf("%s: tags %q give %q, but the rule has ATT&CK tags: %v", r.Key(), r.Tags, p, r.HasATTACK())
		}
		patterns[r.Source+" "+p]++
		for _, tag := range r.Tags {
			id := strings.ToUpper(strings.TrimPrefix(strings.ToLower(tag), "attack."))
			if len(id) >= 5 && id[0] == 'T' && id[1] >= '0' && id[1] <= '9' {
				if i := strings.IndexByte(id, '-'); i > 0 {
					id = id[:i]
				}
				if !slices.Contains(techs, id) {
					unknown[id]++
				}
			}
		}
	}
	keys := make([]string, 0, len(patterns))
	for k := range patterns {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("  %-36s %3d", k, patterns[k])
	}
	if len(unknown) > 0 {
		t.Logf("technique ids the v18.1 table lacks (ATT&CK v19 ids in Sigma's tags): %v", unknown)
	}
}

// TestCorpusPayloads: in every delivery form, every firing of a rule with
// ATT&CK tags is recognized from its payload alone, with at least the
// techniques of its tags.
func TestCorpusPayloads(t *testing.T) {
	rules := corpus(t)
	s := attack.Enterprise().NewScan()
	for _, form := range detectcorpus.Forms() {
		found, same, untaggedFound := 0, 0, 0
		for _, f := range detectcorpus.Render(rules, form, 2, 11) {
			s.Reset()
			s.Text(string(f.Payload))
			tagPattern, tagTechs := attack.Tactic(f.Rule.Tags...)
			if !f.ATTACK {
				if s.Pattern() != "" {
					untaggedFound++
				}
				continue
			}
			if s.Pattern() == "" {
				t.Errorf("%s firing of %s: no attack pattern in %s", form, f.Key, f.Payload)
				continue
			}
			found++
			if s.Pattern() == tagPattern {
				same++
			}
			got := s.Techniques()
			for _, id := range tagTechs {
				if !slices.Contains(got, id) {
					t.Errorf("%s firing of %s: technique %s of its tags not found in the payload", form, f.Key, id)
				}
			}
		}
		t.Logf("%s: %d tagged firings recognized (%d with the tags' own pattern); %d untagged firings got a pattern from their text", form, found, same, untaggedFound)
	}
}
