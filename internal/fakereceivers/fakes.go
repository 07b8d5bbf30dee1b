package fakereceivers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The receivers' names, as notify's receiver types name them: what Fail
// and POST /_fail take, and Request.Receiver says.
const (
	PagerDuty = "pagerduty"
	Opsgenie  = "opsgenie"
	Slack     = "slack"
	Teams     = "teams"
	Webhook   = "webhook"
	Email     = "email"
)

// receivers lists the receivers' names.
var receivers = []string{PagerDuty, Opsgenie, Slack, Teams, Webhook, Email}

// ErrUnknownReceiver is Fail's error for a receiver it does not play.
var ErrUnknownReceiver = errors.New("unknown receiver")

// maxBody bounds a request body the fakes read (twice PagerDuty's 512 KiB
// limit for an event).
const maxBody = 1 << 20

// DefaultTeamsSig is the sig of the Teams webhook's URL when Config says
// none.
const DefaultTeamsSig = "fakereceivers-teams-sig-0123456789"

// Config configures the fakes. Its zero value accepts any credential of
// the documented shape and verifies no webhook signature.
type Config struct {
	// PagerDutyRoutingKey, OpsgenieAPIKey and SlackToken are the only
	// credentials their fakes accept; empty accepts any (a routing key of
	// 32 printable characters, a non-empty key or token).
	PagerDutyRoutingKey string
	OpsgenieAPIKey      string
	SlackToken          string
	// WebhookSecret is the key the webhook fake verifies signatures with:
	// with one, a request without a valid, fresh signature is refused
	// (401); without one, every request is accepted unverified.
	WebhookSecret string
	// TeamsSig is the sig the Teams webhook's URL carries and the fake
	// requires (default DefaultTeamsSig).
	TeamsSig string
	// Now is the clock of the recorded times and of the webhook
	// signature's freshness (default time.Now).
	Now func() time.Time
}

// Addrs is where the fakes listen, each as the notify configuration's
// field takes it.
type Addrs struct {
	// PagerDuty is the events endpoint (a pagerduty receiver's url).
	PagerDuty string `json:"pagerduty"`
	// Opsgenie is the API's base URL (an opsgenie receiver's api_url).
	Opsgenie string `json:"opsgenie"`
	// Slack is the Web API's base URL, ending in /api/ (a slack
	// receiver's api_url).
	Slack string `json:"slack"`
	// Teams is the Workflows webhook's URL, its sig included (a teams
	// receiver's webhook_url).
	Teams string `json:"teams"`
	// Webhook is the webhook's URL (a webhook receiver's url).
	Webhook string `json:"webhook"`
	// SMTP is the SMTP server's host:port; SMTPHost and SMTPPort the same
	// apart (an email receiver's host and port).
	SMTP     string `json:"smtp"`
	SMTPHost string `json:"smtp_host"`
	SMTPPort int    `json:"smtp_port"`
	// Base is each HTTP fake's base URL (scheme, host and port), by
	// receiver.
	Base map[string]string `json:"base_urls"`
	// Control is the control endpoint's base URL, when a program serves
	// Control (Start does not: scripts/fakereceivers does).
	Control string `json:"control,omitempty"`
}

// Failure is how a receiver answers its next requests (Fail): an outage,
// a rate limit, a refusal.
type Failure struct {
	// Status is the HTTP status answered (for email, the SMTP reply code
	// to MAIL FROM: 421, 451, 452, 550, 554, …). With Slack, 200 answers
	// {"ok": false, "error": Error}, the API's refusal.
	Status int
	// Count is how many of the receiver's next requests are answered so
	// (its deliveries: POSTs, SMTP transactions); 0 clears a failure.
	Count int
	// RetryAfter is the Retry-After the HTTP answers carry, in whole
	// seconds (0: none; SMTP has none).
	RetryAfter time.Duration
	// Error is the answer's error text: Slack's error code (default
	// ratelimited for 429, internal_error else), the message of the
	// others.
	Error string
}

