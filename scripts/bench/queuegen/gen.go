package queuegen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// Kind classifies a generated alert by the route the product should take.
type Kind string

// The kinds of generated alerts.
const (
	KindRepeat    Kind = "repeat"    // a benign family with enough memory to bypass
	KindThin      Kind = "thin"      // a benign family with thin memory: cheap model
	KindNovel     Kind = "novel"     // a real incident nobody has seen: strong model
	KindAttack    Kind = "attack"    // an explicit security signal: strong model
	KindDisguised Kind = "disguised" // an attack dressed as a benign family
	KindResent    Kind = "resent"    // an earlier line sent again, byte for byte
	KindResolved  Kind = "resolved"  // a resolved Alertmanager notification
)

// Counts tallies the alerts of a generated queue by kind.
type Counts map[Kind]int

// SeedRecord is one analyst decision in the format of
// `openrecall memory seed`: an alert in any intake format and the decision
// taken on it.
type SeedRecord struct {
	Alert         json.RawMessage `json:"alert"`
	Decision      string          `json:"decision"`
	Note          string          `json:"note"`
	DeadEnds      []string        `json:"dead_ends"`
	Analyst       string          `json:"analyst"`
	ImpactMinutes int             `json:"business_impact_minutes"`
}

// family is one kind of alert: how to render one, how often it appears and
// what analysts decided on it before.
type family struct {
	name     string
	kind     Kind
	weight   int
	render   func(g *gen) any
	seeds    int
	decision string
	note     string
	deadEnds []string
}

// gen holds the state of one generation run. It is not safe for
// concurrent use.
type gen struct {
	r   *rand.Rand
	t   time.Time
	seq int
}

const alphabet = "bcdfghjklmnpqrstvwxz0123456789"

func newGen(seed int64) *gen {
	return &gen{
		r: rand.New(rand.NewPCG(uint64(seed), 0x6f70656e726563)),
		t: time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC),
	}
}

// pod returns a Kubernetes pod name of deployment d.
func (g *gen) pod(d string) string {
	return d + "-" + g.word(9+g.r.IntN(2)) + "-" + g.word(5)
}

func (g *gen) word(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) ip(prefix string) string {
	return fmt.Sprintf("%s.%d.%d", prefix, g.r.IntN(256), 1+g.r.IntN(254))
}

func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) ts() string { return g.t.Format(time.RFC3339) }

func (g *gen) tsNano() string {
	return g.t.Add(time.Duration(g.r.IntN(1e9))).Format(time.RFC3339Nano)
}

// id returns a unique id with a prefix.
func (g *gen) id(prefix string) string {
	g.seq++
	return fmt.Sprintf("%s-%06x%s", prefix, g.seq, g.hex(4))
}

func generic(id, title, text string, labels map[string]string, severity, service, env, source, ts string) map[string]any {
	o := map[string]any{"id": id, "title": title, "text": text, "labels": labels, "severity": severity, "source": source, "timestamp": ts}
	if service != "" {
		o["service"] = service
	}
	if env != "" {
		o["environment"] = env
	}
	return o
}

func (g *gen) webhook(status string, labels, annotations map[string]string) map[string]any {
	starts := g.tsNano()
	ends := "0001-01-01T00:00:00Z"
	if status == "resolved" {
		ends = g.t.Add(40 * time.Minute).Format(time.RFC3339Nano)
	}
	alert := map[string]any{
		"status": status, "labels": labels, "annotations": annotations,
		"startsAt": starts, "endsAt": ends,
		"generatorURL": "http://prometheus.prod.example:9090/graph?g0.expr=" + labels["alertname"],
		"fingerprint":  g.hex(16),
	}
	return map[string]any{
		"receiver": "openrecall", "status": status, "alerts": []any{alert},
		"groupLabels":  map[string]string{"alertname": labels["alertname"], "service": labels["service"]},
		"commonLabels": labels, "commonAnnotations": annotations,
		"externalURL": "http://alertmanager.prod.example:9093", "version": "4",
		"groupKey":        fmt.Sprintf("{}:{alertname=%q, service=%q}", labels["alertname"], labels["service"]),
		"truncatedAlerts": 0,
	}
}

