package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake/sender"
)

// senderFixtures is where each sender's fixtures live: one folder per
// sender, named as the sender, holding its payloads (*.json, one payload a
// file, as the sender posts it), an ATTRIBUTION file naming each payload's
// origin and licence, identity.json naming the pairs of fixtures that are
// one alert ("same") and two ("different"), and golden.json, what they read
// as (rewritten with -update).
const senderFixtures = "testdata/senders"

// senderGolden is what one alert of a fixture reads as.
type senderGolden struct {
	Title       string            `json:"title"`
	Severity    string            `json:"severity"`
	Service     string            `json:"service,omitempty"`
	Environment string            `json:"environment,omitempty"`
	Rule        string            `json:"rule,omitempty"`
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Sender      string            `json:"sender"`
	Security    bool              `json:"security,omitempty"`
	Episode     bool              `json:"episode,omitempty"`
	Identity    string            `json:"identity"`
	Entities    map[string]string `json:"entities,omitempty"`
	Origin      map[string]string `json:"origin,omitempty"`
	Links       map[string]string `json:"links,omitempty"`
	TextPrefix  string            `json:"text_prefix,omitempty"`
}

type senderGoldenFile struct {
	Fixture string         `json:"fixture"`
	Alerts  []senderGolden `json:"alerts"`
}

// identityPairs is a sender folder's identity.json.
type identityPairs struct {
	Same      [][2]string `json:"same"`
	Different [][2]string `json:"different"`
}

// senderDirs returns the sender folders under testdata/senders.
func senderDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(senderFixtures)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// senderPayloads returns the fixture file names of a sender folder.
func senderPayloads(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(senderFixtures, dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		base := filepath.Base(n)
		if base != "golden.json" && base != "identity.json" {
			out = append(out, base)
		}
	}
	return out
}

// TestSenderFixtures reads every sender's fixtures as a file, as a JSON
// Lines line and forced by the sender's name, and holds each to its golden
// reading: no record rejected, every alert read by the folder's sender,
// its payload recognised by that sender alone, and the identity pairs of
// identity.json equal and distinct as stated.
func TestSenderFixtures(t *testing.T) {
	ex, err := fingerprint.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	all := sender.All()
	for _, dir := range senderDirs(t) {
		t.Run(dir, func(t *testing.T) {
			s, ok := sender.Lookup(dir)
			if !ok {
				t.Fatalf("testdata/senders/%s names no sender", dir)
			}
			if _, err := os.Stat(filepath.Join(senderFixtures, dir, "ATTRIBUTION")); err != nil {
				t.Errorf("no ATTRIBUTION file: every fixture names its origin and licence")
			}
			payloads := senderPayloads(t, dir)
			if len(payloads) < 3 {
				t.Errorf("%d fixtures: want the sender's own payloads plus a second firing on another host and another check", len(payloads))
			}
			var goldens []senderGoldenFile
			identities := map[string]openrecall.Identity{}
			for _, name := range payloads {
				body, err := os.ReadFile(filepath.Join(senderFixtures, dir, name))
				if err != nil {
					t.Fatal(err)
				}
				recs := readAll(t, string(body), Options{Source: name})
				g := senderGoldenFile{Fixture: name}
				for _, rec := range recs {
					if rec.Err != nil {
						t.Errorf("%s: rejected: %v", name, rec.Err)
						continue
					}
					a := rec.Alert
					if a.Sender != s.Name {
						t.Errorf("%s: read by sender %q, want %q", name, a.Sender, s.Name)
					}
					id := ex.Identify(a)
					if len(g.Alerts) == 0 {
						identities[name] = id
					}
					g.Alerts = append(g.Alerts, goldenOf(a, id))
				}
				goldens = append(goldens, g)
				if !s.Builtin {
					v, err := sender.Parse(body)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					var matched []string
					for _, other := range all {
						if other.Match != nil && other.Match(v) {
							matched = append(matched, other.Name)
						}
					}
					if len(matched) != 1 || (matched[0] != s.Name && matched[0] != "sns") {
						t.Errorf("%s: recognised by %v, want by %s alone", name, matched, s.Name)
					}
				}
				// The same payload as one JSON Lines line, after another
				// record, reads the same.
				var line bytes.Buffer
				if err := json.Compact(&line, body); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				lines := readAll(t, "{\"title\":\"first\"}\n"+line.String()+"\n", Options{})
				got := rows(lines[1:])
				for i := range got {
					got[i].Format = ""
				}
				if !cmp.Equal(got, rowsNoPos(recs, 2)) {
					t.Errorf("%s as a JSON Lines line reads otherwise (-file +line):\n%s", name, cmp.Diff(rowsNoPos(recs, 2), got))
				}
				if !s.Builtin {
					forced := readAll(t, string(body), Options{Format: Format(s.Name), Source: name})
					if diff := cmp.Diff(rows(recs), rows(forced)); diff != "" {
						t.Errorf("%s forced as %s reads otherwise (-detected +forced):\n%s", name, s.Name, diff)
					}
				}
			}
			checkSenderGolden(t, dir, goldens)
			checkIdentityPairs(t, dir, identities)
		})
	}
}

