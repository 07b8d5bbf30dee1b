package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// badCase is one input of the bad-input corpus and what analyze must make
// of it.
type badCase struct {
	File     string   `json:"file"`
	Args     []string `json:"args"`
	Exit     int      `json:"exit"`
	Rejected []string `json:"rejected"`
	Triaged  int      `json:"triaged"`
	Resolved int      `json:"resolved"`
	data     []byte
}

// generatedCases are the corpus inputs too big or too binary to keep in
// testdata.
func generatedCases(t *testing.T) []badCase {
	rng := rand.New(rand.NewPCG(9, 9))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var good bytes.Buffer
	for i := 0; good.Len() <= 1<<20; i++ {
		fmt.Fprintf(&good, "{\"id\":\"g%d\",\"title\":\"alert %d %s\"}\n", i, i, strings.Repeat("p", 300))
	}
	goodLines := bytes.Count(good.Bytes(), []byte{'\n'})
	var items []string
	for i := range 3500 {
		items = append(items, fmt.Sprintf(`{"status":"firing","labels":{"alertname":"A%d","severity":"critical","env":"prod","service":"svc%d"},"annotations":{"summary":"disk full on host %d","description":"the disk on host %d is 90%% full"},"startsAt":"2026-11-30T03:42:06Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"%016x"}`, i, i%50, i, i, i+1))
	}
	webhook := []byte(`{"receiver":"x","status":"firing","alerts":[` + strings.Join(items, ",") + `],"version":"4","groupKey":"k"}` + "\n")
	textBeforeNUL := strings.Repeat("disk full on db-1\n", 600) // more than the 8 KiB sniffed
	return []badCase{
		{File: "random 1 MiB", data: random, Exit: 3, Rejected: []string{"line 1"}},
		{File: "the openrecall executable", data: exe, Exit: 3, Rejected: []string{"line 1"}},
		{File: "broken first line, then more than 1 MiB", data: append([]byte("{\"id\":\"x\",\"title\":\"broken\"\n"), good.Bytes()...),
			Exit: 3, Rejected: []string{"line 1"}, Triaged: goodLines},
		{File: "one-line webhook over 1 MiB", data: webhook, Exit: 0, Triaged: 3500},
		{File: "one-line webhook over 1 MiB, forced", data: webhook, Args: []string{"--format", "alertmanager"}, Exit: 0, Triaged: 3500},
		{File: "text line over 1 MiB", data: []byte("a\n" + strings.Repeat("y", 1<<20+1) + "\nc\n"), Exit: 3, Rejected: []string{"line 2"}, Triaged: 2},
		{File: "NUL in a late line", data: []byte(textBeforeNUL + "bad \x00 line\nlast\n"), Exit: 3, Rejected: []string{"line 601"}, Triaged: 601},
	}
}

// TestBadInputCorpus analyzes every input of the corpus with the built
// binary: exit status, the positions of the rejected records, and that
// every good record was triaged (or recorded, when resolved). Nothing
// rejected costs money.
func TestBadInputCorpus(t *testing.T) {
	needBinary(t)
	dir := filepath.Join("testdata", "badinput")
	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct{ Cases []badCase }
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	cases := manifest.Cases
	for i := range cases {
		if cases[i].data, err = os.ReadFile(filepath.Join(dir, cases[i].File)); err != nil {
			t.Fatal(err)
		}
	}
	cases = append(cases, generatedCases(t)...)
	for _, c := range cases {
		t.Run(strings.Join(append([]string{c.File}, c.Args...), " "), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "m.db")
			args := append([]string{"--db", db, "analyze", "-o", "jsonl"}, c.Args...)
			r := runBin(t, c.data, append(args, "-")...)
			if r.code != c.Exit {
				t.Errorf("exit %d, want %d\n%.2000s", r.code, c.Exit, r.stderr)
			}
			rejected := []string{}
			triaged, resolved := 0, 0
			for _, res := range results(t, r.stdout) {
				switch res.Outcome {
				case openrecall.ResultRejected:
					rejected = append(rejected, position(res))
					if res.Error == "" || res.Cost != 0 || len(res.Audit) != 1 {
						t.Errorf("%s: rejected record: reason %q, cost %d, %d audit entries; want a reason, no cost, one entry", position(res), res.Error, res.Cost, len(res.Audit))
					}
				case openrecall.ResultTriaged:
					triaged++
					if res.Decision == "" {
						t.Errorf("%s: triaged without a decision", position(res))
					}
				case openrecall.ResultResolved:
					resolved++
				}
			}
			if c.Rejected == nil {
				c.Rejected = []string{}
			}
			if diff := cmp.Diff(c.Rejected, rejected); diff != "" {
				t.Errorf("rejected positions (-want +got):\n%s", diff)
			}
			if triaged != c.Triaged || resolved != c.Resolved {
				t.Errorf("%d triaged and %d resolved, want %d and %d", triaged, resolved, c.Triaged, c.Resolved)
			}
			for _, pos := range c.Rejected {
				if !strings.Contains(r.stderr, pos+":") {
					t.Errorf("stderr does not report the rejection at %s:\n%.1000s", pos, r.stderr)
				}
			}
		})
	}
}