func (g *gen) pagerDuty(dedup, summary, source, severity, component, group, class string, details map[string]string) map[string]any {
	return map[string]any{
		"routing_key": "R0UT1NGKEY" + g.hex(22), "event_action": "trigger", "dedup_key": dedup,
		"payload": map[string]any{
			"summary": summary, "source": source, "severity": severity, "timestamp": g.ts(),
			"component": component, "group": group, "class": class, "custom_details": details,
		},
	}
}

func (g *gen) prometheus(labels, annotations map[string]string) map[string]any {
	return map[string]any{
		"labels": labels, "annotations": annotations, "startsAt": g.ts(),
		"endsAt":       g.t.Add(4 * time.Minute).Format(time.RFC3339),
		"generatorURL": "http://prometheus.staging.example:9090/graph?g0.expr=probe_success",
	}
}

func (g *gen) batchOOM(status string, extra string) any {
	pod := g.pod("report-batch-worker")
	desc := fmt.Sprintf("Memory usage spiked to %.2fGiB (limit 4GiB) during the nightly aggregation run at %s; container restarted %d times in the last 10m.",
		3.7+float64(g.r.IntN(30))/100, g.ts(), g.between(1, 3))
	if extra != "" {
		desc = extra
	}
	return g.webhook(status, map[string]string{
		"alertname": "KubeContainerOOMKilled", "service": "report-batch-worker", "container": "report-worker",
		"namespace": "batch", "env": "prod", "severity": "warning", "pod": pod, "cluster": "prod-eu-1",
	}, map[string]string{
		"summary":     "Container report-worker in pod " + pod + " was OOMKilled",
		"description": desc, "runbook_url": "https://runbooks.example/batch/oomkilled",
	})
}

func (g *gen) checkoutLatency(attack bool) any {
	p99 := g.between(1400, 2600)
	if g.r.IntN(3) == 0 && !attack {
		return g.pagerDuty("checkout-latency-"+g.hex(10),
			fmt.Sprintf("checkout-api p99 latency spike above SLO: %dms (SLO 800ms)", p99),
			g.pod("checkout-api"), "error", "checkout-api", "shop", "latency",
			map[string]string{"alertname": "HighLatency", "env": "prod", "service": "checkout-api",
				"load_test": fmt.Sprintf("k6-run-%d", g.between(1000, 9999)), "p99_ms": fmt.Sprint(p99),
				"error_rate": fmt.Sprintf("0.%d%%", g.between(1, 4))})
	}
	text := fmt.Sprintf("p99 latency %dms over 5m (SLO 800ms) on %s while scheduled load test k6-run-%d runs; error rate normal at 0.%d%%.",
		p99, g.pod("checkout-api"), g.between(1000, 9999), g.between(1, 4))
	if attack {
		text = fmt.Sprintf("p99 latency %dms over 5m (SLO 800ms) on %s; slow requests are GET /search?q=' OR 1=1 -- from %s, sql injection pattern, not the load test.",
			p99, g.pod("checkout-api"), g.ip("198.51"))
	}
	return generic(g.id("dd"), "checkout-api p99 latency spike above SLO", text,
		map[string]string{"alertname": "HighLatency", "team": "payments-web"}, "high", "checkout-api", "prod", "datadog", g.ts())
}

// dnsProbe renders the staging DNS probe as Prometheus sends it, or as the
// free text a chat relay forwards (text: no alertname, so its identity is
// the template of its text, another identity whose memories are its own).
//
// The family is the probe of one target: a blackbox alert's identity names
// its target (the probe_target label, or the text that names it), so probes
// of other targets are other alerts with memories of their own.
func (g *gen) dnsProbe(text bool) any {
	const target = "auth.staging.example.internal"
	inst := g.ip("10."+fmt.Sprint(g.between(1, 40))) + ":53"
	failed := g.between(2, 3)
	if text {
		return fmt.Sprintf("[staging] blackbox dns probe flapping: dns lookup %s failed (SERVFAIL) from %s, %d of 5 probes failed", target, inst, failed)
	}
	return g.prometheus(map[string]string{
		"alertname": "BlackboxProbeDNSFailed", "job": "blackbox-dns", "env": "staging",
		"instance": inst, "severity": "warning", "probe_target": target,
	}, map[string]string{
		"summary":     "DNS probe for " + target + " flapping in staging",
		"description": fmt.Sprintf("dns lookup %s failed (SERVFAIL) in %d of the last 5 probes from %s; the probe keeps flapping between up and down.", target, failed, inst),
	})
}

