package templates

import (
	"path/filepath"
	"testing"

	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/internal/figures"
)

// The floor DESIGN §4 sets for the template on the bundled benchmark:
// Drain's published mean grouping accuracy on Loghub's 2k samples (Zhu et
// al., ICSE-SEIP 2019) and at most 1% of lines in a template that mixes
// events.
const (
	accuracyFloor = 0.865
	mixedCeiling  = 0.01
	// heldOutFloor holds the held-out systems (labels fixed before
	// tuning, splits never examined) at about what they measured when the
	// tokenizer was written (0.823 on the first five; 0.829 on all eight
	// after the second pass): below Drain's mean, reported as such in
	// docs/performance.md, and a regression floor, not a target to tune to.
	heldOutFloor = 0.82
)

// dataDir is the bundled benchmark data.
var dataDir = filepath.Join("..", "data", "templates")

// TestBundledBenchmarkFloor holds the floor on the bundled data: Drain's
// mean accuracy on the tuned systems, the held-out floor on the held-out
// ones and on all, and at most 1% of lines in mixed templates on each.
func TestBundledBenchmarkFloor(t *testing.T) {
	var all []Score
	for _, set := range []string{"tuned", "heldout"} {
		systems, err := LoadDir(filepath.Join(dataDir, set))
		if err != nil {
			t.Fatal(err)
		}
		var scores []Score
		for _, s := range systems {
			sc := Evaluate(s.Lines, fingerprint.Template)
			scores = append(scores, sc)
			t.Logf("%s/%-20s lines %4d events %3d templates %3d  accuracy %.3f  precision %.3f  recall %.3f  mixed %.3f", set, s.Name, sc.Lines, sc.Events, sc.Templates, sc.Accuracy, sc.Precision, sc.Recall, sc.Mixed)
			for _, m := range sc.MixedTemplates {
				t.Logf("    mixes %v: %q", m.Events, m.Template)
			}
		}
		all = append(all, scores...)
		sum := Summarize(scores)
		figures.Report(t, "%s: %d systems, %d lines: accuracy %.3f precision %.3f recall %.3f mixed %.4f", set, sum.Systems, sum.Lines, sum.Accuracy, sum.Precision, sum.Recall, sum.Mixed)
		floor := accuracyFloor
		if set == "heldout" {
			floor = heldOutFloor
		}
		check(t, set, sum, floor)
	}
	sum := Summarize(all)
	t.Logf("all: %d systems, %d lines: accuracy %.3f precision %.3f recall %.3f mixed %.4f", sum.Systems, sum.Lines, sum.Accuracy, sum.Precision, sum.Recall, sum.Mixed)
	check(t, "all", sum, heldOutFloor)
}

func check(t *testing.T, set string, sum Summary, floor float64) {
	t.Helper()
	if sum.Accuracy < floor {
		t.Errorf("%s: grouping accuracy %.3f below the floor %.3f", set, sum.Accuracy, floor)
	}
	if sum.Mixed > mixedCeiling {
		t.Errorf("%s: %.2f%% of lines in mixed templates, above %.0f%%", set, 100*sum.Mixed, 100*mixedCeiling)
	}
}

// TestEvaluate checks the scoring on a small hand-made grouping.
func TestEvaluate(t *testing.T) {
	lines := []Line{{"a", "x"}, {"a", "x"}, {"b", "y"}, {"c", "y"}, {"d", ""}, {"e", "z"}, {"e", "w"}}
	s := Evaluate(lines, func(s string) string { return s })
	// Correct: both a lines (template x is exactly event a) and d (alone,
	// a template of its own); wrong: b and c (one template), e (two).
	if s.Accuracy != 3.0/7 {
		t.Errorf("accuracy %v, want 3/7", s.Accuracy)
	}
	if s.Mixed != 2.0/7 {
		t.Errorf("mixed %v, want 2/7", s.Mixed)
	}
	// Pairs in one template: (a,a), (b,c): precision 1/2. Pairs of one
	// event: (a,a), (e,e): recall 1/2.
	if s.Precision != 0.5 || s.Recall != 0.5 {
		t.Errorf("precision %v recall %v, want 0.5 and 0.5", s.Precision, s.Recall)
	}
	if s.NoTmpl != 1 {
		t.Errorf("no template %d, want 1", s.NoTmpl)
	}
}