// Fakes are the fake receivers, each listening on its own loopback port.
// Safe for concurrent use.
type Fakes struct {
	cfg   Config
	now   func() time.Time
	addrs Addrs

	servers []*http.Server
	smtp    *smtpServer
	done    sync.WaitGroup

	mu      sync.Mutex
	st      State
	seq     int // requests received
	ids     int // ids handed out
	failing map[string]*Pending
	// seenHooks are the webhook notification ids delivered.
	seenHooks map[string]bool
}

// Start starts every fake on a free port of 127.0.0.1. Close ends them.
func Start(cfg Config) (*Fakes, error) {
	f := &Fakes{cfg: cfg, now: cfg.Now, failing: map[string]*Pending{}, seenHooks: map[string]bool{},
		addrs: Addrs{Base: map[string]string{}}}
	if f.now == nil {
		f.now = time.Now
	}
	if f.cfg.TeamsSig == "" {
		f.cfg.TeamsSig = DefaultTeamsSig
	}
	f.st.Slack.Channels = map[string]string{}
	apis := []struct {
		name    string
		handler http.Handler
	}{
		{PagerDuty, f.pagerDutyAPI()}, {Opsgenie, f.opsgenieAPI()}, {Slack, f.slackAPI()},
		{Teams, f.teamsAPI()}, {Webhook, f.webhookAPI()},
	}
	for _, a := range apis {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("fakereceivers: listen for %s: %w", a.name, err)
		}
		srv := &http.Server{Handler: a.handler, ReadHeaderTimeout: 10 * time.Second}
		f.servers = append(f.servers, srv)
		f.done.Add(1)
		go func() {
			defer f.done.Done()
			_ = srv.Serve(ln) // ErrServerClosed once Close closes it
		}()
		f.addrs.Base[a.name] = "http://" + ln.Addr().String()
	}
	base := f.addrs.Base
	f.addrs.PagerDuty = base[PagerDuty] + "/v2/enqueue"
	f.addrs.Opsgenie = base[Opsgenie]
	f.addrs.Slack = base[Slack] + "/api/"
	f.addrs.Teams = base[Teams] + "/workflows/" + teamsWorkflow + "/triggers/manual/paths/invoke?" + url.Values{
		"api-version": {"1"}, "sp": {"/triggers/manual/run"}, "sv": {"1.0"}, "sig": {f.cfg.TeamsSig}}.Encode()
	f.addrs.Webhook = base[Webhook] + webhookPath
	s, err := startSMTP(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("fakereceivers: listen for smtp: %w", err)
	}
	f.smtp = s
	addr := s.ln.Addr().(*net.TCPAddr)
	f.addrs.SMTP, f.addrs.SMTPHost, f.addrs.SMTPPort = addr.String(), addr.IP.String(), addr.Port
	return f, nil
}

// Addrs returns where the fakes listen.
func (f *Fakes) Addrs() Addrs {
	a := f.addrs
	a.Base = map[string]string{}
	for k, v := range f.addrs.Base {
		a.Base[k] = v
	}
	return a
}

// Close ends every fake, its connections with it, and waits for them.
func (f *Fakes) Close() error {
	var errs []error
	for _, srv := range f.servers {
		errs = append(errs, srv.Close())
	}
	if f.smtp != nil {
		errs = append(errs, f.smtp.close())
	}
	f.done.Wait()
	return errors.Join(errs...)
}

// State returns a copy of what the fakes hold now.
func (f *Fakes) State() State {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.st.clone()
	for name, p := range f.failing {
		c.Failing[name] = *p
	}
	return c
}

