package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/fakereceivers"
)

// The categories of the scenario's alerts: what the check expects of
// their triage.
const (
	catRepeat     = "repeat"     // memory closes it (bypass, or a member of a bypassed group)
	catEscalation = "escalation" // left to a person
	catStorm      = "storm"      // one head left to a person, the rest its group's members
	catDetection  = "detection"  // a security detection: left to a person, an attack pattern
	catOutage     = "outage"     // left to a person while PagerDuty is down
)

// posted is one alert of the scenario as posted to serve.
type posted struct {
	name       string
	category   string
	analysisID string
	// firing is set for an alert posted in an Alertmanager webhook, which
	// a recovery can resolve.
	firing *firing
	// recovery is the analysis of its recovery, once posted.
	recovery string
}

// firing is an Alertmanager alert.
type firing struct {
	Labels      map[string]string
	Summary     string
	Description string
	StartsAt    time.Time
}

// webhook returns Alertmanager's webhook (version 4) carrying fs, firing
// or, with end set, resolved at end.
func webhook(fs []*firing, end time.Time) []byte {
	type amAlert struct {
		Status       string            `json:"status"`
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
		StartsAt     time.Time         `json:"startsAt"`
		EndsAt       time.Time         `json:"endsAt"`
		GeneratorURL string            `json:"generatorURL"`
	}
	status := "firing"
	if !end.IsZero() {
		status = "resolved"
	}
	var alerts []amAlert
	for _, f := range fs {
		alerts = append(alerts, amAlert{Status: status, Labels: f.Labels, StartsAt: f.StartsAt, EndsAt: end,
			Annotations:  map[string]string{"summary": f.Summary, "description": f.Description},
			GeneratorURL: "http://prometheus.prod.example:9090/graph?g0.expr=" + f.Labels["alertname"]})
	}
	b, _ := json.Marshal(map[string]any{"receiver": "openrecall", "status": status, "alerts": alerts, "version": "4",
		"groupLabels":  map[string]string{"alertname": fs[0].Labels["alertname"], "service": fs[0].Labels["service"]},
		"commonLabels": map[string]string{"alertname": fs[0].Labels["alertname"]}, "externalURL": "http://alertmanager.prod.example:9093",
		"groupKey": fmt.Sprintf("{}:{alertname=%q}", fs[0].Labels["alertname"])}) // plain maps and strings always encode
	return b
}

// accepted is the 202 answer of the intake endpoints.
type accepted struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
	Analyses   []struct {
		AnalysisID string `json:"analysis_id"`
		Duplicate  bool   `json:"duplicate"`
	} `json:"analyses"`
}

// post posts body to endpoint and returns the analyses of its records,
// in order.
func (r *run) post(endpoint string, body []byte) (accepted, error) {
	var acc accepted
	code, err := r.api(http.MethodPost, endpoint, r.ingest, body, &acc)
	if err == nil && code != http.StatusAccepted {
		err = fmt.Errorf("POST %s: status %d, want 202", endpoint, code)
	}
	return acc, err
}

// postAlerts posts body, whose records are the alerts named names, and
// registers them.
func (r *run) postAlerts(endpoint, category string, body []byte, fs []*firing, names ...string) error {
	acc, err := r.post(endpoint, body)
	if err != nil {
		return err
	}
	if acc.Accepted != len(names) || len(acc.Analyses) != len(names) {
		return fmt.Errorf("POST %s (%s): accepted %d records, %d analyses, want %d", endpoint, strings.Join(names, ", "), acc.Accepted, len(acc.Analyses), len(names))
	}
	for i, n := range names {
		p := &posted{name: n, category: category, analysisID: acc.Analyses[i].AnalysisID}
		if fs != nil {
			p.firing = fs[i]
		}
		r.posted = append(r.posted, p)
		r.byName[n] = p
	}
	return nil
}

