package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

func exportAll(t *testing.T, s *Store) (string, int) {
	t.Helper()
	var buf bytes.Buffer
	n, err := s.Export(context.Background(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.String(), n
}

func seedFamily(t *testing.T, s *Store) []openrecall.Incident {
	t.Helper()
	var out []openrecall.Incident
	for i, inc := range []openrecall.Incident{
		{Fingerprint: fpOf("tls_handshake", "api_edge", "", "spike", "", "prod"), Decision: openrecall.DecisionKnownBenign,
			Note: "cert rotation window", DeadEnds: []string{"checked LB"}, Analyst: "ana", SourceAlertID: "a1",
			Identity: openrecall.Identity{Rule: "TLSHandshakeErrors", Service: "edge"}, Severity: openrecall.SeverityHigh,
			ExpiresAt: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Fingerprint: fpOf("timeout", "db_primary", "database", "sustained", "", "prod"), Decision: openrecall.DecisionReal,
			Note: "vacuum storm", ImpactMinutes: 17},
		{Fingerprint: fpOf("auth_failure", "auth_service", "identity_provider", "spike", "brute_force", "prod"),
			Decision: openrecall.DecisionReal, Note: "credential attack \u00e9t\u00e9"},
	} {
		inc.CreatedAt = time.Date(2026, 4, 1, 0, 0, 3-i, 5, time.UTC)
		out = append(out, mustRetain(t, s, inc))
	}
	return out
}

func TestExportImportRoundTrip(t *testing.T) {
	src := openTemp(t)
	seeded := seedFamily(t, src)
	if _, _, err := src.Forget(context.Background(), seeded[1].ID); err != nil {
		t.Fatal(err)
	}
	text, n := exportAll(t, src)
	for _, want := range []string{`"identity":{"rule":"TLSHandshakeErrors","service":"edge"}`, `"severity":"high"`, `"expires_at":"2027-01-01T00:00:00Z"`, `"forgotten_at":`} {
		if !strings.Contains(text, want) {
			t.Errorf("export lacks %s:\n%s", want, text)
		}
	}
	if n != len(seeded) {
		t.Fatalf("Export wrote %d, want %d", n, len(seeded))
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var first openrecall.Incident
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.ID != seeded[2].ID {
		t.Errorf("first exported incident is %s, want the oldest %s", first.ID, seeded[2].ID)
	}

	dst := openAt(t, filepath.Join(t.TempDir(), "fresh", "memory.db"))
	rep, err := dst.Import(context.Background(), strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ImportReport{Read: 3, Created: 3}, rep); diff != "" {
		t.Errorf("Import report (-want +got):\n%s", diff)
	}
	again, _ := exportAll(t, dst)
	if again != text {
		t.Errorf("export of the imported copy differs:\n%s\nwant:\n%s", again, text)
	}
	rep, err = dst.Import(context.Background(), strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ImportReport{Read: 3, Existing: 3}, rep); diff != "" {
		t.Errorf("second Import report (-want +got):\n%s", diff)
	}
}

func TestImportBadLines(t *testing.T) {
	s := openTemp(t)
	seeded := seedFamily(t, s)
	before, _ := exportAll(t, s)

	good := `{"fingerprint":{"error_class":"dns_failure","environment":"dev"},"decision":"false_positive","note":"resolver flap"}`
	// A line that looks like the first seeded incident but tries to change
	// its analyst: same content, so it is the same record and stays as is.
	same := strings.Replace(strings.Split(before, "\n")[2], `"ana"`, `"mallory"`, 1)
	input := strings.Join([]string{
		good,
		`{"fingerprint":{"error_class":"dns_failure"},"decision":"escalated"}`,
		``,
		`not json at all`,
		`{"fingerprint":{"error_class":"DNS Failure"},"decision":"real"}`,
		`["an","array"]`,
		same,
		`{"fingerprint":{},"decision":"real","business_impact_minutes":-5}`,
		`{"fingerprint":{},"decision":"real"} {"extra":1}`,
		`{"fingerprint":{"error_class":"timeout"},"decision":"duplicate","note":"unterminated"`,
		`   `,
		strings.Replace(good, "resolver flap", "RESOLVER   flap", 1),
		`{"fingerprint":{"service_role":"cache"},"decision":"known_benign","note":"last line without newline"}`,
	}, "\n")
	rep, err := s.Import(context.Background(), strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	wantLines := []int{2, 4, 5, 6, 8, 9, 10}
	var gotLines []int
	for _, r := range rep.Rejected {
		gotLines = append(gotLines, r.Line)
		if r.Reason == "" {
			t.Errorf("line %d rejected without a reason", r.Line)
		}
	}
	if diff := cmp.Diff(wantLines, gotLines); diff != "" {
		t.Errorf("rejected lines (-want +got):\n%s\nreport: %+v", diff, rep)
	}
	if rep.Read != 11 || rep.Created != 2 || rep.Existing != 2 {
		t.Errorf("report = read %d created %d existing %d, want 11, 2, 2", rep.Read, rep.Created, rep.Existing)
	}
	got, err := s.Get(context.Background(), seeded[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seeded[0], got); diff != "" {
		t.Errorf("import altered a stored incident (-before +after):\n%s", diff)
	}
	if n := countIncidents(t, s); n != 5 {
		t.Errorf("stored %d incidents, want 5", n)
	}
	for _, want := range []string{"escalated", "canonical token", "negative"} {
		found := false
		for _, r := range rep.Rejected {
			found = found || strings.Contains(r.Reason, want)
		}
		if !found {
			t.Errorf("no rejection reason mentions %q: %+v", want, rep.Rejected)
		}
	}
}

func TestImportLongLine(t *testing.T) {
	s := openTemp(t)
	long := `{"fingerprint":{},"decision":"real","note":"` + strings.Repeat("x", MaxRecordBytes) + `"}`
	input := long + "\n" + `{"fingerprint":{},"decision":"real","note":"short"}` + "\n"
	rep, err := s.Import(context.Background(), strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	want := ImportReport{Read: 2, Created: 1, Rejected: []RecordError{{Line: 1, Reason: "record longer than 1048576 bytes"}}}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func TestImportManyAcrossBatches(t *testing.T) {
	s := openTemp(t)
	var b strings.Builder
	const n = importBatch*2 + 17
	for i := 0; i < n; i++ {
		inc := openrecall.Incident{Fingerprint: fpOf("timeout", "cache", "", "", "", "prod"), Decision: openrecall.DecisionDuplicate,
			Note: strings.Repeat("n", i%7) + string(rune('a'+i%26)), SourceAlertID: "alert-" + strings.Repeat("9", i%3) + string(rune('A'+i%26)) + "-" + itoa(i)}
		line, _ := json.Marshal(inc)
		b.Write(line)
		b.WriteByte('\n')
	}
	rep, err := s.Import(context.Background(), strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read != n || rep.Created != n || len(rep.Rejected) != 0 {
		t.Errorf("report %+v, want %d read and created", rep, n)
	}
	if got := countIncidents(t, s); got != n {
		t.Errorf("stored %d, want %d", got, n)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
