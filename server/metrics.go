package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/openrecall/openrecall"
)

// Observer receives what the server does, for metrics. It observes and
// never steers. Implementations must be safe for concurrent use.
// Prometheus satisfies it, and runner.Observer too: one registry for the
// receivers and the runner.
type Observer interface {
	// Request reports one answered HTTP request by route pattern.
	Request(route string, status int, d time.Duration)
	// Received reports one intake body: records queued, redeliveries not
	// queued again, and records intake rejected.
	Received(endpoint string, accepted, duplicates, rejected int)
	// Refused reports a body refused because the inbox was full.
	Refused(endpoint string)
	// Sender reports the alerts one body brought from a sender (queued or
	// redelivered) and how many alerts the sender said it left out of it
	// (Alertmanager's truncatedAlerts).
	Sender(sender string, alerts, dropped int)
	// Login reports one login attempt to the cockpit by outcome
	// (cockpit.LoginOK, LoginUnknown, LoginNotAllowed, LoginThrottled).
	Login(outcome string)
	// SlackRefused reports one Slack interaction refused, by reason
	// (slack.ReasonBadSignature, ReasonStale, ReasonReplay,
	// ReasonUnmapped, ReasonReadOnly).
	SlackRefused(reason string)
	// Handler serves the metrics (GET /metrics).
	Handler() http.Handler
}

type nopObserver struct{}

func (nopObserver) Request(string, int, time.Duration) {}
func (nopObserver) Received(string, int, int, int)     {}
func (nopObserver) Refused(string)                     {}
func (nopObserver) Sender(string, int, int)            {}
func (nopObserver) Login(string)                       {}
func (nopObserver) SlackRefused(string)                {}
func (nopObserver) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "metrics are not enabled")
	})
}

// Prometheus is the Observer that exports Prometheus metrics. It also
// satisfies the runner's observers: the inbox's (runner.Observer) and the
// outbox dispatcher's (Sent, Failed, Dead, LeaseLost).
type Prometheus struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	received     *prometheus.CounterVec
	duplicates   *prometheus.CounterVec
	rejected     *prometheus.CounterVec
	refused      *prometheus.CounterVec
	bySender     *prometheus.CounterVec
	dropped      *prometheus.CounterVec
	analysed     *prometheus.CounterVec
	bypassed     prometheus.Counter
	grouped      prometheus.Counter
	calls        *prometheus.CounterVec
	anomalies    *prometheus.CounterVec
	cost         *prometheus.CounterVec
	baseline     prometheus.Counter
	savings      prometheus.Counter
	pruned       prometheus.Counter
	leaseLost    prometheus.Counter
	archived     *prometheus.CounterVec
	forgotten    *prometheus.CounterVec
	expired      *prometheus.CounterVec
	alertCost    prometheus.Histogram
	duration     prometheus.Histogram
	logins       *prometheus.CounterVec
	loginFails   prometheus.Counter
	slackRefused *prometheus.CounterVec
	// notify is the outbound path's (metrics_notify.go).
	notify *notifyMetrics
}

