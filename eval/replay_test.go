package eval

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/usecase"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestDecisionsToVouch(t *testing.T) {
	tests := []struct {
		conf float64
		want int
	}{
		{0.85, 5}, {0.75, 2}, {0.5, 1}, {0.9, 8}, {1, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.conf), func(t *testing.T) {
			if got := DecisionsToVouch(tt.conf); got != tt.want {
				t.Errorf("DecisionsToVouch(%v) = %d, want %d", tt.conf, got, tt.want)
			}
		})
	}
}

// oomLine is one alert of a benign family, varied by i.
func oomLine(i int) string {
	return fmt.Sprintf(`{"id":"oom-%d","title":"Container report-worker in pod report-batch-worker-abcde%dfgh-x2x9z was OOMKilled","text":"Memory usage spiked to 3.9%dGiB (limit 4GiB) during the nightly aggregation run.","labels":{"alertname":"KubeContainerOOMKilled"},"severity":"medium","service":"report-batch-worker","environment":"prod"}`, i, i%10, i%10)
}

func truthLine(line int, id, family string, kind Kind, d openrecall.Decision) Truth {
	return Truth{Line: line, ID: id, Family: family, Kind: kind, Decision: d, Note: "test note", DeadEnds: []string{"restarting"}}
}

// TestReplayLearningLoop drives eight repeats of one benign family and an
// attack dressed as it: memory learns only from the analyst, the first five
// repeats go to a model, the next three are bypassed and count towards
// recall, and the attack is not bypassed.
func TestReplayLearningLoop(t *testing.T) {
	var alerts []string
	var truth []Truth
	for i := 1; i <= 8; i++ {
		alerts = append(alerts, oomLine(i))
		truth = append(truth, truthLine(i, fmt.Sprintf("oom-%d", i), "batch-oom", KindBenignRepeat, openrecall.DecisionKnownBenign))
	}
	alerts = append(alerts, `{"id":"oom-attack","title":"Container report-worker in pod report-batch-worker-abcdefgh1-x2x9z was OOMKilled","text":"Memory spiked: a cryptominer process (xmrig) was found in the container.","labels":{"alertname":"KubeContainerOOMKilled"},"severity":"medium","service":"report-batch-worker","environment":"prod"}`)
	truth = append(truth, truthLine(9, "oom-attack", "batch-oom", KindDisguisedAttack, openrecall.DecisionReal))
	c := Corpus{Name: "loop", Alerts: []byte(strings.Join(alerts, "\n") + "\n"), Truth: truth}

	p := newPipeline(t, false)
	rep, err := Replay(context.Background(), c, p.config())
	if err != nil {
		t.Fatal(err)
	}
	fam := rep.ByFamily[0].Stats
	// The first repeat meets an empty memory: medium severity, so the
	// strong model escalates it; the next four follow memory's proposal.
	want := Stats{Alerts: 9, Bypassed: 3, Eligible: 3, EligibleBypassed: 3, Correct: 8, Escalated: 1}
	got := Stats{Alerts: fam.Alerts, Bypassed: fam.Bypassed, Eligible: fam.Eligible, EligibleBypassed: fam.EligibleBypassed, Correct: fam.Correct, Escalated: fam.Escalated}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("family stats (-want +got):\n%s", diff)
	}
	if rep.Retained != 6 {
		t.Errorf("retained %d analyst decisions, want 6 (5 repeats + the attack; bypassed alerts are never retained)", rep.Retained)
	}
	st, err := p.st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Incidents != 6 {
		t.Errorf("memory holds %d incidents, want 6", st.Incidents)
	}
	if !rep.Safe() || rep.Err() != nil {
		t.Errorf("safe pipeline reported false bypasses: %v", rep.FalseBypasses)
	}
	if rep.Overall.BypassRecall() != 1 {
		t.Errorf("bypass recall %v, want 1", rep.Overall.BypassRecall())
	}
}

