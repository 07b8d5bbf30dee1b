package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

// digestWindow is a window of what openrecall closed without a person:
// three identities (one without identity, one whose rule holds mark-up an
// alert could carry), three families.
func digestWindow() openrecall.ClosedWindow {
	from := time.Date(2026, 3, 14, 2, 0, 0, 0, time.UTC)
	crash := openrecall.Fingerprint{ErrorClass: "crashloopbackoff", ServiceRole: "api_edge", Environment: "prod"}
	disk := openrecall.Fingerprint{ErrorClass: "disk_pressure", ServiceRole: "db_primary"}
	return openrecall.ClosedWindow{From: from, To: from.Add(30 * time.Minute), Closed: 23,
		Identities: []openrecall.ClosedIdentity{
			{Identity: openrecall.Identity{Rule: "KubePodCrashLooping", Service: "checkout"}, Count: 17,
				ByDecision:  map[openrecall.Decision]int{openrecall.DecisionKnownBenign: 15, openrecall.DecisionDuplicate: 2},
				AnalysisIDs: []string{"serve-000130", "serve-000123", "serve-000101"}},
			{Identity: openrecall.Identity{Rule: "<!channel> *Disk* almost full", Service: "postgres"}, Count: 4,
				ByDecision: map[openrecall.Decision]int{openrecall.DecisionFalsePositive: 4}, AnalysisIDs: []string{"serve-000129"}},
			{Count: 2, ByDecision: map[openrecall.Decision]int{openrecall.DecisionKnownBenign: 2}, AnalysisIDs: []string{"serve-000111", "serve-000104"}},
		},
		Families: []openrecall.ClosedFamily{
			{Fingerprint: crash, ID: crash.ID(), Count: 17},
			{Fingerprint: disk, ID: disk.ID(), Count: 4},
			{ID: openrecall.Fingerprint{}.ID(), Count: 2},
		},
	}
}

// digestNote is the digest notification of digestWindow, linked to the
// cockpit.
func digestNote() notify.Notification {
	w := digestWindow()
	id := openrecall.DigestID(w.From, w.To)
	return notify.Notification{Kind: notify.KindDigest, Key: "openrecall-" + id, ID: "openrecall-intent-41", At: madeAt,
		Digest: notify.DigestOf(w, func(a string) string { return "https://openrecall.example.com/results/" + a })}
}

// TestSlackPostsTheDigest: a bot posts the digest as a new message
// (chat.postMessage, never an edit): a header, the window, the identities
// with their counts by decision and links, the top families, what to do.
// An alert's words are escaped; the delivery keeps nothing. An incoming
// webhook posts the same message.
func TestSlackPostsTheDigest(t *testing.T) {
	api := newSlackAPI(t)
	d, err := botSlack(t, api, true).Send(context.Background(), digestNote())
	if err != nil {
		t.Fatal(err)
	}
	req := api.Only(t)
	if req.Path != "/api/chat.postMessage" {
		t.Errorf("request to %s, want chat.postMessage", req.Path)
	}
	golden(t, "slack_digest.json", indented(t, req.Body))
	body := slackTexts(t, req.Body)
	for _, want := range []string{"Digest: 23 closed without a person", "2026-03-14 02:00–02:30 UTC",
		"KubePodCrashLooping @ checkout*: 17 (duplicate 2, known_benign 15)",
		"<https://openrecall.example.com/results/serve-000130|serve-000130>", "&lt;!channel&gt;", "(no identity)",
		"error_class=crashloopbackoff service_role=api_edge environment=prod: 17"} {
		if !strings.Contains(body, want) {
			t.Errorf("the digest lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<!channel>") {
		t.Errorf("an alert's words mention the channel: %s", body)
	}
	if len(d.State) != 0 {
		t.Errorf("a digest's delivery keeps %v, want nothing", d.State)
	}

	hook := notify.NewFakeAPI(t, nil)
	s := newSlack(t, notify.SlackConfig{WebhookURL: secret(t, hook.URL+"/services/T0/B0/x")})
	if _, err := s.Send(context.Background(), digestNote()); err != nil {
		t.Fatal(err)
	}
	if got := hook.Only(t); got.Path != "/services/T0/B0/x" || !strings.Contains(string(got.Body), "Digest: 23 closed") {
		t.Errorf("the webhook's post: %s %s", got.Path, got.Body)
	}
}

// TestTeamsPostsTheDigest: the digest is a card whose identities are
// TextRuns (never Markdown), each linked analysis a run that opens its
// review page.
func TestTeamsPostsTheDigest(t *testing.T) {
	srv := notify.NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) { w.WriteHeader(http.StatusAccepted) })
	d, err := newTeams(t, srv.URL+teamsPath+"?"+teamsQuery).Send(context.Background(), digestNote())
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Only(t)
	golden(t, "teams_digest.json", indented(t, req.Body))
	var msg struct {
		Attachments []struct {
			Content struct {
				Body []struct {
					Type    string
					Text    string
					Inlines []struct {
						Text         string
						SelectAction *struct{ Type, URL string }
					}
				}
			}
		}
	}
	decodeInto(t, req.Body, &msg)
	var links []string
	for _, el := range msg.Attachments[0].Content.Body {
		if el.Type == "TextBlock" && strings.Contains(el.Text, "channel") {
			t.Errorf("an alert's words in a Markdown TextBlock: %q", el.Text)
		}
		for _, run := range el.Inlines {
			if run.SelectAction != nil {
				links = append(links, run.Text+" "+run.SelectAction.Type+" "+run.SelectAction.URL)
			}
		}
	}
	if len(links) != 6 || links[0] != "serve-000130 Action.OpenUrl https://openrecall.example.com/results/serve-000130" {
		t.Errorf("linked analyses %q, want the 6 of the digest, first serve-000130", links)
	}
	if len(d.State) != 0 {
		t.Errorf("a digest's delivery keeps %v, want nothing", d.State)
	}
}

