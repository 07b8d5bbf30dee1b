package testenv

import "testing"

func TestCI(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  bool
	}{{"true", true}, {"", false}, {"false", false}, {"1", false}} {
		t.Setenv("CI", tt.value)
		if got := CI(); got != tt.want {
			t.Errorf("CI=%q: CI() = %v, want %v", tt.value, got, tt.want)
		}
	}
}

// recorder is a testing.TB that records how Missing ended it.
type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }

func TestMissing(t *testing.T) {
	for _, tt := range []struct {
		ci         string
		fail, skip bool
	}{{"true", true, false}, {"", false, true}} {
		t.Setenv("CI", tt.ci)
		r := &recorder{TB: t}
		Missing(r, nil)
		if r.failed != tt.fail || r.skipped != tt.skip {
			t.Errorf("CI=%q: failed %v skipped %v, want %v %v", tt.ci, r.failed, r.skipped, tt.fail, tt.skip)
		}
	}
}
