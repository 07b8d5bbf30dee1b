package openrecall

import "testing"

func TestIdentity(t *testing.T) {
	tests := []struct {
		id       Identity
		zero     bool
		str      string
		emptyKey bool
	}{
		{Identity{}, true, "-", true},
		{Identity{Service: "checkout"}, true, "-", true},
		{Identity{Rule: "KubePodCrashLooping"}, false, "KubePodCrashLooping", false},
		{Identity{Rule: "HighErrorRate", Service: "checkout-api"}, false, "HighErrorRate @ checkout-api", false},
	}
	for _, tt := range tests {
		if got := tt.id.IsZero(); got != tt.zero {
			t.Errorf("%#v.IsZero() = %v, want %v", tt.id, got, tt.zero)
		}
		if got := tt.id.String(); got != tt.str {
			t.Errorf("%#v.String() = %q, want %q", tt.id, got, tt.str)
		}
		if got := tt.id.Key(); (got == "") != tt.emptyKey || (got != "" && len(got) != 16) {
			t.Errorf("%#v.Key() = %q", tt.id, got)
		}
	}
	// The separator keeps ("ab", "c") and ("a", "bc") apart.
	if (Identity{Rule: "ab", Service: "c"}).Key() == (Identity{Rule: "a", Service: "bc"}).Key() {
		t.Error("identity keys collide across the rule/service boundary")
	}
}