// Fail makes receiver answer its next fl.Count requests with fl's failure,
// replacing a failure still pending; a Count of 0 clears it. Its error
// wraps ErrUnknownReceiver for a receiver the fakes do not play.
func (f *Fakes) Fail(receiver string, fl Failure) error {
	if !slices.Contains(receivers, receiver) {
		return fmt.Errorf("fail %q: %w (want one of %s)", receiver, ErrUnknownReceiver, strings.Join(receivers, ", "))
	}
	switch {
	case fl.Count < 0:
		return fmt.Errorf("fail %s: count %d is negative", receiver, fl.Count)
	case fl.RetryAfter < 0:
		return fmt.Errorf("fail %s: retry_after %s is negative", receiver, fl.RetryAfter)
	case fl.Count == 0:
	case receiver == Slack && fl.Status == http.StatusOK:
		if fl.Error == "" {
			return errors.New("fail slack: status 200 needs an error code (the API's refusal)")
		}
	case fl.Status < 400 || fl.Status > 599:
		return fmt.Errorf("fail %s: status %d is not a failure (400 to 599)", receiver, fl.Status)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl.Count == 0 {
		delete(f.failing, receiver)
		return nil
	}
	f.failing[receiver] = &Pending{Status: fl.Status, Left: fl.Count, RetryAfter: int(fl.RetryAfter / time.Second), Error: fl.Error}
	return nil
}

// takeFailure returns the failure receiver's next request is answered
// with, and counts it. The caller holds f.mu.
func (f *Fakes) takeFailure(receiver string) (Pending, bool) {
	p, ok := f.failing[receiver]
	if !ok {
		return Pending{}, false
	}
	fl := *p
	if p.Left--; p.Left <= 0 {
		delete(f.failing, receiver)
	}
	return fl, true
}

// nextID returns a new number for an id. The caller holds f.mu.
func (f *Fakes) nextID() int {
	f.ids++
	return f.ids
}

// uuid returns a new id shaped as Opsgenie's (a UUID). The caller holds
// f.mu.
func (f *Fakes) uuid() string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", f.nextID())
}

// record appends r to the requests, numbered. The caller holds f.mu.
func (f *Fakes) record(r Request) {
	f.seq++
	r.Seq = f.seq
	f.st.Requests = append(f.st.Requests, r)
}

// answer is an HTTP fake's answer to a request.
type answer struct {
	status int
	header http.Header
	body   []byte
	// failed says the answer is a failure Fail asked for.
	failed bool
}

// reply returns an answer of status with v as its JSON body.
func reply(status int, v any) answer {
	b, err := json.Marshal(v)
	if err != nil { // the fakes' own values always encode
		panic(err)
	}
	return answer{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: b}
}

// handlerFunc answers a request whose body is read, with f.mu held: it
// reads and changes the fakes' state.
type handlerFunc func(r *http.Request, body []byte) answer

// route returns the handler of one of receiver's API routes: it reads
// the body, answers with the pending failure (when deliver says the route
// is a delivery) or with h, and records the request and its answer.
func (f *Fakes) route(receiver string, deliver bool, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		var a answer
		f.mu.Lock()
		at := f.now()
		fl, failing := Pending{}, false
		if deliver && err == nil {
			fl, failing = f.takeFailure(receiver)
		}
		switch {
		case err != nil:
			a = answer{status: http.StatusRequestEntityTooLarge, body: []byte("request body too large\n")}
		case failing:
			a = failureAnswer(receiver, fl)
		default:
			a = h(r, body)
		}
		f.record(requestOf(receiver, r, body, a, at))
		f.mu.Unlock()
		for k, vs := range a.header {
			w.Header()[k] = vs
		}
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body) // the client may have gone; nothing to do
	})
}