func (g *gen) cacheEvict(attack bool) any {
	n := g.between(0, 7)
	inst := fmt.Sprintf("redis-sessions-%d", n)
	text := fmt.Sprintf("evicted_keys rate %d/s on %s (%s:6379), maxmemory-policy allkeys-lru, during the nightly cache warm-up; hit ratio 0.%d.",
		g.between(3000, 7000), inst, g.ip("10."+fmt.Sprint(g.between(1, 40))), g.between(86, 96))
	if attack {
		text = fmt.Sprintf("evicted_keys rate %d/s on %s outside the warm-up window; a client from %s ran KEYS * and DUMP on every session key and sent 9.4GB out: data exfiltration of session tokens.",
			g.between(3000, 7000), inst, g.ip("203.0"))
	}
	return generic("grafana-"+g.hex(12), "redis-sessions evicted keys spike on "+inst, text,
		map[string]string{"alertname": "RedisEvictionsSpike", "service": "sessions-cache", "env": "prod", "instance": inst},
		"medium", "", "", "grafana", g.ts())
}

func (g *gen) replicaLag() any {
	lag := g.between(90, 450)
	replica := fmt.Sprintf("orders-db-replica-%d", g.between(0, 2))
	if g.r.IntN(2) == 0 {
		return g.pagerDuty("orders-replica-lag-"+g.hex(8),
			fmt.Sprintf("orders-db-replica replication lag %ds during nightly backup", lag),
			replica, "warning", "orders-db-replica", "orders", "replication",
			map[string]string{"alertname": "PostgresReplicationLag", "env": "prod",
				"backup_job": fmt.Sprintf("pg_basebackup-%d", g.between(100, 999)), "lag_seconds": fmt.Sprint(lag)})
	}
	return g.webhook("firing", map[string]string{
		"alertname": "PostgresReplicationLag", "service": "orders-db-replica", "env": "prod",
		"severity": "warning", "instance": replica, "namespace": "orders",
	}, map[string]string{
		"summary":     fmt.Sprintf("Postgres replication lag on %s is %ds", replica, lag),
		"description": fmt.Sprintf("Replication lag above 60s for %dm while the nightly pg_basebackup runs against the replica.", g.between(5, 25)),
		"runbook_url": "https://runbooks.example/db/replication-lag",
	})
}

func (g *gen) ordersBacklog() any {
	lag := g.between(20000, 80000)
	return generic("kafka-mon-"+g.hex(10), "orders-consumer Kafka consumer lag on orders.events",
		fmt.Sprintf("orders-consumer consumer group orders-projector is %d messages behind on topic orders.events during the nightly search reindex.", lag),
		map[string]string{"alertname": "KafkaConsumerLag"}, "warning", "orders-consumer", "prod", "burrow", g.ts())
}

func (g *gen) stagingDisk() any {
	node := fmt.Sprintf("logs-storage-%d", g.between(0, 4))
	return g.webhook("firing", map[string]string{
		"alertname": "NodeFilesystemSpaceFillingUp", "service": "logs-storage", "env": "staging", "severity": "warning",
		"instance": g.ip("10."+fmt.Sprint(g.between(1, 40))) + ":9100", "mountpoint": "/var/lib/loki", "node": node,
	}, map[string]string{
		"summary":     fmt.Sprintf("Filesystem on %s /var/lib/loki is %d%% full", node, g.between(80, 95)),
		"description": "Filesystem /var/lib/loki on " + node + " is predicted to fill within 24h at the current ingest rate; compaction runs at 04:00.",
	})
}

func (g *gen) paymentErrors() any {
	return g.webhook("firing", map[string]string{
		"alertname": "PaymentProviderErrors", "service": "payment-service", "env": "prod", "severity": "critical",
		"pod": g.pod("payment-service"), "provider": "stripe",
	}, map[string]string{
		"summary":     "payment provider returning 5xx for charge requests",
		"description": fmt.Sprintf("Stripe returned HTTP 502 for %d%% of charge requests in the last 10m; checkout conversions dropping.", g.between(5, 40)),
	})
}