// TestReplayPages counts the replay's pages: an Alertmanager notification
// of three firings (line 1) is one page without openrecall, and lines 2
// and 3 one each. A route that sends every result somewhere avoids none
// and writes one notification per firing; the default paging route is
// named as such.
func TestReplayPages(t *testing.T) {
	item := func(name string) string {
		return `{"status":"firing","labels":{"alertname":"` + name + `","service":"checkout","severity":"critical"},"startsAt":"2026-11-30T03:00:00Z"}`
	}
	alerts := `{"receiver":"team","status":"firing","version":"4","groupKey":"{}:{service=\"checkout\"}","alerts":[` +
		item("CheckoutErrors") + "," + item("CheckoutLatency") + "," + item("CheckoutSaturation") + "]}\n" + oomLine(1) + "\n" + oomLine(2) + "\n"
	var truth []Truth
	for i := range 3 {
		tr := truthLine(1, "", "checkout", KindNovelReal, openrecall.DecisionReal)
		tr.Item = &i
		truth = append(truth, tr)
	}
	truth = append(truth, truthLine(2, "oom-1", "batch-oom", KindBenignRepeat, openrecall.DecisionKnownBenign),
		truthLine(3, "oom-2", "batch-oom", KindBenignRepeat, openrecall.DecisionKnownBenign))
	c := Corpus{Name: "pages", Alerts: []byte(alerts), Truth: truth}
	tests := []struct {
		name      string
		route     *notify.Route
		wantRoute string
		want      func(notify.Pages) notify.Pages
	}{
		{"every result notifies", &notify.Route{Receiver: "all"}, "configured", func(notify.Pages) notify.Pages {
			return notify.Pages{Firings: 5, Without: 3, With: 5, Notifications: 5}
		}},
		// What triage decides is the pipeline's: hold the counts that do
		// not depend on it.
		{"default paging route", nil, "default", func(got notify.Pages) notify.Pages {
			return notify.Pages{Firings: 5, Without: 3, With: got.Notifications, Notifications: got.Notifications}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := newPipeline(t, false).config()
			cfg.Route = tt.route
			rep, err := Replay(context.Background(), c, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want(rep.Pages), rep.Pages); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
			if rep.PagesRoute != tt.wantRoute {
				t.Errorf("pages route = %q, want %q", rep.PagesRoute, tt.wantRoute)
			}
		})
	}
}

// TestReplayUnsafeGuard is the acceptance test: a guard that approves every
// bypass, with a router that honours it, makes the replay report false
// bypasses, each a security case or a real incident; the product's guard
// on the same corpus reports none.
func TestReplayUnsafeGuard(t *testing.T) {
	c := mustGenerate(t, 11, 400)
	tests := []struct {
		name   string
		unsafe bool
	}{
		{"product guard", false},
		{"unsafe guard", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipeline(t, tt.unsafe)
			rep, err := Replay(context.Background(), c, p.config())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Safe() == tt.unsafe {
				t.Fatalf("Safe() = %v with %d false bypasses, want %v", rep.Safe(), rep.Overall.FalseBypasses, !tt.unsafe)
			}
			if !tt.unsafe {
				return
			}
			if rep.Err() == nil || !strings.Contains(rep.Err().Error(), "false bypass") {
				t.Errorf("Err() = %v, want a false-bypass error", rep.Err())
			}
			if len(rep.FalseBypasses) != rep.Overall.FalseBypasses {
				t.Errorf("%d false bypasses listed, %d counted", len(rep.FalseBypasses), rep.Overall.FalseBypasses)
			}
			security := 0
			for _, fb := range rep.FalseBypasses {
				if fb.Truth != openrecall.DecisionReal && !fb.Kind.Security() {
					t.Errorf("false bypass %+v is neither real nor a security case", fb)
				}
				if fb.Kind.Security() {
					security++
				}
			}
			if security == 0 {
				t.Error("the unsafe guard bypassed no security case; the corpus should hold attacks it lets through")
			}
			if rep.Targets[0].Met {
				t.Error("false_bypasses target met despite false bypasses")
			}
		})
	}
}

