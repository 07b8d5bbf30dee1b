package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/openrecall/openrecall"
)

// WebhookVersion names the webhook body's shape (docs/webhook.schema.json).
// A change that removes or retypes a member is a new version; members are
// only ever added within one.
const WebhookVersion = "openrecall.notification/v1"

// The webhook's request headers.
const (
	// WebhookTimestampHeader holds the Unix time in seconds at which the
	// request was signed (its sending, not the notification's making, so a
	// retry is not refused as stale).
	WebhookTimestampHeader = "X-Openrecall-Timestamp"
	// WebhookSignatureHeader holds "v1=" and the hex HMAC-SHA256, keyed
	// with the shared secret, of the timestamp, a ".", and the raw body.
	WebhookSignatureHeader = "X-Openrecall-Signature"
	// WebhookIDHeader holds Notification.ID: the same on every retry of
	// one notification, so a receiver drops a second delivery.
	WebhookIDHeader = "X-Openrecall-Notification-Id"
)

// WebhookConfig configures a webhook receiver: an HTTP POST of the
// documented JSON body (WebhookBody) to URL, signed when Secret is set.
type WebhookConfig struct {
	// Name is the receiver's name, which routes name (required).
	Name string
	// URL is where the body is posted, http or https (required). It is a
	// Secret because such URLs often carry a token; it never prints.
	URL Secret
	// Secret keys the HMAC-SHA256 signature; without one the request
	// carries no signature headers.
	Secret Secret
	// Timeout bounds one Send (default 10s).
	Timeout time.Duration
	// Client sends the requests (default: a client of its own).
	Client *http.Client
	// Now is the clock the signature's timestamp reads (default
	// time.Now).
	Now func() time.Time
}

// Webhook posts each notification as a signed, versioned JSON body
// (WebhookBody, docs/webhook.schema.json) to a URL, for anything
// openrecall has no receiver of its own for. It replaces the escalation
// POST of server.webhook_url: the body carries every member that one did
// (analysis_id, alert.id, alert.title, alert.severity, alert.service,
// decision, reason, result_path). Safe for concurrent use.
type Webhook struct {
	name    string
	url     string
	secret  Secret
	timeout time.Duration
	client  *http.Client
	now     func() time.Time
}

// NewWebhook validates cfg and returns its receiver. Its errors name the
// configuration field at fault, never a secret's value.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if cfg.Name == "" {
		return nil, errors.New("webhook receiver: name is required")
	}
	if err := checkURL(cfg.URL.Reveal(), true); err != nil {
		return nil, fmt.Errorf("webhook receiver %s: url %w", cfg.Name, err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("webhook receiver %s: timeout %s is negative", cfg.Name, cfg.Timeout)
	}
	w := &Webhook{name: cfg.Name, url: cfg.URL.Reveal(), secret: cfg.Secret, timeout: orDefault(cfg.Timeout),
		client: cfg.Client, now: cfg.Now}
	if w.now == nil {
		w.now = time.Now
	}
	return w, nil
}

// Name returns the receiver's configured name.
func (w *Webhook) Name() string { return w.name }

// Type returns "webhook".
func (w *Webhook) Type() string { return "webhook" }

// Send posts n's body. Any 2xx answer is a delivery; the others are
// classified as every HTTP receiver's are (send). The delivery keeps
// nothing: the body carries the episode's key.
func (w *Webhook) Send(ctx context.Context, n Notification) (Delivery, error) {
	if n.Kind == KindDigest {
		return w.sendDigest(ctx, n)
	}
	if err := checkKind(n); err != nil {
		return Delivery{}, err
	}
	body, err := json.Marshal(NewWebhookBody(w.name, n))
	if err != nil {
		return Delivery{}, &SendError{Permanent: true, Err: fmt.Errorf("webhook body: %w", err)}
	}
	return Delivery{}, w.post(ctx, n, body)
}

