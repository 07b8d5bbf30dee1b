package notify_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

// plainSubjectFields is SubjectOf's fields as they were written before
// SubjectFields: a map by field name, every field present. The twin of
// TestSubjectOfEqualsPlain.
func plainSubjectFields(r openrecall.Result) map[string]string {
	status := r.Alert.Status
	if status == "" {
		status = openrecall.StatusFiring
	}
	return map[string]string{
		notify.FieldDecision:      string(r.Decision),
		notify.FieldRoute:         notify.RouteOf(r),
		notify.FieldStatus:        status,
		notify.FieldSeverity:      string(r.Alert.Severity),
		notify.FieldService:       r.Alert.Service,
		notify.FieldEnvironment:   r.Alert.Environment,
		notify.FieldSender:        r.Alert.Sender,
		notify.FieldRule:          r.Identity.Rule,
		notify.FieldAttackPattern: r.Fingerprint.AttackPattern,
	}
}

// plainGet is Subject.Get over the plain map: the field, else the label.
func plainGet(fields, labels map[string]string, name string) string {
	if v, ok := fields[name]; ok {
		return v
	}
	return labels[name]
}

// TestSubjectOfEqualsPlain holds SubjectOf and Subject.Get to the map they
// replace: every field name, labels named like a field or not, and names
// that are neither read the same, NonEmpty is the map's non-empty part, and
// Set writes what Get reads.
func TestSubjectOfEqualsPlain(t *testing.T) {
	r := openrecall.Result{
		Outcome:     openrecall.ResultTriaged,
		Decision:    openrecall.DecisionEscalated,
		Alert:       openrecall.Alert{Severity: "critical", Service: "checkout", Environment: "prod", Sender: "alertmanager", Labels: map[string]string{"team": "db", "severity": "label-sev", "rule": "label-rule", "x": "y"}},
		Identity:    openrecall.Identity{Rule: "HighErrorRate"},
		Fingerprint: openrecall.Fingerprint{AttackPattern: "credential_access"},
	}
	resolved := r
	resolved.Outcome, resolved.Alert.Status, resolved.Fingerprint.AttackPattern = openrecall.ResultResolved, openrecall.StatusResolved, ""
	names := append(notify.Fields(), "team", "x", "missing", "Decision", "")
	for _, tt := range []struct {
		name string
		r    openrecall.Result
	}{{"triaged, firing by default", r}, {"resolved, no attack pattern", resolved}, {"zero", openrecall.Result{}}} {
		t.Run(tt.name, func(t *testing.T) {
			s := notify.SubjectOf(tt.r)
			plain := plainSubjectFields(tt.r)
			for _, name := range names {
				if got, want := s.Get(name), plainGet(plain, tt.r.Alert.Labels, name); got != want {
					t.Errorf("Get(%q) = %q, plain %q", name, got, want)
				}
			}
			want := map[string]string{}
			for k, v := range plain {
				if v != "" {
					want[k] = v
				}
			}
			if diff := cmp.Diff(want, s.Fields.NonEmpty()); diff != "" {
				t.Errorf("NonEmpty (-plain +got):\n%s", diff)
			}
			for i, name := range notify.Fields() {
				v := "set-" + name
				if !s.Fields.Set(name, v) {
					t.Errorf("Set(%q): not a field", name)
				}
				plain[name] = v
				for _, n := range notify.Fields()[:i+1] {
					if got := s.Get(n); got != plain[n] {
						t.Errorf("after Set(%q): Get(%q) = %q, want %q", name, n, got, plain[n])
					}
				}
			}
			if s.Fields.Set("team", "x") {
				t.Error(`Set("team"): a label taken for a field`)
			}
		})
	}
}