// NewPrometheus returns the Prometheus observer on its own registry, with
// the Go and process collectors and an inbox depth gauge that calls depth
// at every scrape.
func NewPrometheus(depth func() float64) *Prometheus {
	p := &Prometheus{reg: prometheus.NewRegistry(), notify: newNotifyMetrics()}
	p.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_http_requests_total",
		Help: "HTTP requests answered, by route and status code."}, []string{"route", "code"})
	p.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "openrecall_http_request_duration_seconds",
		Help: "Time to answer an HTTP request, by route.", Buckets: prometheus.DefBuckets}, []string{"route"})
	p.received = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_alerts_received_total",
		Help: "Alerts accepted into the inbox, by endpoint."}, []string{"endpoint"})
	p.duplicates = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_alerts_redelivered_total",
		Help: "Redelivered notifications recognised and not queued again, by endpoint."}, []string{"endpoint"})
	p.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_alerts_rejected_total",
		Help: "Records intake rejected, by endpoint."}, []string{"endpoint"})
	p.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_inbox_full_total",
		Help: "Bodies answered 503 because the inbox was full, by endpoint."}, []string{"endpoint"})
	p.bySender = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_sender_alerts_total",
		Help: "Alerts received, by the sender adapter that read them (alertmanager, datadog, falcosidekick, json, ...)."}, []string{"sender"})
	p.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_sender_dropped_alerts_total",
		Help: "Alerts senders said they left out of their deliveries (Alertmanager's truncatedAlerts), by sender: never received."}, []string{"sender"})
	p.analysed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_alerts_analysed_total",
		Help: "Finished analyses, by outcome (triaged, resolved, rejected) and decision."}, []string{"outcome", "decision"})
	p.bypassed = prometheus.NewCounter(prometheus.CounterOpts{Name: "openrecall_alerts_bypassed_total",
		Help: "Alerts closed by the memory bypass, without a model call."})
	p.grouped = prometheus.NewCounter(prometheus.CounterOpts{Name: "openrecall_alerts_grouped_total",
		Help: "Firings grouped under their alert group's head: its decision, without a model call."})
	p.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_model_calls_total",
		Help: "Model calls made, by tier and whether the call was live."}, []string{"tier", "live"})
	p.anomalies = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_model_usage_anomalies_total",
		Help: "Live model calls whose reported usage was outside what the call could use (more prompt tokens than the prompt holds, a completion past max_tokens, a negative count) and was clamped, by tier."}, []string{"tier"})
	p.cost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_model_cost_usd_total",
		Help: "Model spend in dollars, by tier."}, []string{"tier"})
	p.baseline = prometheus.NewCounter(prometheus.CounterOpts{Name: "openrecall_baseline_usd_total",
		Help: "What the always-strong pipeline would have spent on the same alerts, in dollars."})
	p.savings = prometheus.NewCounter(prometheus.CounterOpts{Name: "openrecall_savings_usd_total",
		Help: "Baseline minus cost, in dollars."})
	p.pruned = prometheus.NewCounter(prometheus.CounterOpts{Name: "openrecall_inbox_pruned_total",
		Help: "Finished inbox rows whose delivery and result documents were pruned after server.retention."})
	p.archived = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_archived_total",
		Help: "Audit entries and cost points moved to archive files of server.archive_dir, by chain (entries, cost_points)."}, []string{"chain"})
	p.forgotten = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_forgotten_rows_total",
		Help: "Rows deleted once an archive took their analyses, by kind (deliveries, waiting, groups, group_members, alert_states)."}, []string{"kind"})
	p.expired = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_waiting_expired_total",
		Help: "Items that waited for a person, nobody decided within server.retention, and were forgotten with their archived analyses, by kind (analyses, groups)."}, []string{"kind"})
	p.leaseLost = prometheus.NewCounter(prometheus.CounterOpts{Name: "openrecall_inbox_leases_lost_total",
		Help: "Claimed deliveries another serve process reclaimed after this one's lease passed: this one wrote no result for them."})
	p.alertCost = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "openrecall_alert_cost_usd",
		Help: "Model spend per triaged alert, in dollars.", Buckets: []float64{0, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1}})
	p.duration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "openrecall_analysis_duration_seconds",
		Help: "Time to analyse one delivery.", Buckets: prometheus.DefBuckets})
	p.logins = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_cockpit_logins_total",
		Help: "Login attempts to the cockpit, by outcome (ok, unknown_token, cannot_log_in, throttled)."}, []string{"outcome"})
	p.loginFails = prometheus.NewCounter(prometheus.CounterOpts{Name: "openrecall_cockpit_login_failures_total",
		Help: "Login attempts to the cockpit that did not log in (a wrong token, a token that cannot log in, or throttled)."})
	p.slackRefused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_slack_refused_total",
		Help: "Slack interactions refused, nothing stored, by reason (bad_signature, stale, replay, unmapped, read_only)."}, []string{"reason"})
	depthGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "openrecall_inbox_depth",
		Help: "Deliveries waiting in the inbox."}, depth)
	p.reg.MustRegister(p.requests, p.latency, p.received, p.duplicates, p.rejected, p.refused, p.bySender, p.dropped, p.analysed, p.bypassed, p.grouped,
		p.calls, p.anomalies, p.cost, p.baseline, p.savings, p.pruned, p.archived, p.forgotten, p.expired, p.leaseLost, p.alertCost, p.duration, depthGauge,
		p.logins, p.loginFails, p.slackRefused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p.reg.MustRegister(p.notify.collectors()...)
	return p
}

// Request counts one answered request and observes its latency.
func (p *Prometheus) Request(route string, status int, d time.Duration) {
	p.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	p.latency.WithLabelValues(route).Observe(d.Seconds())
}

// Received counts one intake body's records.
func (p *Prometheus) Received(endpoint string, accepted, duplicates, rejected int) {
	p.received.WithLabelValues(endpoint).Add(float64(accepted))
	p.duplicates.WithLabelValues(endpoint).Add(float64(duplicates))
	p.rejected.WithLabelValues(endpoint).Add(float64(rejected))
}

