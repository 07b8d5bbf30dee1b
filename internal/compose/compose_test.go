package compose_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/triage"
)

// TestShadowGuardKeepsTheReason holds that the shadow guard never bypasses
// and says, in its reason, what the guard would have done and why.
func TestShadowGuardKeepsTheReason(t *testing.T) {
	fp := openrecall.Fingerprint{ErrorClass: "disk_full"}
	tr := openrecall.TriageResult{Decision: openrecall.DecisionKnownBenign, Confidence: 1, Consistency: 1,
		StrongCount: 3, ConsistentCount: 3, AlertSeverity: openrecall.SeverityLow, SupportSeverity: openrecall.SeverityLow}
	cfg := triage.DefaultConfig()
	want := triage.Guard(fp, tr, cfg)
	if !want.Bypass {
		t.Fatalf("setup: the product's guard does not bypass: %+v", want)
	}
	got := compose.ShadowGuard(fp, tr, cfg)
	if got.Bypass {
		t.Fatalf("shadow guard bypassed: %+v", got)
	}
	if !strings.HasPrefix(got.Reason, "shadow mode") || !strings.Contains(got.Reason, want.Reason) {
		t.Errorf("shadow reason %q drops the guard's %q", got.Reason, want.Reason)
	}
}

// TestRootIsComplete holds that the use cases a root builds have every
// store and hook the commands use, and that its sink seals with the
// root's sealer.
func TestRootIsComplete(t *testing.T) {
	ctx := context.Background()
	st, err := memory.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := fingerprint.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := audit.NewKey(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	root := compose.Open(cfg, st, nil, nil, compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(audit.NewSealer(k))), compose.Continue())
	uc := root.UseCases
	switch {
	case uc.Store == nil, uc.Groups == nil, uc.Exceptions == nil, uc.Waiting == nil, uc.Archives == nil:
		t.Errorf("use cases miss a store: %+v", uc)
	case uc.Audit == nil, uc.Expiries == nil, uc.ReadTrail == nil, uc.ReadTrailPrefix == nil, uc.Now == nil:
		t.Errorf("use cases miss a hook: %+v", uc)
	case uc.Fingerprinter == nil:
		t.Error("use cases miss the fingerprinter")
	case uc.ExceptionRules.MaxExpiry != cfg.Exceptions.MaxExpiry:
		t.Errorf("exception rules %+v, want the configuration's %s", uc.ExceptionRules, cfg.Exceptions.MaxExpiry)
	}
	sink, err := root.Sink(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sink.Store != st || sink.Seal == nil || sink.SealCosts == nil || sink.Waits == nil || !sink.Continue {
		t.Errorf("sink %+v is not the product's", sink)
	}
	if _, err := compose.Open(cfg, st, nil, nil).Sink(ctx); err == nil {
		t.Error("a root without a sealer made a sink")
	}
}