// TestEmailMailsTheDigest: the digest is a plain-text mail over STARTTLS
// whose subject says how many were closed in which window.
func TestEmailMailsTheDigest(t *testing.T) {
	srv := newSMTPServer(t, nil)
	d, err := newEmail(t, mailConfig(t, srv)).Send(context.Background(), digestNote())
	if err != nil {
		t.Fatal(err)
	}
	sess := srv.sessions()
	if len(sess) != 1 {
		t.Fatalf("%d sessions, want 1", len(sess))
	}
	goldenMail(t, "email_digest.eml", sess[0].Data)
	if !strings.Contains(sess[0].Data, "X-Openrecall-Kind: digest") || !strings.Contains(sess[0].Data, "Subject: [openrecall] digest: 23 closed without a person, 2026-03-14 02:00 to\r\n 02:30 UTC") {
		t.Errorf("the digest's headers:\n%s", sess[0].Data)
	}
	if d.State["message_id"] != "<openrecall-intent-41@example.com>" {
		t.Errorf("delivery state %v", d.State)
	}
}

// TestWebhookPostsTheDigest: the digest's body is signed as every body is,
// has kind digest, lists every identity and family, and keeps to
// docs/webhook.schema.json.
func TestWebhookPostsTheDigest(t *testing.T) {
	srv := notify.NewFakeAPI(t, nil)
	if _, err := newWebhook(t, srv.URL+"/hook", hookSecret).Send(context.Background(), digestNote()); err != nil {
		t.Fatal(err)
	}
	req := srv.Only(t)
	if err := verify(hookSecret, req.Header, req.Body, signedAt); err != nil {
		t.Errorf("signature: %v", err)
	}
	if got := req.Header.Get(notify.WebhookIDHeader); got != "openrecall-intent-41" {
		t.Errorf("%s = %q", notify.WebhookIDHeader, got)
	}
	golden(t, "webhook_digest.json", indented(t, req.Body))
	var doc map[string]any
	decodeInto(t, req.Body, &doc)
	if errs := loadSchema(t).validate(doc); len(errs) > 0 {
		t.Errorf("the digest's body breaks docs/webhook.schema.json:\n%s", strings.Join(errs, "\n"))
	}
	var body notify.WebhookDigestBody
	decodeInto(t, req.Body, &body)
	sum := 0
	for _, i := range body.Digest.Identities {
		sum += i.Count
	}
	if body.Kind != "digest" || body.Digest.Closed != 23 || sum != 23 || len(body.Digest.Families) != 3 {
		t.Errorf("body %+v", body)
	}
}