// post sends body for n, with its id and, with a secret, its signature.
func (w *Webhook) post(ctx context.Context, n Notification, body []byte) error {
	h := http.Header{}
	h.Set(WebhookIDHeader, n.ID)
	if !w.secret.IsZero() {
		ts := strconv.FormatInt(w.now().Unix(), 10)
		h.Set(WebhookTimestampHeader, ts)
		h.Set(WebhookSignatureHeader, "v1="+WebhookSignature(w.secret.Reveal(), ts, body))
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	_, err := send(ctx, w.client, request{What: "webhook", URL: w.url, SecretURL: true, Header: h, Body: body,
		Secrets: []string{w.secret.Reveal()}})
	return err
}

// WebhookSignature returns the hex HMAC-SHA256 keyed with secret of
// timestamp, ".", and body: what WebhookSignatureHeader carries after
// "v1=". A receiving server computes it over the raw body it read and
// compares in constant time (hmac.Equal).
func WebhookSignature(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// WebhookBody is the webhook's JSON body, version WebhookVersion. Its JSON
// Schema is docs/webhook.schema.json; its member names are the tags here.
type WebhookBody struct {
	// Version is WebhookVersion.
	Version string `json:"version"`
	// Kind is trigger, resolve or update (Notification.Kind).
	Kind string `json:"kind"`
	// Key names the alert episode, the same for its trigger, resolve and
	// updates.
	Key string `json:"key"`
	// ID is the notification's own id, as WebhookIDHeader carries it.
	ID string `json:"id"`
	// At is when the notification was made.
	At time.Time `json:"at"`
	// Receiver is the configured receiver's name.
	Receiver string `json:"receiver"`
	// AnalysisID names the stored result; ResultPath is where openrecall's
	// API serves it, ReviewURL the cockpit's page (omitted when openrecall
	// has no external URL).
	AnalysisID string `json:"analysis_id"`
	ResultPath string `json:"result_path"`
	ReviewURL  string `json:"review_url,omitempty"`
	// Alert is the alert as openrecall read it.
	Alert WebhookAlert `json:"alert"`
	// Decision is openrecall's final decision, omitted for what was not
	// triaged (a recovery, a notice).
	Decision openrecall.Decision `json:"decision,omitempty"`
	// Route is how the result was decided (the route matchers' "route":
	// bypass, exception, group, cheap, strong, unanalysed, none).
	Route string `json:"route"`
	// Reason says why, in the words of the step that decided.
	Reason string `json:"reason,omitempty"`
	// Analysis is what the model (or memory) concluded; omitted when there
	// was no analysis.
	Analysis *WebhookAnalysis `json:"analysis,omitempty"`
	// Memories are the memories that voted for triage's proposal (the
	// strong matches carrying it), in triage's order.
	Memories []WebhookMemory `json:"memories"`
	// Cost is what the analysis cost, against the baseline of sending
	// every alert to the strong model.
	Cost WebhookCost `json:"cost"`
	// Decided is the person's decision an update carries; omitted
	// otherwise.
	Decided *WebhookDecided `json:"decided,omitempty"`
}

// WebhookAlert is the alert in a WebhookBody.
type WebhookAlert struct {
	ID          string              `json:"id"`
	Title       string              `json:"title"`
	Text        string              `json:"text,omitempty"`
	Severity    openrecall.Severity `json:"severity,omitempty"`
	Service     string              `json:"service,omitempty"`
	Environment string              `json:"environment,omitempty"`
	// Status is firing, acknowledged, resolved or notice.
	Status string `json:"status"`
	// Sender names the sender adapter that read it.
	Sender string `json:"sender,omitempty"`
	// Rule is the identity's rule, the check that fired.
	Rule        string            `json:"rule,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Timestamp is the alert's own time, omitted when it had none.
	Timestamp *time.Time `json:"timestamp,omitempty"`
}

// WebhookAnalysis is the analysis summary in a WebhookBody.
type WebhookAnalysis struct {
	Decision   openrecall.Decision `json:"decision"`
	Confidence float64             `json:"confidence"`
	Summary    string              `json:"summary,omitempty"`
	Hypotheses []string            `json:"hypotheses,omitempty"`
	NextSteps  []string            `json:"next_steps,omitempty"`
	// DeadEnds are the paths memory says not to investigate again.
	DeadEnds []string `json:"dead_ends,omitempty"`
	Model    string   `json:"model,omitempty"`
	// Live is true only when a real model call produced the analysis.
	Live bool `json:"live"`
}

// WebhookMemory is a memory that voted, in a WebhookBody: its id, and
// what it recorded when the result still holds its match.
type WebhookMemory struct {
	ID       string              `json:"id"`
	Decision openrecall.Decision `json:"decision,omitempty"`
	// Score is how closely it matched the alert (0 to 1).
	Score   float64 `json:"score,omitempty"`
	Analyst string  `json:"analyst,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// WebhookCost is a result's cost in a WebhookBody, in billionths of a US
// dollar.
type WebhookCost struct {
	NanoUSD         openrecall.NanoUSD `json:"nano_usd"`
	BaselineNanoUSD openrecall.NanoUSD `json:"baseline_nano_usd"`
}

// WebhookDecided is a person's decision in a WebhookBody.
type WebhookDecided struct {
	Decision openrecall.Decision `json:"decision"`
	Analyst  string              `json:"analyst"`
	Note     string              `json:"note,omitempty"`
}

// NewWebhookBody returns the body the webhook receiver named receiver
// posts for n.
func NewWebhookBody(receiver string, n Notification) WebhookBody {
	r := n.Result
	status := r.Alert.Status
	if status == "" {
		status = openrecall.StatusFiring
	}
	b := WebhookBody{
		Version: WebhookVersion, Kind: n.Kind, Key: n.Key, ID: n.ID, At: n.At.UTC(), Receiver: receiver,
		AnalysisID: r.AnalysisID, ResultPath: "/api/v1/results/" + r.AnalysisID, ReviewURL: n.ReviewURL,
		Alert: WebhookAlert{ID: r.Alert.ID, Title: r.Alert.Title, Text: r.Alert.Text, Severity: r.Alert.Severity,
			Service: r.Alert.Service, Environment: r.Alert.Environment, Status: status, Sender: r.Alert.Sender,
			Rule: r.Identity.Rule, Labels: r.Alert.Labels, Annotations: r.Alert.Annotations},
		Decision: r.Decision, Route: RouteOf(r), Reason: stepReason(r),
		Memories: webhookMemories(r),
		Cost:     WebhookCost{NanoUSD: r.Cost, BaselineNanoUSD: r.Baseline},
	}
	if !r.Alert.Timestamp.IsZero() {
		ts := r.Alert.Timestamp.UTC()
		b.Alert.Timestamp = &ts
	}
	if a := r.Analysis; a != nil {
		b.Analysis = &WebhookAnalysis{Decision: a.Decision, Confidence: a.Confidence, Summary: a.Summary,
			Hypotheses: a.Hypotheses, NextSteps: a.NextSteps, DeadEnds: a.SkipPaths, Model: a.Model, Live: a.Live}
	}
	if d := n.Decision; d != nil && n.Kind == KindUpdate {
		b.Decided = &WebhookDecided{Decision: d.Decision, Analyst: d.Analyst, Note: d.Note}
	}
	return b
}

// webhookMemories returns the memories that voted for r's proposal
// (votesOf), never nil.
func webhookMemories(r openrecall.Result) []WebhookMemory {
	out := []WebhookMemory{}
	for _, v := range votesOf(r) {
		out = append(out, WebhookMemory(v))
	}
	return out
}

// checkKind refuses a notification of no known kind: permanently, since
// sending it again changes nothing.
func checkKind(n Notification) error {
	switch n.Kind {
	case KindTrigger, KindResolve, KindUpdate:
		return nil
	}
	return &SendError{Permanent: true, Err: fmt.Errorf("notification %s: unknown kind %q", n.ID, n.Kind)}
}