func (g *gen) novel() any {
	switch g.r.IntN(5) {
	case 0:
		return generic(g.id("pg-lock"), "orders-db-primary migration lock blocking writes",
			fmt.Sprintf("Schema migration 2026_11_29_add_order_index holds an ACCESS EXCLUSIVE lock on orders; %d queries waiting for the migration lock, checkout writes failing.", g.between(50, 500)),
			map[string]string{"alertname": "MigrationLockHeld", "service": "orders-db-primary"}, "critical", "", "prod", "pganalyze", g.ts())
	case 1:
		return generic(g.id("notif-smtp"), "notification-service cannot reach SMTP relay",
			fmt.Sprintf("Email delivery failing: connection refused from smtp relay mail-relay.prod.example:587 for 100%% of sends in the last 20m; %d password-reset emails queued.", g.between(100, 9000)),
			map[string]string{"alertname": "EmailDeliveryFailing", "service": "notification-worker"}, "high", "", "prod", "prometheus", g.ts())
	case 2:
		return g.pagerDuty(g.id("auth-db-pool"), "auth-service database connection pool exhausted, logins failing",
			g.pod("auth-service"), "critical", "auth-service", "identity", "database",
			map[string]string{"env": "prod", "pool": "hikari", "active": "50", "pending": fmt.Sprint(g.between(100, 900)), "service": "auth-service"})
	case 3:
		return g.webhook("firing", map[string]string{
			"alertname": "KubeImagePullBackOff", "service": "search-api", "env": "prod", "severity": "high",
			"pod": g.pod("search-api"), "namespace": "search",
		}, map[string]string{
			"summary":     "search-api rollout stuck: ImagePullBackOff",
			"description": fmt.Sprintf("Failed to pull image registry.example.com/search-api:v2.%d.0: manifest unknown; %d of 12 new pods stuck, old replica set still serving.", g.between(30, 60), g.between(2, 12)),
		})
	}
	return g.paymentErrors()
}

func (g *gen) attack() any {
	switch g.r.IntN(5) {
	case 0:
		host := fmt.Sprintf("bastion-%d", g.between(1, 4))
		src := g.ip("203.0")
		return g.pagerDuty("wazuh-5712-"+g.hex(8),
			fmt.Sprintf("sshd brute force: %d failed password attempts for root from %s on %s", g.between(200, 900), src, host),
			host, "error", "sshd", "bastion", "authentication",
			map[string]string{"rule_id": "5712", "mitre_technique": "T1110", "src_ip": src, "env": "prod"})
	case 1:
		return g.webhook("firing", map[string]string{
			"alertname": "WAFSQLInjection", "service": "api-gateway", "env": "prod", "severity": "critical", "category": "security", "rule": "942100",
		}, map[string]string{
			"summary":     "SQL injection attempts against api-gateway /v1/orders",
			"description": fmt.Sprintf("WAF rule 942100 matched %d requests from %s with UNION SELECT payloads in the q parameter; %d returned 200.", g.between(20, 200), g.ip("203.0"), g.between(0, 5)),
		})
	case 2:
		return generic(g.id("authsvc-stuffing"), "Credential stuffing against auth-service /login",
			fmt.Sprintf("Login failures from %d distinct IPs in 10m using a leaked credential list (credential stuffing pattern: one attempt per user, residential proxies); %d successful logins.", g.between(1000, 5000), g.between(0, 60)),
			map[string]string{"alertname": "CredentialStuffing"}, "critical", "auth-service", "prod", "auth-analytics", g.ts())
	case 3:
		return fmt.Sprintf("IDS: nmap port scan detected from %s against 10.0.%d.0/24 (%d ports in %ds), prod DMZ", g.ip("192.0"), g.between(1, 40), g.between(500, 5000), g.between(10, 90))
	}
	return generic(g.id("nginx-traversal"), "Path traversal on web-frontend static handler",
		fmt.Sprintf("GET /static/../../../../etc/passwd returned 200 from web-frontend for %d requests from %s.", g.between(2, 40), g.ip("192.0")),
		map[string]string{"alertname": "PathTraversal"}, "critical", "web-frontend", "prod", "nginx", g.ts())
}

