package eval

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/workflow"
)

func TestGenerateDeterministic(t *testing.T) {
	a := mustGenerate(t, 7, 300)
	b := mustGenerate(t, 7, 300)
	if !bytes.Equal(a.Alerts, b.Alerts) {
		t.Fatal("same seed and size gave different alerts")
	}
	if diff := cmp.Diff(a.Truth, b.Truth); diff != "" {
		t.Fatalf("same seed and size gave different truth (-a +b):\n%s", diff)
	}
	c := mustGenerate(t, 8, 300)
	if bytes.Equal(a.Alerts, c.Alerts) {
		t.Fatal("seeds 7 and 8 gave the same alerts")
	}
}

func TestGenerateSizeBounds(t *testing.T) {
	for _, size := range []int{0, MinSize - 1, MaxSize + 1} {
		if _, err := Generate(1, size); err == nil {
			t.Errorf("Generate(1, %d) succeeded, want an error", size)
		}
	}
}

// TestGeneratedCorpusShape checks the corpus against the real intake and
// fingerprint rules: one truth line per alert at its position, every kind
// and format present, benign families sharing their critical Alert DNA and
// one identity whatever the format (memory votes only for its own identity),
// attacks carrying an attack pattern, one-off and novel alerts unique.
func TestGeneratedCorpusShape(t *testing.T) {
	c := mustGenerate(t, 20260101, 1200)
	recs := readAlerts(t, c)
	if len(recs) != 1200 || len(c.Truth) != 1200 {
		t.Fatalf("got %d records and %d truth lines, want 1200 each", len(recs), len(c.Truth))
	}
	p := newPipeline(t, false)
	kinds := map[Kind]int{}
	formats := map[string]int{}
	familyDNA := map[string]map[string]int{}
	familyID := map[string]map[openrecall.Identity]int{}
	unique := map[string]string{}
	multi := 0
	for i, rec := range recs {
		if rec.Err != nil {
			t.Fatalf("record %d rejected: %v", i, rec.Err)
		}
		tr := c.Truth[i]
		if !samePosition(tr.Position(), rec.Alert.Position) {
			t.Fatalf("truth %d is at %s, alert at %s", i, tr.Position(), rec.Alert.Position)
		}
		if tr.ID != "" && tr.ID != rec.Alert.ID {
			t.Errorf("truth %d names id %q, intake derived %q", i, tr.ID, rec.Alert.ID)
		}
		if tr.Item != nil && *tr.Item > 0 {
			multi++
		}
		kinds[tr.Kind]++
		formats[rec.Alert.Format]++
		fp := p.ex.Extract(rec.Alert)
		key := fp.ErrorClass + "|" + fp.ServiceRole + "|" + fp.Environment + "|" + fp.AttackPattern
		switch tr.Kind {
		case KindBenignRepeat, KindAmbiguous:
			if fp.HasAttack() {
				t.Errorf("%s %s: %s has attack pattern %s", tr.Kind, tr.Family, rec.Alert.Position, fp.AttackPattern)
			}
			if !workflow.Classified(p.ex.Identify(rec.Alert)) {
				t.Errorf("%s %s: %s is unclassified (no identity): %s", tr.Kind, tr.Family, rec.Alert.Position, fp)
			}
			if familyDNA[tr.Family] == nil {
				familyDNA[tr.Family] = map[string]int{}
			}
			familyDNA[tr.Family][key]++
			if familyID[tr.Family] == nil {
				familyID[tr.Family] = map[openrecall.Identity]int{}
			}
			familyID[tr.Family][p.ex.Identify(rec.Alert)]++
		case KindAttack, KindDisguisedAttack:
			if !fp.HasAttack() {
				t.Errorf("%s %s at %s has no attack pattern: %s\n%s\n%s", tr.Kind, tr.Family, rec.Alert.Position, fp, rec.Alert.Title, rec.Alert.Text)
			}
		case KindOneOffFP, KindNovelReal:
			// The generator keeps them unique by the role it expects their
			// service to have; an alertname or format that gives another
			// role would break that silently.
			if want := serviceRoles()[rec.Alert.Service]; fp.ServiceRole != want {
				t.Errorf("%s %s (%s) has service role %q, want %q", tr.Kind, tr.Family, rec.Alert.Format, fp.ServiceRole, want)
			}
			if prev, dup := unique[key]; dup && (fp.ErrorClass != "" || fp.ServiceRole != "") {
				t.Errorf("%s %s shares critical Alert DNA %s with %s", tr.Kind, tr.Family, key, prev)
			}
			unique[key] = tr.Family
		}
		if tr.Kind.Security() && tr.Decision != openrecall.DecisionReal {
			t.Errorf("%s truth %s, want real", tr.Kind, tr.Decision)
		}
	}
	for fam, dna := range familyDNA {
		if len(dna) != 1 {
			t.Errorf("family %s has %d critical Alert DNAs, want 1: %v", fam, len(dna), dna)
		}
	}
	for fam, ids := range familyID {
		if len(ids) != 1 {
			t.Errorf("family %s has %d identities, want 1: %v", fam, len(ids), ids)
		}
	}
	for _, k := range Kinds {
		if kinds[k] == 0 {
			t.Errorf("no %s alert in the corpus", k)
		}
	}
	for _, f := range []string{"jsonl", "alertmanager", "pagerduty"} {
		if formats[f] == 0 {
			t.Errorf("no %s alert in the corpus (formats %v)", f, formats)
		}
	}
	if multi == 0 {
		t.Error("no webhook carries more than one alert")
	}
	t.Logf("kinds %v formats %v", kinds, formats)
}

