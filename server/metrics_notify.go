package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openrecall/openrecall"
)

// notifyMetrics are the outbound path's metrics (DESIGN §12b): what the
// outbox's dispatcher sent, failed to send, will try again and gave up on,
// per receiver.
type notifyMetrics struct {
	sent      *prometheus.CounterVec
	failed    *prometheus.CounterVec
	retried   *prometheus.CounterVec
	dead      *prometheus.CounterVec
	leaseLost *prometheus.CounterVec
	latency   *prometheus.HistogramVec
}

func newNotifyMetrics() *notifyMetrics {
	return &notifyMetrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_notify_sent_total",
			Help: "Notifications a receiver took, by receiver and kind (trigger, resolve, update)."}, []string{"receiver", "kind"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_notify_failed_total",
			Help: "Sends a receiver did not take, by receiver (each is retried or made a dead letter)."}, []string{"receiver"}),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_notify_retried_total",
			Help: "Failed sends that will be tried again after a back-off, by receiver."}, []string{"receiver"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_notify_dead_total",
			Help: "Notifications given up on (refused for good, or older than notify.max_age): dead letters, by receiver."}, []string{"receiver"}),
		leaseLost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "openrecall_notify_lease_lost_total",
			Help: "Outcomes of sends not recorded because another serve process took the notification over after this one's lease passed, by receiver."}, []string{"receiver"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "openrecall_notify_latency_seconds",
			Help: "Time a receiver took to take a notification, by receiver.", Buckets: prometheus.DefBuckets}, []string{"receiver"}),
	}
}

func (m *notifyMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.sent, m.failed, m.retried, m.dead, m.leaseLost, m.latency}
}

// Sent counts a notification the receiver took and observes how long its
// send took.
func (p *Prometheus) Sent(receiver, kind string, latency time.Duration) {
	p.notify.sent.WithLabelValues(receiver, kind).Inc()
	p.notify.latency.WithLabelValues(receiver).Observe(latency.Seconds())
}

// Failed counts a send the receiver did not take, and a retry when it will
// be tried again (retried); one not retried is a dead letter, which Dead
// counts.
func (p *Prometheus) Failed(receiver string, retried bool) {
	p.notify.failed.WithLabelValues(receiver).Inc()
	if retried {
		p.notify.retried.WithLabelValues(receiver).Inc()
	}
}

// Dead counts a notification made a dead letter.
func (p *Prometheus) Dead(receiver string) { p.notify.dead.WithLabelValues(receiver).Inc() }

// LeaseLost counts the outcome of a send refused because another process
// took the notification over.
func (p *Prometheus) LeaseLost(receiver string) { p.notify.leaseLost.WithLabelValues(receiver).Inc() }

// WatchOutbox exports the outbox's notifications not delivered yet, read
// through counts at every scrape (memory.Store.OutboxCounts):
// openrecall_outbox_pending{receiver}, openrecall_outbox_dead{receiver}
// and openrecall_outbox_oldest_pending_seconds (the age of the oldest
// pending one, 0 when none waits). A receiver with none is absent; a
// scrape whose read fails has none of them. Call it once.
func (p *Prometheus) WatchOutbox(counts func() (openrecall.OutboxCounts, error)) {
	p.reg.MustRegister(outboxCollector{counts: counts, now: time.Now,
		pending: prometheus.NewDesc("openrecall_outbox_pending",
			"Notifications waiting to be delivered (tried or not yet), by receiver.", []string{"receiver"}, nil),
		dead: prometheus.NewDesc("openrecall_outbox_dead",
			"Dead letters kept until a person retries them (openrecall outbox retry, the cockpit's Dead letters page), by receiver.", []string{"receiver"}, nil),
		oldest: prometheus.NewDesc("openrecall_outbox_oldest_pending_seconds",
			"Age of the oldest notification waiting to be delivered (0 when none waits).", nil, nil)})
}

// outboxCollector reads the outbox's counts at each scrape.
type outboxCollector struct {
	counts                func() (openrecall.OutboxCounts, error)
	now                   func() time.Time
	pending, dead, oldest *prometheus.Desc
}

func (c outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.dead
	ch <- c.oldest
}

func (c outboxCollector) Collect(ch chan<- prometheus.Metric) {
	oc, err := c.counts()
	if err != nil {
		return
	}
	for receiver, rc := range oc.ByReceiver {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(rc.Pending), receiver)
		ch <- prometheus.MustNewConstMetric(c.dead, prometheus.GaugeValue, float64(rc.Dead), receiver)
	}
	age := 0.0
	if !oc.OldestPending.IsZero() {
		age = max(c.now().Sub(oc.OldestPending).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}