// Sender counts the alerts a body brought from a sender and those the
// sender said it left out.
func (p *Prometheus) Sender(sender string, alerts, dropped int) {
	if sender == "" {
		sender = "unknown"
	}
	if alerts > 0 {
		p.bySender.WithLabelValues(sender).Add(float64(alerts))
	}
	if dropped > 0 {
		p.dropped.WithLabelValues(sender).Add(float64(dropped))
	}
}

// Refused counts a body refused for a full inbox.
func (p *Prometheus) Refused(endpoint string) { p.refused.WithLabelValues(endpoint).Inc() }

// Pruned counts inbox rows a pruning pass emptied.
func (p *Prometheus) Pruned(rows int) { p.pruned.Add(float64(rows)) }

// Archived counts what a pass moved to an archive file.
func (p *Prometheus) Archived(entries, costPoints int64) {
	p.archived.WithLabelValues("entries").Add(float64(entries))
	p.archived.WithLabelValues("cost_points").Add(float64(costPoints))
}

// Forgotten counts the rows a pass deleted after its archive.
func (p *Prometheus) Forgotten(f openrecall.Forgotten) {
	for kind, n := range map[string]int{"deliveries": f.Deliveries, "waiting": f.Waiting, "groups": f.Groups,
		"group_members": f.Members, "alert_states": f.AlertStates, "history": f.History} {
		p.forgotten.WithLabelValues(kind).Add(float64(n))
	}
	p.expired.WithLabelValues("analyses").Add(float64(f.Expired))
	p.expired.WithLabelValues("groups").Add(float64(f.ExpiredGroups))
}

// SlackRefused counts one Slack interaction refused, by reason.
func (p *Prometheus) SlackRefused(reason string) { p.slackRefused.WithLabelValues(reason).Inc() }

// Login counts one login attempt by outcome, and a failure.
func (p *Prometheus) Login(outcome string) {
	p.logins.WithLabelValues(outcome).Inc()
	if outcome != "ok" {
		p.loginFails.Inc()
	}
}

// LeasesLost counts claimed deliveries another process reclaimed.
func (p *Prometheus) LeasesLost(n int) { p.leaseLost.Add(float64(n)) }

// Analysed counts one finished analysis, its model calls and its money.
func (p *Prometheus) Analysed(r openrecall.Result) {
	p.analysed.WithLabelValues(r.Outcome, string(r.Decision)).Inc()
	p.duration.Observe(r.Latency.Seconds())
	if r.Outcome != openrecall.ResultTriaged {
		return
	}
	if r.Bypassed {
		p.bypassed.Inc()
	}
	if r.Grouped() {
		p.grouped.Inc()
	}
	for _, st := range r.Steps {
		if st.Step == openrecall.StepAnalysis && !st.Skipped {
			p.calls.WithLabelValues(string(st.Tier), strconv.FormatBool(st.Live)).Inc()
		}
		if st.UsageAnomaly != "" {
			p.anomalies.WithLabelValues(string(st.Tier)).Inc()
		}
		if st.Cost > 0 {
			p.cost.WithLabelValues(string(st.Tier)).Add(st.Cost.Dollars())
		}
	}
	p.baseline.Add(r.Baseline.Dollars())
	if sv := r.Baseline - r.Cost; sv > 0 {
		p.savings.Add(sv.Dollars())
	}
	p.alertCost.Observe(r.Cost.Dollars())
}

// Handler serves the registry in the Prometheus text format.
func (p *Prometheus) Handler() http.Handler {
	return promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{Registry: p.reg})
}

// WatchModels exports each model tier's circuit, read at every scrape:
// openrecall_model_circuit_open{tier} (1 while open) and
// openrecall_model_consecutive_failures{tier}.
func (p *Prometheus) WatchModels(health func() []ModelHealth) {
	p.reg.MustRegister(modelCollector{health: health,
		open: prometheus.NewDesc("openrecall_model_circuit_open",
			"1 while the tier's circuit is open (its last calls all failed, routing.DefaultCircuitFailures or more), else 0.", []string{"tier"}, nil),
		failures: prometheus.NewDesc("openrecall_model_consecutive_failures",
			"The tier's calls that failed since its last success.", []string{"tier"}, nil)})
}

// modelCollector reads the model tiers' circuits at each scrape.
type modelCollector struct {
	health         func() []ModelHealth
	open, failures *prometheus.Desc
}

func (c modelCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.failures
}

func (c modelCollector) Collect(ch chan<- prometheus.Metric) {
	for _, h := range c.health() {
		open := 0.0
		if h.Open {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, open, h.Tier)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(h.ConsecutiveFailures), h.Tier)
	}
}