// rowsNoPos is rows with every position moved to line.
func rowsNoPos(recs []Record, line int) []row {
	out := rows(recs)
	for i := range out {
		p := recs[i].Position()
		p.Source, p.Line = "", line
		out[i].Pos = p.String()
		out[i].Format = ""
	}
	return out
}

func goldenOf(a openrecall.Alert, id openrecall.Identity) senderGolden {
	g := senderGolden{
		Title: a.Title, Severity: string(a.Severity), Service: a.Service, Environment: a.Environment,
		Rule: a.Rule, ID: a.ID, Status: a.Status, Sender: a.Sender, Security: a.Security, Episode: a.Episode,
		Identity: id.String(), Entities: a.Entities, Origin: a.Origin, Links: a.Links,
	}
	g.TextPrefix = a.Text
	if len(g.TextPrefix) > 200 {
		g.TextPrefix = strings.ToValidUTF8(g.TextPrefix[:200], "")
	}
	return g
}

// checkGoldenJSON compares goldens, indented JSON, with the file at path
// (written first under -update); test names the test that writes it.
func checkGoldenJSON(t *testing.T, path, test string, goldens any) {
	t.Helper()
	got, err := json.MarshalIndent(goldens, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./intake -run %s -update to create it)", err, test)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func checkSenderGolden(t *testing.T, dir string, goldens []senderGoldenFile) {
	t.Helper()
	checkGoldenJSON(t, filepath.Join(senderFixtures, dir, "golden.json"), "TestSenderFixtures", goldens)
	for _, g := range goldens {
		for _, a := range g.Alerts {
			if a.Status != openrecall.StatusFiring {
				continue
			}
			if strings.TrimSpace(a.Title) == "" || strings.HasPrefix(a.Title, "{") {
				t.Errorf("%s: title %q: want the human title the sender shows", g.Fixture, a.Title)
			}
			if a.Identity == "-" {
				t.Errorf("%s: a firing sender alert without identity", g.Fixture)
			}
			if strings.ContainsAny(a.Service, "{}$") {
				t.Errorf("%s: service %q is an unrendered template", g.Fixture, a.Service)
			}
		}
	}
}

func checkIdentityPairs(t *testing.T, dir string, ids map[string]openrecall.Identity) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(senderFixtures, dir, "identity.json"))
	if err != nil {
		t.Fatalf("identity.json: %v: name a second firing of a check on another host (same) and another check (different)", err)
	}
	var pairs identityPairs
	if err := json.Unmarshal(body, &pairs); err != nil {
		t.Fatalf("identity.json: %v", err)
	}
	if len(pairs.Same) == 0 || len(pairs.Different) == 0 {
		t.Errorf("identity.json: want at least one same and one different pair")
	}
	lookup := func(name string) openrecall.Identity {
		id, ok := ids[name]
		if !ok {
			t.Errorf("identity.json names %s, which is no fixture of %s with an alert", name, dir)
		}
		return id
	}
	for _, p := range pairs.Same {
		a, b := lookup(p[0]), lookup(p[1])
		if a != b || a.IsZero() {
			t.Errorf("%s and %s: identities %q and %q, want one (the same check on another host)", p[0], p[1], a, b)
		}
	}
	for _, p := range pairs.Different {
		a, b := lookup(p[0]), lookup(p[1])
		if a == b {
			t.Errorf("%s and %s: both %q, want two identities (two checks)", p[0], p[1], a)
		}
	}
}

// TestSenderLevels holds every sender to its documented severity scale:
// no documented value reads as unknown.
func TestSenderLevels(t *testing.T) {
	for _, s := range sender.All() {
		if s.Severity == nil && len(s.Levels) > 0 && !s.Builtin {
			t.Errorf("%s documents levels but maps none", s.Name)
		}
		for _, l := range s.Levels {
			sev := NormalizeSeverity(l)
			if s.Severity != nil {
				sev = s.Severity(l)
			}
			if sev == openrecall.SeverityUnknown || !sev.Valid() {
				t.Errorf("%s: documented severity %q reads as %q", s.Name, l, sev)
			}
		}
	}
}

