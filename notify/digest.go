package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// This file holds the digest (DESIGN §12b): per receiver, every window,
// what openrecall closed without a person — counts by identity, the top
// families, links to the analyses — so a person can spot-check it. The
// runner's digest job writes one intent per window and receiver; the
// dispatcher reads the window (memory's ClosedBetween) and hands the
// receiver a KindDigest notification carrying a Digest. Slack, Teams,
// email and webhook receivers lay it out; the paging receivers
// (PagerDuty, Opsgenie, Alertmanager) refuse it: a digest never pages.

// Bounds of what a digest shows: a message is read at a glance, and every
// receiver's API limits its size. The counts are always whole; what is
// left out is said ("and 4 more identities, 9 alerts").
const (
	// DigestLinks is how many analyses per identity a digest links to.
	DigestLinks     = 3
	maxDigestIDs    = 20 // identities listed
	maxDigestFams   = 5  // top families listed
	digestTimeStamp = "2006-01-02 15:04 UTC"
)

// Digest is what a KindDigest notification carries: what openrecall
// closed without a person in [From, To) (openrecall.ClosedWindow), with
// links to the cockpit.
type Digest struct {
	From, To time.Time
	// Closed counts the analyses closed without a person in the window:
	// the sum of Identities' counts.
	Closed int
	// Identities are the counts by identity, the most first.
	Identities []DigestIdentity
	// Families are the counts by Alert DNA, the most first.
	Families []DigestFamily
	// Withheld counts rows of the window not read: they fail their seal.
	Withheld int
}

// DigestIdentity is one identity's share of a Digest.
type DigestIdentity struct {
	// Identity is "rule @ service", "rule", or "" for alerts without one.
	Identity   string
	Rule       string
	Service    string
	Count      int
	ByDecision map[openrecall.Decision]int
	// Analyses are some of them, the latest first.
	Analyses []DigestLink
}

// DigestLink is an analysis a digest links to.
type DigestLink struct {
	AnalysisID string
	// URL is its review page ("" when openrecall has no external URL).
	URL string
}

// DigestFamily is one Alert DNA's share of a Digest.
type DigestFamily struct {
	// ID is the fingerprint's id; DNA its non-empty fields, "field=value"
	// separated by spaces ("" when the DNA is all unknown).
	ID    string
	DNA   string
	Count int
}

// DigestOf returns the digest of w, each linked analysis with
// reviewURL's link (nil: no links).
func DigestOf(w openrecall.ClosedWindow, reviewURL func(analysisID string) string) *Digest {
	d := &Digest{From: w.From.UTC(), To: w.To.UTC(), Closed: w.Closed, Withheld: w.Withheld}
	for _, ci := range w.Identities {
		di := DigestIdentity{Identity: identityOrEmpty(ci.Identity), Rule: ci.Identity.Rule, Service: ci.Identity.Service,
			Count: ci.Count, ByDecision: ci.ByDecision}
		for _, id := range ci.AnalysisIDs {
			l := DigestLink{AnalysisID: id}
			if reviewURL != nil {
				l.URL = webURL(reviewURL(id))
			}
			di.Analyses = append(di.Analyses, l)
		}
		d.Identities = append(d.Identities, di)
	}
	for _, cf := range w.Families {
		d.Families = append(d.Families, DigestFamily{ID: cf.ID, DNA: dnaText(cf.Fingerprint), Count: cf.Count})
	}
	return d
}