// TestSchemaKeepsEachKindsMembers: the schema asks each kind for its own
// members (allOf): a trigger its alert, a digest its digest.
func TestSchemaKeepsEachKindsMembers(t *testing.T) {
	schema := loadSchema(t)
	for _, tt := range []struct {
		name string
		body any
		drop string
	}{
		{"trigger", notify.NewWebhookBody("soar", trigger()), "alert"},
		{"digest", notify.NewWebhookDigestBody("soar", digestNote()), "digest"},
	} {
		b, _ := json.Marshal(tt.body)
		var m map[string]any
		decodeInto(t, b, &m)
		if errs := schema.validate(m); len(errs) > 0 {
			t.Errorf("%s: %q", tt.name, errs)
		}
		delete(m, tt.drop)
		want := fmt.Sprintf("%q is required", tt.drop)
		if errs := schema.validate(m); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, want) }) {
			t.Errorf("%s without %s: errors %q, want %s", tt.name, tt.drop, errs, want)
		}
	}
}

// TestPagingReceiversRefuseADigest: PagerDuty, Opsgenie and Alertmanager
// never page a digest: it is refused for good, and nothing is sent.
func TestPagingReceiversRefuseADigest(t *testing.T) {
	srv := notify.NewFakeAPI(t, nil)
	pd, err := notify.NewPagerDuty(notify.PagerDutyConfig{Name: "pager", RoutingKey: secret(t, strings.Repeat("k", 32)), URL: srv.URL + "/v2/enqueue"})
	if err != nil {
		t.Fatal(err)
	}
	og, err := notify.NewOpsgenie(notify.OpsgenieConfig{Name: "ops", APIKey: secret(t, "og-key"), APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	am, err := notify.NewAlertmanager(notify.AlertmanagerConfig{Name: "am", URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []notify.Receiver{pd, og, am} {
		if notify.TakesDigest(r.Type()) {
			t.Errorf("%s takes a digest", r.Type())
		}
		_, err := r.Send(context.Background(), digestNote())
		var se *notify.SendError
		if !errors.As(err, &se) || !se.Permanent {
			t.Errorf("%s: %v, want a permanent refusal", r.Type(), err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for a digest", n)
	}
	for _, typ := range []string{"slack", "teams", "email", "webhook"} {
		if !notify.TakesDigest(typ) {
			t.Errorf("%s takes no digest", typ)
		}
	}
}

// TestDigestListsTheMostAndSaysWhatItLeavesOut: a message lists 20
// identities and 5 families at most, and says how many identities and
// alerts it left out; the webhook body lists them all.
func TestDigestListsTheMostAndSaysWhatItLeavesOut(t *testing.T) {
	w := openrecall.ClosedWindow{From: time.Unix(1773453600, 0), To: time.Unix(1773455400, 0)}
	for i := range 25 {
		w.Identities = append(w.Identities, openrecall.ClosedIdentity{Identity: openrecall.Identity{Rule: fmt.Sprintf("Rule%02d", i)}, Count: 2,
			ByDecision: map[openrecall.Decision]int{openrecall.DecisionKnownBenign: 2}})
		fp := openrecall.Fingerprint{ErrorClass: fmt.Sprintf("class_%02d", i)}
		w.Families = append(w.Families, openrecall.ClosedFamily{Fingerprint: fp, ID: fp.ID(), Count: 2})
		w.Closed += 2
	}
	n := notify.Notification{Kind: notify.KindDigest, Key: "k", ID: "i", At: madeAt, Digest: notify.DigestOf(w, nil)}
	api := newSlackAPI(t)
	if _, err := botSlack(t, api, false).Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	body := slackTexts(t, api.Only(t).Body)
	if !strings.Contains(body, "Rule19") || strings.Contains(body, "Rule20") || !strings.Contains(body, "and 5 more identities (10 alerts)") {
		t.Errorf("the message does not list 20 identities and count the 5 others:\n%s", body)
	}
	if !strings.Contains(body, "class_04") || strings.Contains(body, "class_05") {
		t.Errorf("the message does not list the top 5 families:\n%s", body)
	}
	if b := notify.NewWebhookDigestBody("soar", n); len(b.Digest.Identities) != 25 || len(b.Digest.Families) != 25 {
		t.Errorf("the webhook body lists %d identities and %d families, want all 25", len(b.Digest.Identities), len(b.Digest.Families))
	}
}

// decodeInto decodes b into v, failing t.
func decodeInto(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// slackTexts returns every text of a Slack message's JSON body, one a
// line, as Slack reads them (JSON's escapes undone).
func slackTexts(t *testing.T, body []byte) string {
	t.Helper()
	var doc any
	decodeInto(t, body, &doc)
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "text" {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestSlackDigestWrongButtons: an interactive receiver's digest has a
// "This was wrong" button beside each listed analysis (its own section:
// an action_id is unique only within its block), valued with the
// analysis id; within Slack's 50 blocks a message, at most 40 buttons,
// every listed identity's latest analysis first, and it says how many
// listed analyses have none. Without interactivity, no button.
func TestSlackDigestWrongButtons(t *testing.T) {
	wrongs := func(bs slackBlocks) []string {
		var out []string
		for _, b := range bs {
			if b.Accessory != nil && b.Accessory.ActionID == notify.SlackActionWrong {
				if b.BlockID != "openrecall:wrong:"+b.Accessory.Value || b.Type != "section" || b.Accessory.label() != "This was wrong" {
					t.Errorf("block %s %s with button %+v", b.Type, b.BlockID, b.Accessory)
				}
				out = append(out, b.Accessory.Value)
			}
		}
		return out
	}
	api := newSlackAPI(t)
	if _, err := botSlack(t, api, true).Send(context.Background(), digestNote()); err != nil {
		t.Fatal(err)
	}
	bs := blocksOf(t, api.Only(t).Body)
	want := []string{"serve-000130", "serve-000123", "serve-000101", "serve-000129", "serve-000111", "serve-000104"}
	if diff := cmp.Diff(want, wrongs(bs)); diff != "" {
		t.Errorf("wrong buttons (-want +got):\n%s", diff)
	}
	if texts := bs.texts(); !strings.Contains(texts, "<https://openrecall.example.com/results/serve-000129|serve-000129> · &lt;!channel&gt;") {
		t.Errorf("an analysis's section does not link it and name its identity, escaped:\n%s", texts)
	}

	api = newSlackAPI(t)
	if _, err := botSlack(t, api, false).Send(context.Background(), digestNote()); err != nil {
		t.Fatal(err)
	}
	if got := wrongs(blocksOf(t, api.Only(t).Body)); len(got) != 0 {
		t.Errorf("wrong buttons without interactivity: %v", got)
	}

	// 25 identities of 3 analyses each: 20 listed, 60 analyses linked.
	w := openrecall.ClosedWindow{From: time.Unix(1773453600, 0), To: time.Unix(1773455400, 0)}
	for i := range 25 {
		w.Identities = append(w.Identities, openrecall.ClosedIdentity{Identity: openrecall.Identity{Rule: fmt.Sprintf("Rule%02d", i)}, Count: 3,
			ByDecision:  map[openrecall.Decision]int{openrecall.DecisionKnownBenign: 3},
			AnalysisIDs: []string{fmt.Sprintf("a%02d-3", i), fmt.Sprintf("a%02d-2", i), fmt.Sprintf("a%02d-1", i)}})
		w.Closed += 3
	}
	api = newSlackAPI(t)
	n := notify.Notification{Kind: notify.KindDigest, Key: "k", ID: "i", At: madeAt, Digest: notify.DigestOf(w, nil)}
	if _, err := botSlack(t, api, true).Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	bs = blocksOf(t, api.Only(t).Body)
	got := wrongs(bs)
	if len(bs) > 50 || len(got) != 40 {
		t.Errorf("%d blocks, %d wrong buttons: want at most 50 blocks and 40 buttons", len(bs), len(got))
	}
	for i := range 20 {
		if !slices.Contains(got, fmt.Sprintf("a%02d-3", i)) {
			t.Errorf("identity Rule%02d's latest analysis has no button", i)
		}
	}
	if slices.Contains(got, "a20-3") || slices.Contains(got, "a00-1") {
		t.Errorf("a button beyond the listed identities or before every identity's second: %v", got)
	}
	last := bs[len(bs)-1]
	if len(last.Elements) != 1 || !strings.Contains(string(last.Elements[0].Text), "20 listed analyses have no button here") {
		t.Errorf("the closing note does not say what has no button: %+v", last)
	}
}