// postFirings posts fs in one Alertmanager webhook, named prefix-1, … (or
// prefix alone for one).
func (r *run) postFirings(category, prefix string, fs ...*firing) error {
	names := []string{prefix}
	if len(fs) > 1 {
		names = names[:0]
		for i := range fs {
			names = append(names, fmt.Sprintf("%s-%d", prefix, i+1))
		}
	}
	return r.postAlerts("/api/v1/alerts/alertmanager", category, webhook(fs, time.Time{}), fs, names...)
}

// resolve posts the recovery of the alerts named names, in one webhook.
func (r *run) resolve(names ...string) error {
	var fs []*firing
	for _, n := range names {
		fs = append(fs, r.byName[n].firing)
	}
	acc, err := r.post("/api/v1/alerts/alertmanager", webhook(fs, time.Now().UTC().Truncate(time.Second)))
	if err != nil {
		return err
	}
	if acc.Accepted != len(names) || len(acc.Analyses) != len(names) || acc.Duplicates != 0 {
		return fmt.Errorf("recovery of %s: accepted %d, duplicates %d, want %d new", strings.Join(names, ", "), acc.Accepted, acc.Duplicates, len(names))
	}
	for i, n := range names {
		r.byName[n].recovery = acc.Analyses[i].AnalysisID
	}
	return nil
}

// pods returns n firings of one alert that differ by pod only, starting
// at start, a second apart.
func pods(n int, labels map[string]string, prefix, summary, desc string, start time.Time) []*firing {
	var out []*firing
	for i := range n {
		l := map[string]string{}
		for k, v := range labels {
			l[k] = v
		}
		pod := fmt.Sprintf("%s-%05x", prefix, 0x1a2b3+i*0x111)
		l["pod"] = pod
		out = append(out, &firing{Labels: l, Summary: strings.ReplaceAll(summary, "$pod", pod), Description: desc,
			StartsAt: start.Add(time.Duration(i) * time.Second)})
	}
	return out
}

// decisionNote is the note of the person's decision: the updates carry
// it.
const decisionNote = "confirmed: sudoers include changed by the compromised www-data process; node cordoned"