// families returns the generated families. Weights are per mille.
func families() []family {
	return []family{
		{name: "batch-oom", kind: KindRepeat, weight: 110, render: func(g *gen) any { return g.batchOOM("firing", "") },
			seeds: 6, decision: "known_benign",
			note:     "Nightly report aggregation peaks above the 4GiB limit; Kubernetes restarts the container and the job's retry completes.",
			deadEnds: []string{"restarted the pod — no effect, it OOMs again on the next chunk"}},
		{name: "checkout-latency", kind: KindRepeat, weight: 100, render: func(g *gen) any { return g.checkoutLatency(false) },
			seeds: 6, decision: "known_benign",
			note:     "Scheduled k6 load test against checkout-api; p99 recovers when the run ends. Error rate stays normal.",
			deadEnds: []string{"scaled the deployment from 12 to 20 replicas — latency unchanged"}},
		{name: "dns-probe", kind: KindRepeat, weight: 60, render: func(g *gen) any { return g.dnsProbe(false) },
			seeds: 6, decision: "false_positive",
			note:     "Staging blackbox DNS probe flaps when the staging CoreDNS autoscaler scales in; real lookups are fine.",
			deadEnds: []string{"restarted coredns in staging — flapping came back within the hour"}},
		{name: "dns-probe-text", kind: KindRepeat, weight: 30, render: func(g *gen) any { return g.dnsProbe(true) },
			seeds: 6, decision: "false_positive",
			note:     "Staging blackbox DNS probe flaps when the staging CoreDNS autoscaler scales in; real lookups are fine.",
			deadEnds: []string{"restarted coredns in staging — flapping came back within the hour"}},
		{name: "cache-evict", kind: KindRepeat, weight: 90, render: func(g *gen) any { return g.cacheEvict(false) },
			seeds: 6, decision: "known_benign",
			note:     "Nightly cache warm-up rewrites the session keyspace; evictions under allkeys-lru are expected.",
			deadEnds: []string{"flushed the hot keys — made the hit ratio worse"}},
		{name: "replica-lag", kind: KindRepeat, weight: 80, render: func(g *gen) any { return g.replicaLag() },
			seeds: 6, decision: "known_benign",
			note:     "pg_basebackup against the replica during the backup window saturates its disk; lag catches up after the backup.",
			deadEnds: []string{"restarted the replica — lag reset then grew again during the backup"}},
		{name: "orders-backlog", kind: KindThin, weight: 70, render: func(g *gen) any { return g.ordersBacklog() },
			seeds: 3, decision: "known_benign",
			note:     "Nightly search reindex floods orders.events; the projector catches up by 06:00.",
			deadEnds: []string{"added two consumer replicas — partitions are the limit, not consumers"}},
		{name: "staging-disk", kind: KindThin, weight: 60, render: func(g *gen) any { return g.stagingDisk() },
			seeds: 2, decision: "false_positive",
			note:     "Staging Loki volume fills before the 04:00 compaction; the prediction overshoots every night.",
			deadEnds: []string{"deleted old chunks by hand — compaction would have done it"}},
		{name: "payment-5xx", kind: KindNovel, weight: 30, render: func(g *gen) any { return g.paymentErrors() },
			seeds: 2, decision: "real",
			note:     "Stripe regional incident; failed over to the fallback PSP with the payments feature flag.",
			deadEnds: []string{"restarted payment-service pods — errors come from the provider"}},
		{name: "novel", kind: KindNovel, weight: 120, render: func(g *gen) any { return g.novel() }},
		{name: "attack", kind: KindAttack, weight: 130, render: func(g *gen) any { return g.attack() }},
		{name: "disguised", kind: KindDisguised, weight: 30, render: func(g *gen) any {
			switch g.r.IntN(3) {
			case 0:
				return g.checkoutLatency(true)
			case 1:
				return g.cacheEvict(true)
			}
			return g.batchOOM("firing", "Memory usage spiked to 4.0GiB (limit 4GiB) outside the nightly run; an unknown process xmrig (cryptominer) was running in the container.")
		}},
		{name: "resolved", kind: KindResolved, weight: 10, render: func(g *gen) any { return g.batchOOM("resolved", "") }},
	}
}