// TestSenderRegistry checks the registry: unique names that are URL path
// segments, documentation for every sender, a fixture folder for every one.
func TestSenderRegistry(t *testing.T) {
	seen := map[string]bool{}
	dirs := senderDirs(t)
	for _, s := range sender.All() {
		if seen[s.Name] {
			t.Errorf("sender %q twice", s.Name)
		}
		seen[s.Name] = true
		if s.Name != strings.ToLower(s.Name) || strings.ContainsAny(s.Name, " /?#") {
			t.Errorf("sender name %q is no lowercase path segment", s.Name)
		}
		if !s.Builtin && (s.Match == nil || s.Map == nil) {
			t.Errorf("%s: an adapter needs Match and Map", s.Name)
		}
		if s.Doc.Point == "" || s.Doc.Title == "" || s.Doc.Rule == "" || s.Doc.ID == "" {
			t.Errorf("%s: Doc must say how to point it and where title, rule and id come from", s.Name)
		}
		if s.Name != "openrecall" && !slices.Contains(dirs, s.Name) {
			t.Errorf("%s has no fixtures under %s/%s", s.Name, senderFixtures, s.Name)
		}
	}
}

// senderTable renders the README's table of senders from the registry:
// how to point each at openrecall and where each part of its alerts comes
// from. TestREADMESenders holds README.md to it (-update rewrites it).
func senderTable() string {
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "|", `\|`)
		return strings.Join(strings.Fields(s), " ")
	}
	var b strings.Builder
	b.WriteString("| sender | point it at | auth | title | severity | service | rule | id |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range sender.All() {
		name := s.Display
		if s.Security {
			name += " (security)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(name), cell(s.Doc.Point), cell(s.Doc.Auth),
			cell(s.Doc.Title), cell(s.Doc.Severity), cell(s.Doc.Service), cell(s.Doc.Rule), cell(s.Doc.ID))
	}
	return b.String()
}

// TestREADMESenders checks that README.md's table of senders is the
// registry's (between the senders:begin and senders:end markers).
func TestREADMESenders(t *testing.T) {
	const path = "../README.md"
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- senders:begin (generated by go test ./intake -run TestREADMESenders -update) -->\n", "<!-- senders:end -->"
	s := string(body)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the senders markers")
	}
	want := s[:i+len(begin)] + senderTable() + s[j:]
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != s {
		t.Errorf("README.md's table of senders is not the registry's: run go test ./intake -run TestREADMESenders -update")
	}
}

// TestGenericRules: a JSON object of the product's own content with other
// members takes its rule from a documented rule key, exactly as sent, and
// two such alerts that differ only in the rule are two alerts (ids and
// identities); an object no sender claims and that names no rule has no
// identity, so memory never vouches for it (DESIGN §3).
func TestGenericRules(t *testing.T) {
	ex, err := fingerprint.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, `{"title": "CPU high on web-2", "rule": "HighCPU-1", "severity": "high"}
{"title": "CPU high on web-2", "rule": "HighCPU-2", "severity": "high"}
{"check": "nightly-export", "state": "failed", "host": "etl-3"}
{"state": "failed", "host": "etl-3", "attempt": 3}
`, Options{})
	var ids []string
	var identities []openrecall.Identity
	for _, r := range recs {
		if r.Err != nil {
			t.Fatalf("rejected: %v", r.Err)
		}
		ids = append(ids, r.Alert.ID)
		identities = append(identities, ex.Identify(r.Alert))
	}
	if ids[0] == ids[1] || identities[0] == identities[1] {
		t.Errorf("two rules read as one alert: ids %v, identities %v", ids[:2], identities[:2])
	}
	if identities[0].Rule != "HighCPU-1" || identities[2].Rule != "nightly-export" {
		t.Errorf("rules %q and %q, want the rule keys' values exactly", identities[0].Rule, identities[2].Rule)
	}
	if !identities[3].IsZero() || recs[3].Alert.Sender != openrecall.SenderGeneric {
		t.Errorf("an object naming no rule: identity %q, sender %q; want none, %q", identities[3], recs[3].Alert.Sender, openrecall.SenderGeneric)
	}
	if recs[3].Alert.Title == "" || !strings.Contains(recs[3].Alert.Text, "attempt: 3") {
		t.Errorf("generic reading lost the fields: title %q, text %q", recs[3].Alert.Title, recs[3].Alert.Text)
	}
}