// scenario runs the night and its checks.
func (r *run) scenario() error {
	start := time.Now().UTC().Add(-2 * time.Minute).Truncate(time.Second)

	// 1. A night's alerts. The families, texts and decisions are those of
	// the bundled example (examples/queue.jsonl and its seed), with
	// tonight's times.
	privesc := map[string]any{"id": "falco-privesc-2211", "title": "Privilege escalation attempt on web-frontend node",
		"text":   "Falco: process running as www-data executed sudo with a modified sudoers include; privilege escalation attempt on web-frontend pod.",
		"labels": map[string]string{"alertname": "FalcoPrivilegeEscalation", "category": "security"}, "severity": "critical",
		"service": "web-frontend", "environment": "prod", "source": "falco", "timestamp": start.Add(50 * time.Second)}
	fmt.Println("1. posting: 3 repeats memory closes (OOMKilled report-batch-worker) + 1 (replication lag), " +
		"4 escalations, a storm of 5, 2 security detections")
	steps := []func() error{
		func() error {
			return r.postFirings(catRepeat, "oom", pods(3, map[string]string{"alertname": "KubeContainerOOMKilled", "service": "report-batch-worker",
				"container": "report-worker", "namespace": "batch", "env": "prod", "severity": "warning", "cluster": "prod-eu-1"},
				"report-batch-worker-6b7c9d8f5", "Container report-worker in pod $pod was OOMKilled",
				"Memory usage spiked to 3.95GiB (limit 4GiB) during the nightly aggregation run; container restarted 2 times in the last 10m.", start)...)
		},
		func() error {
			return r.postFirings(catRepeat, "replication-lag", &firing{Labels: map[string]string{"alertname": "PostgresReplicationLag",
				"service": "orders-db-replica", "env": "prod", "severity": "warning", "instance": "orders-db-replica-2", "namespace": "orders"},
				Summary: "Postgres replication lag on orders-db-replica-2 is 419s", StartsAt: start,
				Description: "Replication lag above 60s for 8m while the nightly pg_basebackup runs against the replica."})
		},
		func() error {
			return r.postFirings(catEscalation, "pricing-api", &firing{Labels: map[string]string{"alertname": "KubePodCrashLooping",
				"service": "pricing-api", "env": "prod", "severity": "critical", "pod": "pricing-api-4p8w55sfn-72dvl", "namespace": "pricing"},
				Summary: "pricing-api crash looping after config change", StartsAt: start.Add(10 * time.Second),
				Description: "pricing-api pods back-off restarting since tonight's rollout: configmap pricing-rules missing key TAX_TABLE_URL."})
		},
		func() error {
			return r.postFirings(catEscalation, "payment", pods(2, map[string]string{"alertname": "PaymentProviderErrors", "service": "payment-service",
				"env": "prod", "severity": "critical", "provider": "stripe"}, "payment-service-sxnm8twvn",
				"payment provider returning 5xx for charge requests", "Stripe returned HTTP 502 for 18% of charge requests in the last 10m; checkout conversions dropping.",
				start.Add(20*time.Second))...)
		},
		func() error {
			return r.postFirings(catEscalation, "tls-cert", &firing{Labels: map[string]string{"alertname": "SSLCertExpiringSoon",
				"service": "api-gateway", "env": "prod", "severity": "high", "instance": "api.example.com:443"},
				Summary: "TLS certificate for api.example.com expires in 3 days", StartsAt: start.Add(30 * time.Second),
				Description: "The certificate served on api.example.com:443 expires on 2026-12-03; cert-manager renewal has failed 4 times (ACME DNS-01 challenge rejected)."})
		},
		func() error {
			body, _ := json.Marshal("PROD media-storage: S3 bucket uploads returning 503 SlowDown for 40% of PUTs, user uploads failing for 15m")
			return r.postAlerts("/api/v1/alerts", catEscalation, body, nil, "media-storage")
		},
		func() error {
			return r.postFirings(catStorm, "storm", pods(5, map[string]string{"alertname": "KubeImagePullBackOff", "service": "search-api",
				"env": "prod", "severity": "high", "namespace": "search"}, "search-api-hggccs2ss",
				"search-api rollout stuck: ImagePullBackOff", "Failed to pull image registry.example.com/search-api:v2.41.0: manifest unknown; 6 of 12 new pods stuck, old replica set still serving.",
				start.Add(40*time.Second))...)
		},
		func() error {
			// Falco's "Read sensitive file untrusted" as falcosidekick posts
			// it: the sender fixture of intake/testdata (see its ATTRIBUTION).
			b, err := os.ReadFile(filepath.Join(repoRoot(), "intake", "testdata", "senders", "falcosidekick", "read-sensitive-file.json"))
			if err != nil {
				return err
			}
			return r.postAlerts("/api/v1/alerts/falcosidekick", catDetection, b, nil, "falco-sensitive-file")
		},
		func() error {
			b, _ := json.Marshal(privesc)
			return r.postAlerts("/api/v1/alerts", catDetection, b, nil, "falco-privesc")
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	if err := r.settle("the night's alerts"); err != nil {
		return err
	}
	rs, err := r.results()
	if err != nil {
		return err
	}
	r.checkTriage(rs)
	if err := r.compare("after the night's alerts", nil); err != nil {
		return err
	}

	// 2. Recoveries of notified alerts (one a storm member's), of one
	// memory closed, and a redelivery of one still firing.
	fmt.Println("2. recoveries: pricing-api, both payment pods, storm-2, oom-1 (closed by memory); redelivery of tls-cert")
	for _, names := range [][]string{{"pricing-api"}, {"payment-1", "payment-2"}, {"storm-2"}, {"oom-1"}} {
		if err := r.resolve(names...); err != nil {
			return err
		}
	}
	acc, err := r.post("/api/v1/alerts/alertmanager", webhook([]*firing{r.byName["tls-cert"].firing}, time.Time{}))
	if err != nil {
		return err
	}
	r.check(acc.Duplicates == 1 && len(acc.Analyses) == 1 && acc.Analyses[0].AnalysisID == r.byName["tls-cert"].analysisID,
		"a redelivery of tls-cert is recognised (duplicates %d) and notifies no one again", acc.Duplicates)
	if err := r.settle("the recoveries"); err != nil {
		return err
	}
	if err := r.compare("after the recoveries", nil); err != nil {
		return err
	}

	// 3. A person decides the privilege escalation through the API; then
	// Falco reports it over.
	d := r.byName["falco-privesc"]
	fmt.Printf("3. e2e decides falco-privesc (%s) real through POST /api/v1/retain\n", d.analysisID)
	body, _ := json.Marshal(map[string]any{"analysis_id": d.analysisID, "decision": "real", "analyst": "e2e", "note": decisionNote})
	if _, err := r.api(http.MethodPost, "/api/v1/retain", r.retain, body, nil); err != nil {
		return err
	}
	r.decided = d.analysisID
	if err := r.settle("the decision"); err != nil {
		return err
	}
	if err := r.compare("after the decision", nil); err != nil {
		return err
	}
	fmt.Println("   falco-privesc recovers (its sender posts it resolved)")
	privesc["status"] = "resolved"
	body, _ = json.Marshal(privesc)
	acc, err = r.post("/api/v1/alerts", body)
	if err != nil {
		return err
	}
	if len(acc.Analyses) != 1 || acc.Duplicates != 0 {
		return fmt.Errorf("recovery of falco-privesc: %d analyses, %d duplicates, want 1 new", len(acc.Analyses), acc.Duplicates)
	}
	d.recovery = acc.Analyses[0].AnalysisID
	if err := r.settle("the recovery of the decided alert"); err != nil {
		return err
	}
	if err := r.compare("after the recovery of the decided alert", nil); err != nil {
		return err
	}

	// 4. PagerDuty's outage; serve killed -9 mid-delivery and restarted.
	return r.outage(start)
}

// outage plays a PagerDuty outage (500s) while three more alerts are
// left to a person, checks the other receivers are not held up, then
// lets PagerDuty take the events again while the relay keeps its answers
// back, kills serve -9 with deliveries made and not recorded, restarts
// it on the same database and checks nothing is lost and PagerDuty holds
// one incident per episode.
func (r *run) outage(start time.Time) error {
	fmt.Println("4. PagerDuty answers 500; posting 3 alerts left to a person (inventory-api, ledger-sync, notification-smtp)")
	if err := r.fakes.Fail(fakereceivers.PagerDuty, fakereceivers.Failure{Status: http.StatusInternalServerError, Count: 100000}); err != nil {
		return err
	}
	if err := r.postFirings(catOutage, "inventory-api", &firing{Labels: map[string]string{"alertname": "KubePodCrashLooping",
		"service": "inventory-api", "env": "prod", "severity": "critical", "pod": "inventory-api-9rkdb58d6-7qtz2", "namespace": "inventory",
		"chaos_experiment": "az-b-blackout"}, Summary: "inventory-api pods crash looping in zone b", StartsAt: start.Add(60 * time.Second),
		Description: "Chaos game day experiment az-b-blackout terminated 30% of pods in zone b; pods back-off restarting while the zone is blacked out."}); err != nil {
		return err
	}
	for _, a := range []map[string]any{
		{"id": "ledger-sync-5f579330", "title": "ledger-sync-worker timeout calling ledger API",
			"text":   "100 calls from ledger-sync-worker to the ledger API timed out after 30s in the last 15m (pod ledger-sync-worker-299xtgfzfr-zgtdf).",
			"labels": map[string]string{"alertname": "LedgerSyncTimeouts", "service": "ledger-sync-worker"}, "severity": "high",
			"environment": "prod", "source": "prometheus", "timestamp": start.Add(61 * time.Second)},
		{"id": "notif-smtp-7781", "title": "notification-service cannot reach SMTP relay",
			"text":   "Email delivery failing: connection refused from smtp relay mail-relay.prod.example:587 for 100% of sends in the last 20m; 4,812 password-reset emails queued.",
			"labels": map[string]string{"alertname": "EmailDeliveryFailing", "service": "notification-worker"}, "severity": "high",
			"environment": "prod", "source": "prometheus", "timestamp": start.Add(62 * time.Second)},
	} {
		b, _ := json.Marshal(a)
		if err := r.postAlerts("/api/v1/alerts", catOutage, b, nil, map[string]string{"ledger-sync-5f579330": "ledger-sync", "notif-smtp-7781": "notification-smtp"}[a["id"].(string)]); err != nil {
			return err
		}
	}
	outage := []string{"inventory-api", "ledger-sync", "notification-smtp"}
	var last string
	err := r.waitUntil("the outage's retries", func() (bool, error) {
		if ok, err := r.done(outage...); err != nil || !ok {
			last = "the outage's alerts are not analysed yet"
			return false, err
		}
		all, err := r.intents("")
		if err != nil {
			return false, err
		}
		pending, retried := 0, 0
		for _, in := range all {
			if in.State != openrecall.IntentPending {
				continue
			}
			pending++
			if in.Receiver != rcvPager {
				last = fmt.Sprintf("intents pending, %s's among them", in.Receiver)
				return false, nil
			}
			if in.Attempts >= 2 {
				retried++
			}
		}
		missing, _ := r.amBehind(all)
		last = fmt.Sprintf("%d PagerDuty intents pending, %d tried twice or more; Alertmanager has yet to send on %d", pending, retried, missing)
		return pending == len(outage) && retried == len(outage) && missing == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%w (%s)", err, last)
	}
	failed := 0
	for _, q := range r.fakes.State().Requests {
		if q.Receiver == fakereceivers.PagerDuty && q.Failed {
			failed++
		}
	}
	pending, err := r.intents(openrecall.IntentPending)
	if err != nil {
		return err
	}
	lastErr := ""
	if len(pending) > 0 {
		lastErr = pending[0].LastError
	}
	r.check(failed >= 2*len(outage) && strings.Contains(lastErr, "500"),
		"PagerDuty's outage: %d requests answered 500, its %d intents pending and retried (last error %q)", failed, len(pending), clip(lastErr, 80))
	if err := r.compare("while PagerDuty is down (every other receiver)", []string{rcvPager}); err != nil {
		return err
	}

	// PagerDuty takes events again, but the relay keeps its answers back:
	// the events are delivered and serve does not know it yet.
	r.pd.hold()
	if err := r.fakes.Fail(fakereceivers.PagerDuty, fakereceivers.Failure{}); err != nil {
		return err
	}
	if err := r.waitUntil("a PagerDuty delivery made and not answered", func() (bool, error) { return r.pd.heldCount() >= 1, nil }); err != nil {
		return err
	}
	// The others' retries come within the back-off's maximum (1s, with
	// jitter): give them a moment to be held too.
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end) && r.pd.heldCount() < len(outage); {
		time.Sleep(50 * time.Millisecond)
	}
	held := r.pd.heldCount()
	pid := r.serve.Pid()
	r.serve.Kill()
	fmt.Printf("   killed serve (pid %d) with kill -9: %d PagerDuty events delivered and their answers not yet back\n", pid, held)
	r.pd.pass()
	if list, err := r.cliPending(); err == nil {
		claimed := 0
		for _, in := range list {
			if !in.LeaseUntil.IsZero() {
				claimed++
			}
		}
		fmt.Printf("   the outbox at the kill (openrecall outbox --state pending): %d pending, %d of them claimed by the killed process\n", len(list), claimed)
	} else {
		fmt.Printf("   the outbox at the kill: %v\n", err)
	}
	if err := r.startServe("openrecall serve (restarted)"); err != nil {
		return err
	}
	restarted := time.Now()
	if err := r.settle("the restart"); err != nil {
		return err
	}
	took := time.Since(restarted)
	r.check(took < serveLease, "the restarted instance took its own claims back at once: the outbox drained %s after the restart, within the %s lease",
		took.Round(10*time.Millisecond), serveLease)
	if err := r.compare("after the restart", nil); err != nil {
		return err
	}
	r.checkOutage(outage, held)
	r.final()
	return nil
}

// cliPending lists the pending intents with `openrecall outbox`, which
// opens the database read-only (serve is down).
func (r *run) cliPending() ([]openrecall.OutboxIntent, error) {
	cmd := exec.Command(r.bin, "--db", r.db, "outbox", "list", "--state", "pending", "-o", "json")
	cmd.Env = append(os.Environ(), r.serveEnv...)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("openrecall outbox list: %w", err)
	}
	var list []openrecall.OutboxIntent
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("openrecall outbox list -o json: %w", err)
	}
	return list, nil
}

