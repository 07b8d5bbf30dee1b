package fingerprint_test

import (
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
)

// TestFieldCap: the rules read only the first MaxFieldBytes of each field,
// so a huge alert has the fingerprint of its first few KiB (ten alerts of
// 810 KB took 92 s of CPU when every byte was normalized and matched).
func TestFieldCap(t *testing.T) {
	ex, err := fingerprint.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	head := "connection refused to postgres-primary:5432 from checkout-api; "
	tail := strings.Repeat("disk full on /var/lib/postgresql at 10.0.0.1 ", 40_000) // 1.8 MB past the cap
	body := head + strings.Repeat("x", fingerprint.MaxFieldBytes) + tail
	huge := openrecall.Alert{Title: body, Text: body, Labels: map[string]string{"alertname": "PostgresDown", "note": body},
		Annotations: map[string]string{"description": body, "extra": body}}
	capped := func(s string) string { return s[:fingerprint.MaxFieldBytes] }
	small := openrecall.Alert{Title: capped(body), Text: capped(body), Labels: map[string]string{"alertname": "PostgresDown", "note": capped(body)},
		Annotations: map[string]string{"description": capped(body), "extra": capped(body)}}
	got, want := ex.Extract(huge), ex.Extract(small)
	if got != want {
		t.Errorf("huge alert: %s; its first %d bytes per field: %s", got, fingerprint.MaxFieldBytes, want)
	}
}