func TestReplayMismatch(t *testing.T) {
	two := oomLine(1) + "\n" + oomLine(2) + "\n"
	item0 := 0
	good := []Truth{
		truthLine(1, "oom-1", "f", KindBenignRepeat, openrecall.DecisionKnownBenign),
		truthLine(2, "oom-2", "f", KindBenignRepeat, openrecall.DecisionKnownBenign),
	}
	tests := []struct {
		name  string
		truth []Truth
		want  string
	}{
		{"fewer truth lines", good[:1], "truth.jsonl has only 1 lines"},
		{"more truth lines", append(append([]Truth{}, good...), truthLine(3, "", "f", KindBenignRepeat, openrecall.DecisionKnownBenign)), "entry 3 (line 3) has no alert"},
		{"wrong line", []Truth{good[0], truthLine(3, "", "f", KindBenignRepeat, openrecall.DecisionKnownBenign)}, "entry 2 is for line 3, but the next alert of alerts.jsonl is at alerts.jsonl: line 2"},
		{"item on a plain line", []Truth{{Line: 1, Item: &item0, Family: "f", Kind: KindBenignRepeat, Decision: openrecall.DecisionKnownBenign}, good[1]}, "entry 1 is for line 1, item 0"},
		{"wrong id", []Truth{good[0], truthLine(2, "oom-9", "f", KindBenignRepeat, openrecall.DecisionKnownBenign)}, `names alert "oom-9", but the alert at alerts.jsonl: line 2 has id "oom-2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipeline(t, false)
			_, err := Replay(context.Background(), Corpus{Alerts: []byte(two), Truth: tt.truth}, p.config())
			if !errors.Is(err, ErrMismatch) {
				t.Fatalf("err = %v, want ErrMismatch", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestReplayRejectedRecord: a record intake refuses is reported and
// skipped, with or without a truth line of its own, and the rest replays.
func TestReplayRejectedRecord(t *testing.T) {
	alerts := oomLine(1) + "\n{\"title\": 12\n" + oomLine(3) + "\n"
	base := []Truth{
		truthLine(1, "oom-1", "f", KindBenignRepeat, openrecall.DecisionKnownBenign),
		truthLine(3, "oom-3", "f", KindBenignRepeat, openrecall.DecisionKnownBenign),
	}
	withBad := []Truth{base[0], truthLine(2, "", "f", KindBenignRepeat, openrecall.DecisionKnownBenign), base[1]}
	for name, truth := range map[string][]Truth{"no truth line": base, "truth line": withBad} {
		t.Run(name, func(t *testing.T) {
			p := newPipeline(t, false)
			rep, err := Replay(context.Background(), Corpus{Alerts: []byte(alerts), Truth: truth}, p.config())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rejected != 1 || rep.Overall.Alerts != 2 || len(rep.Rejections) != 1 || rep.Rejections[0].Position.Line != 2 {
				t.Errorf("rejected %d, alerts %d, rejections %+v; want 1 rejection at line 2 and 2 alerts", rep.Rejected, rep.Overall.Alerts, rep.Rejections)
			}
		})
	}
}

func TestReadTruthErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unknown kind", `{"line":1,"item":null,"family":"f","kind":"noise","decision":"known_benign"}`, `line 1: kind "noise"`},
		{"attack called benign", `{"line":1,"item":null,"family":"f","kind":"attack","decision":"known_benign"}`, "line 1: kind attack with decision known_benign"},
		{"repeat called real", "\n" + `{"line":1,"item":null,"family":"f","kind":"benign_repeat","decision":"real"}`, "line 2: kind benign_repeat with decision real"},
		{"escalated is no truth", `{"line":1,"item":null,"family":"f","kind":"ambiguous","decision":"escalated"}`, `decision "escalated"`},
		{"no family", `{"line":1,"item":null,"family":" ","kind":"ambiguous","decision":"real"}`, "family is empty"},
		{"unknown field", `{"line":1,"item":null,"family":"f","kind":"ambiguous","decision":"real","truth":"x"}`, `line 1: json: unknown field "truth"`},
		{"bad line", `{"line":0,"item":null,"family":"f","kind":"ambiguous","decision":"real"}`, "line 0: want a 1-based line"},
		{"empty", "\n\n", "no truth lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadTruth(strings.NewReader(tt.in))
			if !errors.Is(err, openrecall.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestCorpusRoundTrip(t *testing.T) {
	c := mustGenerate(t, 5, 120)
	dir := filepath.Join(t.TempDir(), "corpus")
	if err := c.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Alerts, c.Alerts) {
		t.Error("alerts changed on the round trip")
	}
	if diff := cmp.Diff(c.Truth, got.Truth); diff != "" {
		t.Errorf("truth changed on the round trip (-want +got):\n%s", diff)
	}
	if lines(c.Alerts) >= len(c.Truth) {
		t.Errorf("%d lines for %d alerts: no webhook groups several alerts", lines(c.Alerts), len(c.Truth))
	}
	if _, err := ReadDir(t.TempDir()); err == nil {
		t.Error("ReadDir of an empty directory succeeded")
	}
}

func TestRunModes(t *testing.T) {
	c := mustGenerate(t, 2, 100)
	closed := 0
	specs := []ModeSpec{
		{Mode: openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, Open: func(ctx context.Context) (Pipeline, error) {
			p := newPipeline(t, false)
			return Pipeline{Analyzer: p.session, Memory: p.uc, Groups: p.uc, Identifier: p.ex, Close: func() error { closed++; return nil }}, nil
		}},
		{Mode: openrecall.Mode{Memory: "shared", Model: "deterministic"}, Unavailable: "no shared backend"},
		{Mode: openrecall.Mode{Memory: "sqlite", Model: "live"}},
	}
	rows, err := RunModes(context.Background(), c, specs, Config{Now: fixedNow()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || !rows[0].Ran || rows[0].Report == nil || rows[0].Report.Mode != specs[0].Mode {
		t.Fatalf("rows = %+v, want the first mode run with its mode", rows)
	}
	if rows[1].Ran || rows[1].Report != nil || rows[1].Reason != "no shared backend" {
		t.Errorf("unavailable row = %+v", rows[1])
	}
	if rows[2].Ran || rows[2].Reason == "" {
		t.Errorf("a mode with no pipeline must say why it did not run: %+v", rows[2])
	}
	if closed != 1 {
		t.Errorf("pipeline closed %d times, want 1", closed)
	}
}

// TestWriteGolden pins the table and JSON reports of a small generated run
// (the clock is fixed, so throughput is too). Run with -update to rewrite.
func TestWriteGolden(t *testing.T) {
	c := mustGenerate(t, 20260101, 150)
	p := newPipeline(t, false)
	rep, err := Replay(context.Background(), c, p.config())
	if err != nil {
		t.Fatal(err)
	}
	out := Output{Report: rep, Modes: []ModeRow{{Mode: rep.Mode, Ran: true, Report: &rep}, {Mode: openrecall.Mode{Memory: "shared", Model: "live"}, Reason: "not built"}}}
	for _, tt := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"report.golden.txt", func(b *bytes.Buffer) error { return WriteTable(b, out) }},
		{"report.golden.json", func(b *bytes.Buffer) error { return WriteJSON(b, out) }},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("%s differs (-want +got):\n%s", path, diff)
			}
		})
	}
}

func BenchmarkReplay(b *testing.B) {
	c, err := Generate(20260101, 600)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		p := newPipeline(b, false)
		b.StartTimer()
		cfg := p.config()
		cfg.Now = nil
		if _, err := Replay(context.Background(), c, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*600)/b.Elapsed().Seconds(), "alerts/s")
}

func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := Generate(20260101, 2400); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReplayStormsDecidedOnce replays a generated corpus with alert groups
// (DESIGN §6a): the simulated analyst decides each group once, no alert is
// closed through a group (or bypassed) when it needed a person, group
// members make no model call, and the analyst retains fewer decisions than
// there are alerts outside bypasses.
func TestReplayStormsDecidedOnce(t *testing.T) {
	c, err := Generate(1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g := newPipelineWith(t, false, true)
	rep, err := Replay(ctx, c, g.config())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Safe() || rep.Err() != nil {
		t.Errorf("false closures through groups or bypasses: %v", rep.FalseBypasses)
	}
	if rep.Grouped.Alerts == 0 || rep.Grouped.CheapCalls+rep.Grouped.StrongCalls != 0 || rep.Grouped.Cost != 0 {
		t.Errorf("grouped row: %+v; want members, no model call, no cost", rep.Grouped)
	}
	if rep.Retained >= rep.Overall.Alerts-rep.Overall.Bypassed-rep.Grouped.Alerts+1 {
		t.Errorf("retained %d decisions for %d alerts (%d bypassed, %d grouped): one per group, none per member", rep.Retained, rep.Overall.Alerts, rep.Overall.Bypassed, rep.Grouped.Alerts)
	}
	t.Logf("compression %.1f%%, grouped %d, retained %d, bypass recall %.1f%%", 100*rep.Overall.Compression(), rep.Grouped.Alerts, rep.Retained, 100*rep.Overall.BypassRecall())
}

// TestMissedRealAreReviewedModelVerdicts bounds the alerts eval calls
// missed real under the product's guard, on the 600-alert corpus of
// BenchmarkReplay: none was closed by memory (each is a model's benign
// verdict after analysis, which the analyst reviews), none is a security
// case (the guard refuses a benign verdict on an attack), a strong model's
// one carries a person's approval (the severity clause sent it there), a
// cheap model's one only confirms a family analysts split on (ambiguous),
// and together they are at most 3% of the alerts whose truth is real
// (4 of 205 at this seed).
func TestMissedRealAreReviewedModelVerdicts(t *testing.T) {
	rep, err := Replay(context.Background(), mustGenerate(t, 20260101, 600), newPipeline(t, false).config())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.MissedReal) != rep.Overall.Missed {
		t.Fatalf("%d missed real alerts listed, %d counted", len(rep.MissedReal), rep.Overall.Missed)
	}
	for _, m := range rep.MissedReal {
		switch {
		case m.By != "cheap" && m.By != "strong":
			t.Errorf("%s (%s, family %s): decided %s by %q, want a model answer that passed the gate", m.Position, m.Kind, m.Family, m.Decision, m.By)
		case m.Kind.Security():
			t.Errorf("%s: the %s model's benign verdict on a %s alert (family %s) was accepted", m.Position, m.By, m.Kind, m.Family)
		case m.By == "strong" && !m.Approval:
			t.Errorf("%s (%s, family %s): the strong model's benign verdict does not require a person's approval", m.Position, m.Kind, m.Family)
		case m.By == "cheap" && m.Kind != KindAmbiguous:
			t.Errorf("%s: the cheap model called a %s alert (family %s) %s", m.Position, m.Kind, m.Family, m.Decision)
		}
	}
	real := 0
	for _, g := range rep.ByTruth {
		if g.Name == string(openrecall.DecisionReal) {
			real = g.Stats.Alerts
		}
	}
	if real == 0 || rep.Overall.Missed*100 > 3*real {
		t.Errorf("%d of %d alerts whose truth is real were decided benign, want at most 3%%: %+v", rep.Overall.Missed, real, rep.MissedReal)
	}
	t.Logf("missed real: %d of %d real alerts", rep.Overall.Missed, real)
}

// TestReplayDecidesGroupsThroughTheUseCase: the simulated analyst decides
// each alert group through usecase.App.DecideGroup, as 'openrecall retain
// --group' does, over the groups the session stored: every group whose
// head memory did not bypass is closed in the store by the analyst, with
// its one memory (keyed by its head) and its decision on every firing,
// and the trail holds one group-decision entry per firing of it, naming
// that memory. A group a bypassed head leads waits for no one and stays
// open.
func TestReplayDecidesGroupsThroughTheUseCase(t *testing.T) {
	ctx := context.Background()
	p := newPipelineWith(t, false, true)
	rep, err := Replay(ctx, mustGenerate(t, 1, 600), p.config())
	if err != nil {
		t.Fatal(err)
	}
	groups, err := p.st.Groups(ctx, false, 100000)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string][]openrecall.AuditEntry{} // group-decision entries per analysis
	n := 0
	if err := p.st.ReadTrail(ctx, memory.TrailReader{Entry: func(e openrecall.AuditEntry) error {
		if e.Step == usecase.StepGroupDecision {
			entries[e.AnalysisID] = append(entries[e.AnalysisID], e)
			n++
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	decided, storms, firings := 0, 0, 0
	for _, g := range groups {
		if g.Head.Bypassed {
			if g.Decided {
				t.Errorf("group %s of a bypassed head was decided %s by %q: no one decides it", g.ID, g.Decision, g.Analyst)
			}
			continue
		}
		if !g.Decided || g.Analyst != Analyst || g.MemoryID == "" || !g.Decision.Retainable() {
			t.Errorf("group %s: decided %v by %q as %q, memory %q; want the analyst's decision, closed in the store", g.ID, g.Decided, g.Analyst, g.Decision, g.MemoryID)
			continue
		}
		decided++
		if g.Size > 1 {
			storms++
		}
		members, err := p.st.GroupMembers(ctx, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(members) != g.Size {
			t.Errorf("group %s: %d members stored, size %d", g.ID, len(members), g.Size)
		}
		for _, m := range members {
			firings++
			if m.Decision != g.Decision {
				t.Errorf("group %s: firing %s carries %q, want the group's %q", g.ID, m.AnalysisID, m.Decision, g.Decision)
			}
			es := entries[m.AnalysisID]
			if len(es) != 1 || es[0].ProposedDecision != g.Decision || !strings.Contains(es[0].Reason, "memory "+g.MemoryID) {
				t.Errorf("group %s: firing %s has group-decision entries %+v; want one naming memory %s", g.ID, m.AnalysisID, es, g.MemoryID)
			}
		}
	}
	if decided == 0 || storms == 0 || rep.Grouped.Alerts == 0 {
		t.Fatalf("%d groups decided, %d of them storms, %d firings grouped: the corpus must hold storms the analyst decides", decided, storms, rep.Grouped.Alerts)
	}
	if n != firings {
		t.Errorf("the trail holds %d group-decision entries, the decided groups %d firings: one entry per firing", n, firings)
	}
	// One memory per retain and per group: a storm is one vote.
	st, err := p.st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Incidents != rep.Retained {
		t.Errorf("memory holds %d incidents for %d analyst decisions", st.Incidents, rep.Retained)
	}
	t.Logf("%d groups decided (%d storms, %d firings), %d analyst decisions", decided, storms, firings, rep.Retained)
}