// served is a delivery and its result, as GET /api/v1/results gives it.
type served struct {
	AnalysisID string             `json:"analysis_id"`
	Episode    string             `json:"episode"`
	Done       bool               `json:"done"`
	Result     *openrecall.Result `json:"result"`
}

// key is the episode key of s's notifications.
func (s served) key() string {
	if s.Episode != "" {
		return "openrecall-" + s.Episode
	}
	return "openrecall-" + s.AnalysisID
}

// results returns every finished analysis so far, in completion order.
func (r *run) results() ([]served, error) {
	var all []served
	var cursor int64
	for {
		var page struct {
			Results []served `json:"results"`
			Next    int64    `json:"next"`
		}
		if _, err := r.api(http.MethodGet, fmt.Sprintf("/api/v1/results?since=%d&limit=1000", cursor), r.read, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Results...)
		if len(page.Results) == 0 {
			return all, nil
		}
		cursor = page.Next
	}
}

// done reports whether the alerts named names (and their recoveries) are
// analysed.
func (r *run) done(names ...string) (bool, error) {
	rs, err := r.results()
	if err != nil {
		return false, err
	}
	finished := map[string]bool{}
	for _, s := range rs {
		finished[s.AnalysisID] = s.Done && s.Result != nil
	}
	for _, n := range names {
		p := r.byName[n]
		if !finished[p.analysisID] || p.recovery != "" && !finished[p.recovery] {
			return false, nil
		}
	}
	return true, nil
}