// TestFamiliesDistinct pins that no two families share the Alert DNA fields
// that decide a strong match: a benign family and an ambiguous one with one
// DNA would let the benign memories vouch for the ambiguous alerts (the eval
// reports that as false bypasses; the generator must not cause it).
func TestFamiliesDistinct(t *testing.T) {
	c := mustGenerate(t, 3, 1500)
	p := newPipeline(t, false)
	owner := map[string]string{}
	for i, rec := range readAlerts(t, c) {
		tr := c.Truth[i]
		if tr.Kind != KindBenignRepeat && tr.Kind != KindAmbiguous {
			continue
		}
		fp := p.ex.Extract(rec.Alert)
		key := fp.ErrorClass + "|" + fp.ServiceRole + "|" + fp.Environment
		if prev, ok := owner[key]; ok && prev != tr.Family {
			t.Errorf("families %s and %s share %s", prev, tr.Family, key)
		}
		owner[key] = tr.Family
	}
	if len(owner) != len(sortedFamilies()) {
		t.Errorf("got %d distinct family DNAs, want %d", len(owner), len(sortedFamilies()))
	}
}

// TestNearMissesShareDNA pins what the cross-rule and severity rows test:
// a cross-rule near miss has the critical Alert DNA of a benign family and
// another identity (so only identity can keep memory from vouching), and a
// severity escalation has its family's DNA and identity at critical.
func TestNearMissesShareDNA(t *testing.T) {
	c := mustGenerate(t, 5, 2000)
	p := newPipeline(t, false)
	recs := readAlerts(t, c)
	familyOf := map[string]openrecall.Identity{} // critical DNA -> benign family identity
	for i, rec := range recs {
		if c.Truth[i].Kind == KindBenignRepeat {
			fp := p.ex.Extract(rec.Alert)
			familyOf[fp.ErrorClass+"|"+fp.ServiceRole+"|"+fp.Environment] = p.ex.Identify(rec.Alert)
		}
	}
	cross, crossSame, esc, escSame := 0, 0, 0, 0
	for i, rec := range recs {
		tr := c.Truth[i]
		fp := p.ex.Extract(rec.Alert)
		id := p.ex.Identify(rec.Alert)
		famID, ok := familyOf[fp.ErrorClass+"|"+fp.ServiceRole+"|"+fp.Environment]
		switch tr.Kind {
		case KindCrossRule:
			cross++
			if ok && famID != id && !id.IsZero() {
				crossSame++
			}
		case KindSeverityEscalation:
			esc++
			if ok && famID == id && rec.Alert.Severity == openrecall.SeverityCritical {
				escSame++
			}
		}
	}
	t.Logf("cross-rule near misses sharing a benign family's DNA: %d of %d; severity escalations of a family: %d of %d", crossSame, cross, escSame, esc)
	if cross == 0 || crossSame*10 < cross*9 {
		t.Errorf("%d of %d cross-rule near misses share a benign family's DNA with another identity, want at least 90%%", crossSame, cross)
	}
	if esc == 0 || escSame != esc {
		t.Errorf("%d of %d severity escalations are their family's identity and DNA at critical", escSame, esc)
	}
}
