package queuegen

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/workflow"
)

func extractor(t *testing.T) *fingerprint.Extractor {
	t.Helper()
	rules, err := fingerprint.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := fingerprint.New(rules)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// parseOne parses one generated line with the real intake and requires
// exactly one accepted alert.
func parseOne(t *testing.T, b []byte) openrecall.Alert {
	t.Helper()
	recs, err := intake.ParseBytes(b, intake.Options{})
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if len(recs) != 1 {
		t.Fatalf("%s: %d records, want 1", b, len(recs))
	}
	if recs[0].Err != nil {
		t.Fatalf("%s: rejected: %s", b, recs[0].Err.Reason)
	}
	return recs[0].Alert
}

func TestWriteIsDeterministic(t *testing.T) {
	tests := []struct {
		name       string
		seedA      int64
		seedB      int64
		wantEqual  bool
		alertCount int
	}{
		{name: "same seed, same queue", seedA: 7, seedB: 7, wantEqual: true, alertCount: 500},
		{name: "other seed, other queue", seedA: 7, seedB: 8, wantEqual: false, alertCount: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a, b bytes.Buffer
			ca, err := Write(&a, tt.alertCount, tt.seedA)
			if err != nil {
				t.Fatal(err)
			}
			cb, err := Write(&b, tt.alertCount, tt.seedB)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Equal(a.Bytes(), b.Bytes()); got != tt.wantEqual {
				t.Errorf("queues equal = %v, want %v", got, tt.wantEqual)
			}
			if tt.wantEqual {
				if diff := cmp.Diff(ca, cb); diff != "" {
					t.Errorf("counts differ (-a +b):\n%s", diff)
				}
			}
		})
	}
}

func TestWriteCountsEveryLine(t *testing.T) {
	const n = 5000
	var buf bytes.Buffer
	counts, err := Write(&buf, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(buf.String(), "\n")
	if lines != n {
		t.Errorf("%d lines, want %d", lines, n)
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != n {
		t.Errorf("counts total %d, want %d: %v", total, n, counts)
	}
	for _, k := range []Kind{KindRepeat, KindThin, KindNovel, KindAttack, KindDisguised, KindResent, KindResolved} {
		if counts[k] == 0 {
			t.Errorf("no %s alerts in %d: %v", k, n, counts)
		}
	}
	if counts[KindRepeat] < n/3 {
		t.Errorf("%d repeats of benign families in %d alerts; a realistic shift has 40-50%% noise", counts[KindRepeat], n)
	}
}

// TestLinesMeanTheirKind checks every generated line with the real intake
// and fingerprint rules: it is one alert; attacks and disguised attacks carry
// an attack pattern; benign families carry none and are recallable; resolved
// notifications are resolved; a re-sent line keeps its original's alert id.
func TestLinesMeanTheirKind(t *testing.T) {
	ex := extractor(t)
	s := newStream(3)
	ids := map[string]string{}
	formats := map[string]bool{}
	for i := range 3000 {
		l, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		a := parseOne(t, l.json)
		formats[a.Format] = true
		fp := ex.Extract(a)
		switch l.kind {
		case KindAttack, KindDisguised:
			if fp.AttackPattern == "" {
				t.Errorf("line %d (%s %s): no attack pattern in %s: %s", i+1, l.kind, l.family, fp, l.json)
			}
		case KindRepeat, KindThin:
			if fp.AttackPattern != "" || !workflow.Classified(ex.Identify(a)) {
				t.Errorf("line %d (%s %s): fingerprint %s, identity %s; want an identity and no attack pattern", i+1, l.kind, l.family, fp, ex.Identify(a))
			}
		case KindResolved:
			if a.Status != openrecall.StatusResolved {
				t.Errorf("line %d: status %q, want resolved", i+1, a.Status)
			}
		}
		if l.kind == KindResent {
			if _, ok := ids[a.ID]; !ok {
				t.Errorf("line %d: re-sent alert %s was never sent before", i+1, a.ID)
			}
			continue
		}
		if prev, ok := ids[a.ID]; ok {
			t.Errorf("line %d: alert id %s already used by a %s alert", i+1, a.ID, prev)
		}
		ids[a.ID] = l.family
	}
	if len(formats) < 5 {
		t.Errorf("formats %v, want all five line formats", formats)
	}
}

// TestSeedsVouchForTheirFamilies replays triage and the guard over the
// seeded memories (scored as recall scores them, limit 10): every alert of a
// bypass family is bypassed, every alert of a thin family is not, and no
// seed alert id is used twice (the seed stores distinct memories).
func TestSeedsVouchForTheirFamilies(t *testing.T) {
	ex := extractor(t)
	seeds, err := Seeds(1)
	if err != nil {
		t.Fatal(err)
	}
	var memories []openrecall.Incident
	sources := map[string]bool{}
	for _, s := range seeds {
		a := parseOne(t, s.Alert)
		if sources[a.ID] {
			t.Errorf("seed alert id %s twice: the seed would not store distinct memories", a.ID)
		}
		sources[a.ID] = true
		memories = append(memories, openrecall.Incident{Fingerprint: ex.Extract(a), Decision: openrecall.Decision(s.Decision),
			Identity: ex.Identify(a), Severity: a.Severity})
	}
	cfg := triage.DefaultConfig()
	for _, f := range families() {
		if f.kind != KindRepeat && f.kind != KindThin {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			g := newGen(11)
			for i := range 40 {
				b, err := json.Marshal(f.render(g))
				if err != nil {
					t.Fatal(err)
				}
				a := parseOne(t, b)
				fp, id := ex.Extract(a), ex.Identify(a)
				var matches []openrecall.Match
				for _, m := range memories {
					if openrecall.SameCritical(fp, m.Fingerprint) {
						matches = append(matches, openrecall.ScoreMatch(id, fp, m, time.Time{}))
					}
				}
				sort.SliceStable(matches, func(i, j int) bool { return matches[i].Score > matches[j].Score })
				matches = matches[:min(len(matches), cfg.RecallLimit)]
				tr := triage.Triage(fp, a.Severity, matches, cfg)
				v := triage.Guard(fp, tr, cfg)
				if want := f.kind == KindRepeat; v.Bypass != want {
					t.Fatalf("alert %d %s: bypass %v, want %v (triage %+v)", i, fp, v.Bypass, want, tr)
				}
				if tr.Decision != openrecall.Decision(f.decision) {
					t.Errorf("alert %d %s: decision %s, want %s", i, fp, tr.Decision, f.decision)
				}
			}
		})
	}
}