// intents returns the outbox's intents in state ("" for all), oldest
// first.
func (r *run) intents(state string) ([]openrecall.OutboxIntent, error) {
	var list []openrecall.OutboxIntent
	if _, err := r.api(http.MethodGet, "/api/v1/outbox?limit=1000&state="+state, r.read, nil, &list); err != nil {
		return nil, err
	}
	slices.SortFunc(list, func(a, b openrecall.OutboxIntent) int { return int(a.ID - b.ID) })
	return list, nil
}

// settle waits until everything posted is analysed, nothing is pending in
// the outbox, and Alertmanager has sent on every alert openrecall posted
// to it and every resolve: a positive signal, so a late delivery is seen,
// never missed by counting too early.
func (r *run) settle(what string) error {
	var names []string
	for _, p := range r.posted {
		names = append(names, p.name)
	}
	var last string
	err := r.waitUntil(what+" to settle", func() (bool, error) {
		if ok, err := r.done(names...); err != nil || !ok {
			last = "analyses not finished"
			return false, err
		}
		all, err := r.intents("")
		if err != nil {
			return false, err
		}
		pending, dead := 0, 0
		for _, in := range all {
			switch in.State {
			case openrecall.IntentPending:
				pending++
			case openrecall.IntentDead:
				dead++
			}
		}
		missing, posted := r.amBehind(all)
		last = fmt.Sprintf("%d intents, %d pending, %d dead; Alertmanager has yet to send on %d of %d", len(all), pending, dead, missing, posted)
		return pending == 0 && missing == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%w: %s", err, last)
	}
	fmt.Printf("   settled: %s\n", last)
	return nil
}

// amBehind returns how many of the alerts and resolves openrecall posted
// to Alertmanager (all's sent intents to it, updates aside: those send
// nothing) Alertmanager has not sent on to the sink yet, and how many
// were posted.
func (r *run) amBehind(all []openrecall.OutboxIntent) (missing, posted int) {
	got := map[string]bool{}
	for _, e := range r.sink.received() {
		got[amKind(e.Status)+" "+e.Labels["openrecall_episode"]] = true
	}
	for _, in := range all {
		if in.Receiver == rcvAM && in.State == openrecall.IntentSent && in.Kind != openrecall.IntentUpdate {
			posted++
			if !got[in.Kind+" "+in.Key] {
				missing++
			}
		}
	}
	return missing, posted
}

// amKind names the kind of notification an alert Alertmanager sent on
// stands for.
func amKind(status string) string {
	if status == "resolved" {
		return openrecall.IntentResolve
	}
	return openrecall.IntentTrigger
}

// checkTriage checks what serve decided of the night's alerts: what the
// rest of the check takes as given.
func (r *run) checkTriage(rs []served) {
	fmt.Println("   triage:")
	by := map[string]served{}
	for _, s := range rs {
		by[s.AnalysisID] = s
	}
	var storm []served
	for _, p := range r.posted {
		s, ok := by[p.analysisID]
		if !ok || s.Result == nil {
			r.check(false, "%s (%s) analysed", p.name, p.analysisID)
			continue
		}
		res := *s.Result
		left := res.Decision == openrecall.DecisionEscalated || res.Decision == openrecall.DecisionReal
		switch p.category {
		case catRepeat:
			closed := res.Bypassed
			how := "bypassed by memory"
			if res.Grouped() {
				head := by[res.Group.HeadAnalysisID]
				closed = head.Result != nil && head.Result.Bypassed && res.Decision.Benign()
				how = "closed as a member of the group of " + res.Group.HeadAnalysisID + ", which memory bypassed"
			}
			r.check(closed, "%s (%s) %s (decision %s)", p.name, p.analysisID, how, res.Decision)
		case catStorm:
			storm = append(storm, s)
		case catDetection:
			r.check(left && !res.Bypassed && res.Fingerprint.AttackPattern != "", "%s (%s) left to a person (decision %s, attack pattern %q)",
				p.name, p.analysisID, res.Decision, res.Fingerprint.AttackPattern)
		default:
			r.check(left && !res.Bypassed, "%s (%s) left to a person (decision %s, severity %s)", p.name, p.analysisID, res.Decision, res.Alert.Severity)
		}
	}
	heads, members := 0, 0
	var decisions []string
	for _, s := range storm {
		if s.Result.Grouped() {
			members++
		} else {
			heads++
		}
		decisions = append(decisions, string(s.Result.Decision))
	}
	slices.Sort(decisions)
	same := len(slices.Compact(slices.Clone(decisions))) == 1
	r.check(heads == 1 && members == len(storm)-1 && same && (decisions[0] == "real" || decisions[0] == "escalated"),
		"the storm of %d is one group: %d head, %d members taking its decision (%s)", len(storm), heads, members, strings.Join(decisions, ", "))
}

// repoRoot returns the repository's root: the directory above the working
// directory that holds go.mod ("." when none does).
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return "."
		}
	}
}

// clip cuts s to n bytes at most, for a report line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