// requestOf returns the record of r: credentials masked.
func requestOf(receiver string, r *http.Request, body []byte, a answer, at time.Time) Request {
	h := r.Header.Clone()
	if auth := h.Get("Authorization"); auth != "" {
		scheme, _, _ := strings.Cut(auth, " ")
		h.Set("Authorization", scheme+" xxxxx")
	}
	q := r.URL.Query()
	if q.Has("sig") {
		q.Set("sig", "xxxxx")
	}
	if receiver == PagerDuty {
		// The event carries its credential: routing_key.
		var ev struct {
			RoutingKey string `json:"routing_key"`
		}
		if json.Unmarshal(body, &ev) == nil && ev.RoutingKey != "" {
			enc, _ := json.Marshal(ev.RoutingKey)
			body = []byte(strings.ReplaceAll(string(body), string(enc[1:len(enc)-1]), "xxxxx"))
		}
	}
	req := Request{At: at, Receiver: receiver, Method: r.Method, Path: r.URL.EscapedPath(), Query: q.Encode(),
		Header: h, Status: a.status, Failed: a.failed}
	if json.Valid(body) {
		req.Body = json.RawMessage(body)
	} else {
		req.Text = string(body)
	}
	return req
}

// failureAnswer is receiver's answer of the failure fl, in its API's
// error shape.
func failureAnswer(receiver string, fl Pending) answer {
	msg := fl.Error
	if msg == "" {
		msg = strings.ToLower(http.StatusText(fl.Status))
	}
	var a answer
	switch receiver {
	case PagerDuty:
		status := "error"
		switch {
		case fl.Status == http.StatusTooManyRequests:
			status = "throttle event"
		case fl.Status < 500:
			status = "invalid event"
		}
		a = reply(fl.Status, map[string]any{"status": status, "message": msg, "errors": []string{msg}})
	case Opsgenie:
		a = reply(fl.Status, map[string]any{"message": msg, "took": 0.001, "requestId": "00000000-0000-4000-8000-000000000000"})
	case Slack:
		code := fl.Error
		switch {
		case code != "":
		case fl.Status == http.StatusTooManyRequests:
			code = "ratelimited"
		default:
			code = "internal_error"
		}
		a = reply(fl.Status, map[string]any{"ok": false, "error": code})
	case Teams:
		a = reply(fl.Status, map[string]any{"error": map[string]string{"code": "FakeFailure", "message": msg}})
	default:
		a = answer{status: fl.Status, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: []byte(msg + "\n")}
	}
	if fl.RetryAfter > 0 {
		a.header.Set("Retry-After", strconv.Itoa(fl.RetryAfter))
	}
	a.failed = true
	return a
}

// Control returns the control API's handler:
//
//	GET  /_state  the State as JSON
//	POST /_fail?receiver=R&status=S&count=N&retry_after=SECONDS&error=TEXT
//	              Fail(R, …): count defaults to 1, count=0 clears; answers
//	              the failure pending as JSON
//	GET  /_addrs  the Addrs as JSON
//
// A bad query is answered 400 with the reason.
func (f *Fakes) Control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_state", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, f.State()) })
	mux.HandleFunc("GET /_addrs", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, f.Addrs()) })
	mux.HandleFunc("POST /_fail", func(w http.ResponseWriter, r *http.Request) {
		receiver, fl, err := parseFailure(r.URL.Query())
		if err == nil {
			err = f.Fail(receiver, fl)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"receiver": receiver, "failing": f.State().Failing[receiver]})
	})
	return mux
}

// parseFailure reads POST /_fail's query.
func parseFailure(q url.Values) (string, Failure, error) {
	receiver := q.Get("receiver")
	if receiver == "smtp" {
		receiver = Email
	}
	fl := Failure{Count: 1, Error: q.Get("error")}
	num := func(name string, dst *int) error {
		v := q.Get(name)
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s %q is not a whole number", name, v)
		}
		*dst = n
		return nil
	}
	var retry int
	if err := errors.Join(num("status", &fl.Status), num("count", &fl.Count), num("retry_after", &retry)); err != nil {
		return "", Failure{}, err
	}
	fl.RetryAfter = time.Duration(retry) * time.Second
	return receiver, fl, nil
}

// writeJSON answers v as indented JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