// dnaText is a fingerprint's known fields, "field=value" separated by
// spaces.
func dnaText(f openrecall.Fingerprint) string {
	var parts []string
	for i, v := range f.Values() {
		if v != "" {
			parts = append(parts, openrecall.FingerprintFields[i]+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// title heads the digest: how many, and the window.
func (d *Digest) title() string {
	noun := "alerts"
	if d.Closed == 1 {
		noun = "alert"
	}
	return fmt.Sprintf("openrecall closed %d %s without a person, %s", d.Closed, noun, d.window())
}

// window is the digest's window as a person reads it.
func (d *Digest) window() string {
	to := d.To.Format("15:04")
	if d.From.Format("2006-01-02") != d.To.Format("2006-01-02") {
		to = d.To.Format("2006-01-02 15:04")
	}
	return d.From.Format("2006-01-02 15:04") + "–" + to + " UTC"
}

// decisionsText is an identity's counts by decision, in the closed set's
// order: "known_benign 15, duplicate 2".
func (di DigestIdentity) decisionsText() string {
	var parts []string
	for _, dec := range openrecall.Decisions {
		if n := di.ByDecision[dec]; n > 0 {
			parts = append(parts, string(dec)+" "+strconv.Itoa(n))
		}
	}
	return strings.Join(parts, ", ")
}

// name is how an identity is listed.
func (di DigestIdentity) name() string {
	if di.Identity == "" {
		return "(no identity)"
	}
	return di.Identity
}

// shownIdentities and moreIdentities split the identities a digest lists
// from those it only counts.
func (d *Digest) shownIdentities() []DigestIdentity {
	return d.Identities[:min(len(d.Identities), maxDigestIDs)]
}

// more says what a list leaves out: "and 4 more identities (9 alerts)", ""
// when nothing.
func (d *Digest) more() string {
	if len(d.Identities) <= maxDigestIDs {
		return ""
	}
	n := 0
	for _, di := range d.Identities[maxDigestIDs:] {
		n += di.Count
	}
	return fmt.Sprintf("and %d more identities (%d alerts)", len(d.Identities)-maxDigestIDs, n)
}

func (d *Digest) topFamilies() []DigestFamily {
	return d.Families[:min(len(d.Families), maxDigestFams)]
}

// familyName is how a family is listed.
func (f DigestFamily) name() string {
	if f.DNA == "" {
		return "(unknown DNA " + f.ID + ")"
	}
	return f.DNA
}

// spotCheck says what a person does with a digest.
const spotCheck = "Spot-check: open an analysis; a closure that was wrong is corrected from its review page (History)."

// checkDigest refuses a digest notification without its digest.
func checkDigest(n Notification) error {
	if n.Digest == nil {
		return &SendError{Permanent: true, Err: fmt.Errorf("notification %s: a digest without its content", n.ID)}
	}
	return nil
}

// sendDigest posts n's digest as a Slack message: a new message, never an
// edit; the delivery keeps nothing.
func (s *Slack) sendDigest(ctx context.Context, n Notification) (Delivery, error) {
	if err := checkDigest(n); err != nil {
		return Delivery{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	text, blocks := mrkdwn(clip(n.Digest.title(), slackSectionMax)), slackDigestBlocks(n.Digest, s.interactive)
	if s.webhook != "" {
		_, err := send(ctx, s.client, request{What: "slack webhook", URL: s.webhook, SecretURL: true, ContentType: slackContentType,
			Body: slackMessage{Text: text, Blocks: blocks}})
		return Delivery{}, err
	}
	_, err := s.call(ctx, "chat.postMessage", slackMessage{Channel: s.channel, Text: text, Blocks: blocks})
	return Delivery{}, err
}

// slackDigestBlocks lays a digest out: a header, the window, the
// identities with their links, the top families, and what to do. When
// wrong (an interactive receiver), the listed analyses follow, each a
// section with a "This was wrong" button (slackWrongBlocks).
func slackDigestBlocks(d *Digest, wrong bool) []slackBlock {
	md := func(t string) *slackText { return &slackText{Type: "mrkdwn", Text: clip(t, slackSectionMax)} }
	head := fmt.Sprintf("Digest: %d closed without a person", d.Closed)
	out := []slackBlock{
		{Type: "header", Text: slackPlain(clip(head, slackHeaderMax))},
		{Type: "section", Text: md("*" + mrkdwn(d.window()) + "*")},
	}
	var lines []string
	for _, di := range d.shownIdentities() {
		line := fmt.Sprintf("• *%s*: %d (%s)", mrkdwn(di.name()), di.Count, di.decisionsText())
		var links []string
		for _, l := range di.Analyses {
			links = append(links, slackLink(l))
		}
		if len(links) > 0 {
			line += " — " + strings.Join(links, ", ")
		}
		lines = append(lines, line)
	}
	if m := d.more(); m != "" {
		lines = append(lines, "• "+m)
	}
	out = append(out, slackBlock{Type: "section", Text: md("*By identity*\n" + strings.Join(lines, "\n"))})
	var fams []string
	for _, f := range d.topFamilies() {
		fams = append(fams, fmt.Sprintf("• %s: %d", mrkdwn(f.name()), f.Count))
	}
	if len(fams) > 0 {
		out = append(out, slackBlock{Type: "section", Text: md("*Top families*\n" + strings.Join(fams, "\n"))})
	}
	note := spotCheck
	if wrong {
		buttons, left := slackWrongBlocks(d)
		out = append(out, buttons...)
		if len(buttons) > 0 {
			note = spotCheckWrong
		}
		if left > 0 {
			note += fmt.Sprintf(" %d listed analyses have no button here (a Slack message holds %d blocks): correct them from their review pages.",
				left, slackMaxBlocks)
		}
	}
	if d.Withheld > 0 {
		note += fmt.Sprintf(" %d row(s) of the window fail their seal and are not counted.", d.Withheld)
	}
	out = append(out, slackBlock{Type: "context", Elements: []slackElement{{Type: "mrkdwn", Text: mrkdwn(note)}}})
	return out
}

// spotCheckWrong is spotCheck for a digest with "This was wrong" buttons.
const spotCheckWrong = "Spot-check: open an analysis; a closure that was wrong is corrected with its This was wrong button, " +
	"as from its review page (History)."

// Slack's limits on a message (https://docs.slack.dev/reference/block-kit/blocks:
// at most 50 blocks) and what a digest makes of them: its own blocks
// (header, window, identities, families, the closing context) are 5, so
// at most slackWrongMax analyses get a button, each a section of its own
// (an action_id need only be unique within its block, and every button is
// openrecall:wrong).
const (
	slackMaxBlocks = 50
	slackWrongMax  = 40
)

// slackWrongBlocks returns a section per listed analysis of d, with its
// link and the identity it belongs to, and a "This was wrong" button
// (SlackActionWrong, the analysis id its value) beside it; at most
// slackWrongMax, chosen so that every listed identity has its latest
// analysis's button before any has a second. left counts the listed
// analyses left without one. The block_ids are "openrecall:wrong:" and the
// analysis id, unique in the message.
func slackWrongBlocks(d *Digest) (blocks []slackBlock, left int) {
	ids := d.shownIdentities()
	chosen := map[[2]int]bool{}
	for round, n := 0, 0; n < slackWrongMax; round++ {
		more := false
		for i, di := range ids {
			if round >= len(di.Analyses) || n == slackWrongMax {
				continue
			}
			more = true
			if l := di.Analyses[round]; l.AnalysisID != "" && len(l.AnalysisID) <= slackValueMax {
				chosen[[2]int{i, round}] = true
				n++
			}
		}
		if !more {
			break
		}
	}
	for i, di := range ids {
		for j, l := range di.Analyses {
			if !chosen[[2]int{i, j}] {
				left++
				continue
			}
			t := slackText{Type: "mrkdwn", Text: clip(slackLink(l)+" · "+mrkdwn(di.name()), slackSectionMax)}
			blocks = append(blocks, slackBlock{Type: "section", BlockID: clip("openrecall:wrong:"+l.AnalysisID, 255), Text: &t,
				Accessory: &slackElement{Type: "button", Text: slackPlain("This was wrong"), ActionID: SlackActionWrong, Value: l.AnalysisID}})
		}
	}
	return blocks, left
}

// slackLink is an analysis as a digest links it: its review page, else
// its id.
func slackLink(l DigestLink) string {
	if l.URL != "" {
		return "<" + mrkdwn(l.URL) + "|" + mrkdwn(l.AnalysisID) + ">"
	}
	return mrkdwn(l.AnalysisID)
}

// sendDigest posts n's digest as a card.
func (t *Teams) sendDigest(ctx context.Context, n Notification) (Delivery, error) {
	if err := checkDigest(n); err != nil {
		return Delivery{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	_, err := send(ctx, t.client, request{What: "teams", URL: t.url, SecretURL: true, Body: teamsDigestOf(n.Digest)})
	return Delivery{}, err
}

// teamsDigestOf lays a digest out as an Adaptive Card: the headline, the
// identities with their counts and linked analyses (TextRuns, never
// Markdown: an identity is an alert's words), the top families.
func teamsDigestOf(d *Digest) teamsMessage {
	body := []teamsElement{
		{Type: "TextBlock", Text: fmt.Sprintf("Digest: %d closed without a person", d.Closed), Weight: "Bolder", Color: "Good", Wrap: true},
		{Type: "RichTextBlock", Inlines: []teamsRun{{Type: "TextRun", Text: d.window(), Size: "Large", Weight: "Bolder"}}},
		{Type: "RichTextBlock", Inlines: []teamsRun{{Type: "TextRun", Text: "By identity", Weight: "Bolder"}}},
	}
	for _, di := range d.shownIdentities() {
		runs := []teamsRun{{Type: "TextRun", Text: fmt.Sprintf("%s: %d (%s)", di.name(), di.Count, di.decisionsText())}}
		for i, l := range di.Analyses {
			sep := " — "
			if i > 0 {
				sep = ", "
			}
			run := teamsRun{Type: "TextRun", Text: l.AnalysisID}
			if l.URL != "" {
				run.SelectAction = &teamsAction{Type: "Action.OpenUrl", Title: l.AnalysisID, URL: l.URL}
			}
			runs = append(runs, teamsRun{Type: "TextRun", Text: sep}, run)
		}
		body = append(body, teamsElement{Type: "RichTextBlock", Inlines: runs})
	}
	if m := d.more(); m != "" {
		body = append(body, teamsElement{Type: "RichTextBlock", Inlines: []teamsRun{{Type: "TextRun", Text: m, Italic: true}}})
	}
	var facts []teamsFact
	for _, f := range d.topFamilies() {
		facts = append(facts, teamsFact{Title: f.name(), Value: strconv.Itoa(f.Count)})
	}
	if len(facts) > 0 {
		body = append(body, teamsElement{Type: "RichTextBlock", Inlines: []teamsRun{{Type: "TextRun", Text: "Top families", Weight: "Bolder"}}},
			teamsElement{Type: "FactSet", Facts: facts})
	}
	note := spotCheck
	if d.Withheld > 0 {
		note += fmt.Sprintf(" %d row(s) of the window fail their seal and are not counted.", d.Withheld)
	}
	body = append(body, teamsElement{Type: "RichTextBlock", Inlines: []teamsRun{{Type: "TextRun", Text: note, Italic: true}}})
	card := teamsCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard", Version: "1.4",
		Body: body, MSTeams: map[string]string{"width": "Full"}}
	return teamsMessage{Type: "message", Attachments: []teamsAttachment{{ContentType: "application/vnd.microsoft.card.adaptive", Content: card}}}
}

// sendDigest mails n's digest to every recipient; the delivery keeps its
// Message-ID.
func (e *Email) sendDigest(ctx context.Context, n Notification) (Delivery, error) {
	if err := checkDigest(n); err != nil {
		return Delivery{}, err
	}
	id := e.MessageID(n.ID)
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	subject := fmt.Sprintf("digest: %d closed without a person, %s", n.Digest.Closed, strings.ReplaceAll(n.Digest.window(), "–", " to "))
	if err := e.deliver(ctx, e.mail(n, id, subject, digestText(n.Digest))); err != nil {
		return Delivery{}, err
	}
	return Delivery{State: map[string]string{"message_id": id}}, nil
}

// mail returns a message of subject and body (LF line ends) for n with
// the Message-ID id, as message writes a notification's.
func (e *Email) mail(n Notification, id, subject, body string) []byte {
	return e.compose(n, id, foldHeader("Subject: ", mime.QEncoding.Encode("utf-8", headerText("[openrecall] "+clip(subject, 200)))), "", body)
}

// foldHeader folds a header's value at its spaces (RFC 5322 §2.2.3) so
// that no line, the header's name (name) on the first, is longer than 78
// characters where a space allows.
func foldHeader(name, value string) string {
	var b strings.Builder
	n := len(name)
	for i, w := range strings.Split(value, " ") {
		switch {
		case i == 0:
		case n+1+len(w) > 78:
			b.WriteString("\r\n")
			n = 0
			fallthrough
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// digestText is a digest as plain text (LF line ends).
func digestText(d *Digest) string {
	var b strings.Builder
	b.WriteString(d.title() + "\n\nBy identity:\n")
	for _, di := range d.shownIdentities() {
		fmt.Fprintf(&b, "- %s: %d (%s)\n", di.name(), di.Count, di.decisionsText())
		for _, l := range di.Analyses {
			if l.URL != "" {
				fmt.Fprintf(&b, "    %s %s\n", l.AnalysisID, l.URL)
			} else {
				fmt.Fprintf(&b, "    %s\n", l.AnalysisID)
			}
		}
	}
	if m := d.more(); m != "" {
		b.WriteString("- " + m + "\n")
	}
	if fams := d.topFamilies(); len(fams) > 0 {
		b.WriteString("\nTop families:\n")
		for _, f := range fams {
			fmt.Fprintf(&b, "- %s: %d\n", f.name(), f.Count)
		}
	}
	if d.Withheld > 0 {
		fmt.Fprintf(&b, "\n%d row(s) of the window fail their seal and are not counted.\n", d.Withheld)
	}
	b.WriteString("\n" + spotCheck + "\n")
	return b.String()
}

// WebhookDigestBody is the webhook's JSON body for a digest (kind
// "digest", docs/webhook.schema.json): the members every body has, and
// the digest.
type WebhookDigestBody struct {
	Version  string        `json:"version"`
	Kind     string        `json:"kind"`
	Key      string        `json:"key"`
	ID       string        `json:"id"`
	At       time.Time     `json:"at"`
	Receiver string        `json:"receiver"`
	Digest   WebhookDigest `json:"digest"`
}

// WebhookDigest is a digest in a WebhookDigestBody: every identity and
// family, not the few a message shows.
type WebhookDigest struct {
	From       time.Time               `json:"from"`
	To         time.Time               `json:"to"`
	Closed     int                     `json:"closed"`
	Withheld   int                     `json:"withheld"`
	Identities []WebhookDigestIdentity `json:"identities"`
	Families   []WebhookDigestFamily   `json:"families"`
}

// WebhookDigestIdentity is one identity's count in a WebhookDigest.
type WebhookDigestIdentity struct {
	Rule       string                      `json:"rule"`
	Service    string                      `json:"service,omitempty"`
	Count      int                         `json:"count"`
	ByDecision map[openrecall.Decision]int `json:"by_decision"`
	Analyses   []WebhookDigestAnalysis     `json:"analyses"`
}

// WebhookDigestAnalysis is a linked analysis of a WebhookDigest.
type WebhookDigestAnalysis struct {
	AnalysisID string `json:"analysis_id"`
	ResultPath string `json:"result_path"`
	ReviewURL  string `json:"review_url,omitempty"`
}

// WebhookDigestFamily is one Alert DNA's count in a WebhookDigest.
type WebhookDigestFamily struct {
	FingerprintID string `json:"fingerprint_id"`
	DNA           string `json:"dna"`
	Count         int    `json:"count"`
}

// NewWebhookDigestBody returns the body the webhook receiver named
// receiver posts for digest notification n.
func NewWebhookDigestBody(receiver string, n Notification) WebhookDigestBody {
	d := n.Digest
	b := WebhookDigestBody{Version: WebhookVersion, Kind: n.Kind, Key: n.Key, ID: n.ID, At: n.At.UTC(), Receiver: receiver,
		Digest: WebhookDigest{From: d.From.UTC(), To: d.To.UTC(), Closed: d.Closed, Withheld: d.Withheld,
			Identities: []WebhookDigestIdentity{}, Families: []WebhookDigestFamily{}}}
	for _, di := range d.Identities {
		wi := WebhookDigestIdentity{Rule: di.Rule, Service: di.Service, Count: di.Count, ByDecision: di.ByDecision,
			Analyses: []WebhookDigestAnalysis{}}
		if wi.ByDecision == nil {
			wi.ByDecision = map[openrecall.Decision]int{}
		}
		for _, l := range di.Analyses {
			wi.Analyses = append(wi.Analyses, WebhookDigestAnalysis{AnalysisID: l.AnalysisID, ResultPath: "/api/v1/results/" + l.AnalysisID, ReviewURL: l.URL})
		}
		b.Digest.Identities = append(b.Digest.Identities, wi)
	}
	for _, f := range d.Families {
		b.Digest.Families = append(b.Digest.Families, WebhookDigestFamily{FingerprintID: f.ID, DNA: f.DNA, Count: f.Count})
	}
	return b
}

// sendDigest posts n's digest body, signed as every body is.
func (w *Webhook) sendDigest(ctx context.Context, n Notification) (Delivery, error) {
	if err := checkDigest(n); err != nil {
		return Delivery{}, err
	}
	body, err := json.Marshal(NewWebhookDigestBody(w.name, n))
	if err != nil {
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("webhook body: %w", err)}
	}
	return Delivery{}, w.post(ctx, n, body)
}

// digestTypes lists the receiver types that take a digest: chat, mail and
// webhooks. The paging types never do.
var digestTypes = []string{"slack", "teams", "email", "webhook"}

// TakesDigest reports whether a receiver of type typ takes a digest.
func TakesDigest(typ string) bool { return slices.Contains(digestTypes, typ) }