// resentPerMille is how often an earlier line is sent again verbatim.
const resentPerMille = 40

// stream yields the lines of one generated queue in order. It is not safe
// for concurrent use.
type stream struct {
	g      *gen
	fams   []family
	total  int
	recent []line
}

// line is one generated queue line and what it is.
type line struct {
	kind   Kind
	family string
	json   []byte
}

func newStream(seed int64) *stream {
	s := &stream{g: newGen(seed), fams: families(), recent: make([]line, 0, 256)}
	for _, f := range s.fams {
		s.total += f.weight
	}
	return s
}

// next returns the next line. A re-sent line repeats an earlier line byte
// for byte and reports KindResent with the family of the original.
func (s *stream) next() (line, error) {
	g := s.g
	g.t = g.t.Add(time.Duration(1000+g.r.IntN(1000)) * time.Millisecond) // a second or more: two firings of one label set are two episodes (an Alertmanager id is the labels and startsAt to the second)
	if len(s.recent) > 0 && g.r.IntN(1000) < resentPerMille {
		l := s.recent[g.r.IntN(len(s.recent))]
		l.kind = KindResent
		return l, nil
	}
	f := pick(g, s.fams, s.total)
	b, err := json.Marshal(f.render(g))
	if err != nil {
		return line{}, fmt.Errorf("%s alert: %w", f.name, err)
	}
	l := line{kind: f.kind, family: f.name, json: b}
	if len(s.recent) < cap(s.recent) {
		s.recent = append(s.recent, l)
	} else {
		s.recent[g.r.IntN(len(s.recent))] = l
	}
	return l, nil
}

// Write writes a queue of n alerts, one JSON line each, generated
// deterministically from seed, and returns the number of alerts per kind.
func Write(w io.Writer, n int, seed int64) (Counts, error) {
	s := newStream(seed)
	counts := Counts{}
	bw := bufio.NewWriterSize(w, 256<<10)
	for i := range n {
		l, err := s.next()
		if err != nil {
			return counts, fmt.Errorf("line %d: %w", i+1, err)
		}
		counts[l.kind]++
		if _, err := bw.Write(l.json); err != nil {
			return counts, err
		}
		if err := bw.WriteByte('\n'); err != nil {
			return counts, err
		}
	}
	return counts, bw.Flush()
}

func pick(g *gen, fams []family, total int) family {
	x := g.r.IntN(total)
	for _, f := range fams {
		if x < f.weight {
			return f
		}
		x -= f.weight
	}
	return fams[len(fams)-1]
}

// Seeds returns the analyst decisions that seed memory for queues generated
// with this package: a few distinct past alerts per family with a memory,
// generated deterministically from seed. Their alerts are dated a month
// before the queue.
func Seeds(seed int64) ([]SeedRecord, error) {
	g := newGen(seed ^ 0x5eed)
	g.t = g.t.AddDate(0, -1, 0)
	analysts := []string{"amara.okafor", "lukas.brandt", "priya.natarajan", "diego.ramos", "mei.chen", "sam.oduya"}
	var out []SeedRecord
	for _, f := range families() {
		for i := range f.seeds {
			g.t = g.t.Add(time.Duration(1+g.r.IntN(48)) * time.Hour)
			b, err := json.Marshal(f.render(g))
			if err != nil {
				return nil, fmt.Errorf("seed %s %d: %w", f.name, i, err)
			}
			out = append(out, SeedRecord{
				Alert: b, Decision: f.decision, Note: f.note, DeadEnds: f.deadEnds,
				Analyst: analysts[g.r.IntN(len(analysts))],
			})
		}
	}
	return out, nil
}

// WriteSeeds writes Seeds(seed) as JSON Lines, the format of
// `openrecall memory seed FILE`, and returns how many it wrote.
func WriteSeeds(w io.Writer, seed int64) (int, error) {
	recs, err := Seeds(seed)
	if err != nil {
		return 0, err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return 0, err
		}
	}
	return len(recs), nil
}
