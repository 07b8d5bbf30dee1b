package local

import (
	"strings"
	"sync"
	"sync/atomic"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
)

// item is one template line with the topics a recorded dead end may cover.
// An item is left out when a recalled memory's dead end mentions one of its
// topics: somebody already tried it and it did not help.
type item struct {
	text   string
	topics []string
}

func it(text string, topics ...string) item { return item{text: text, topics: topics} }

// template is the advice for one error class, dependency or attack pattern.
type template struct {
	hypotheses, verify, next []item
}

// Topic groups shared by many items; functions, so the package keeps no
// mutable state.
func rollbackTopics() []string {
	return []string{"rollback", "roll back", "rolled back", "rolling back", "revert", "previous version"}
}

func restartTopics() []string {
	return []string{"restart", "delete the pod", "deleted the pod", "deleting the pod", "bounce", "bounced"}
}

func scaleTopics() []string { return []string{"scale", "replica", "hpa"} }

func topics(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// errorTemplate returns the advice for an error class; an unknown class gets
// the generic advice.
func errorTemplate(class string) template {
	switch class {
	case "crashloopbackoff":
		return template{
			hypotheses: []item{
				it("The latest rollout ships an image or entrypoint that exits on start.", topics(rollbackTopics())...),
				it("A required config value or secret is missing, so the process exits during start-up.", "configmap", "secret", "env var"),
				it("The liveness probe kills a container that starts slower than the probe allows.", "probe", "liveness"),
			},
			verify: []item{
				it("kubectl {ns}describe pod -l app={svc}", "describe"),
				it("kubectl {ns}logs -l app={svc} --previous --tail=100", "logs", "log "),
				it("kubectl {ns}rollout history deployment/{svc}", topics(rollbackTopics(), []string{"rollout history"})...),
			},
			next: []item{
				it("Match the exit code and last log lines to the latest rollout; roll back if the crash started with it.", topics(rollbackTopics())...),
				it("Restarting the pod does not fix a crash loop: fix the cause, then let the deployment recover.", restartTopics()...),
			},
		}
	case "oomkilled":
		return template{
			hypotheses: []item{
				it("The memory limit is too low for the current load or heap settings.", "memory limit", "raise the limit", "raised the limit", "increase the limit", "increased the limit", "limits"),
				it("A memory leak arrived with a recent release and grows until the kernel kills the container.", topics(rollbackTopics(), []string{"leak", "heap dump", "profile"})...),
				it("A traffic spike or an oversized batch inflates memory per pod.", scaleTopics()...),
			},
			verify: []item{
				it("kubectl {ns}describe pod -l app={svc}", "describe"),
				it("kubectl {ns}top pod -l app={svc} --containers", "kubectl top"),
				it(`promtool query instant http://prometheus:9090 'max by (pod) (container_memory_working_set_bytes{container="{svc}"})'`, "working set", "promtool"),
			},
			next: []item{
				it("Compare memory growth with deploy times: a step after a deploy is a leak, a plateau at the limit is sizing.", topics(rollbackTopics())...),
			},
		}
	case "http_5xx":
		return template{
			hypotheses: []item{
				it("A recent deploy introduced a server error on a hot path.", topics(rollbackTopics())...),
				it("A downstream dependency fails and its errors propagate as 5xx.", "downstream"),
				it("The pods are saturated and shed requests.", scaleTopics()...),
			},
			verify: []item{
				it(`promtool query instant http://prometheus:9090 'sum by (code) (rate(http_requests_total{service="{svc}",code=~"5.."}[5m]))'`, "promtool", "error rate"),
				it("kubectl {ns}logs -l app={svc} --since=15m --tail=200", "logs", "log "),
				it(`curl -sS -o /dev/null -w '%{http_code} %{time_total}s\n' http://{svc}/healthz`, "curl", "health"),
			},
			next: []item{
				it("If the error rate rose with a deploy, roll back first and investigate after.", topics(rollbackTopics())...),
			},
		}
	case "http_4xx":
		return template{
			hypotheses: []item{
				it("A client release sends malformed or unauthorised requests.", "client"),
				it("An API change or route removal breaks existing callers.", topics(rollbackTopics())...),
				it("A crawler or scanner probes non-existent paths.", "crawler", "scanner", "bot"),
			},
			verify: []item{
				it(`promtool query instant http://prometheus:9090 'topk(5, sum by (path, code) (rate(http_requests_total{service="{svc}",code=~"4.."}[5m])))'`, "promtool"),
				it("kubectl {ns}logs -l app={svc} --since=15m --tail=200", "logs", "log "),
			},
			next: []item{it("Find the top client and path behind the 4xx before changing the service.")},
		}
	case "timeout":
		return template{
			hypotheses: []item{
				it("A slow dependency holds requests past the client timeout.", "downstream", "dependency"),
				it("CPU throttling or saturation slows request handling.", topics(scaleTopics(), []string{"cpu"})...),
				it("A network policy or connection limit delays new connections.", "network policy", "firewall"),
			},
			verify: []item{
				it(`curl -sS -o /dev/null -w 'connect %{time_connect}s ttfb %{time_starttransfer}s total %{time_total}s\n' http://{svc}/healthz`, "curl"),
				it("kubectl {ns}top pod -l app={svc}", "kubectl top"),
			},
			next: []item{it("Find which hop adds the latency (connect, first byte or transfer) before raising any timeout.", "timeout value", "raised the timeout", "increase the timeout", "increased the timeout")},
		}
	case "tls_handshake":
		return template{
			hypotheses: []item{
				it("The served certificate is expired, not yet valid or issued for another name.", "certificate", "cert"),
				it("The chain lacks an intermediate certificate that clients need.", "intermediate", "chain"),
				it("Client and server share no TLS version or cipher after a config change.", "cipher", "tls version"),
			},
			verify: []item{
				it("openssl s_client -connect {svc}:443 -servername {svc} -showcerts </dev/null", "s_client", "openssl"),
				it("openssl s_client -connect {svc}:443 -servername {svc} </dev/null 2>/dev/null | openssl x509 -noout -subject -issuer -dates", "s_client", "openssl"),
			},
			next: []item{it("Renew or fix the certificate chain, then confirm with s_client from a client network.")},
		}
	case "auth_failure":
		return template{
			hypotheses: []item{
				it("A credential or token was rotated and a client still uses the old one.", "rotate", "rotated", "credential", "token"),
				it("The identity provider is degraded or unreachable.", "identity provider", "idp", "oidc"),
				it("Clock skew makes tokens look expired or not yet valid.", "clock", "ntp", "skew"),
			},
			verify: []item{
				it("kubectl {ns}logs -l app={svc} --since=15m | grep -iE 'unauthori|forbidden|expired|invalid'", "logs", "log "),
				it("kubectl {ns}get secret -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp", "secret"),
			},
			next: []item{it("Count failures per client and user: many users on one client is config, one user on many clients is an account problem.")},
		}
	case "connection_refused":
		return template{
			hypotheses: []item{
				it("The target pods are not ready, so nothing listens on the port.", "readiness", "ready"),
				it("The service selector or port no longer matches the pods after a change.", "selector", "endpoints", "port"),
			},
			verify: []item{
				it("kubectl {ns}get endpoints {svc}", "endpoints"),
				it("kubectl {ns}describe service {svc}", "describe"),
				it(`curl -sv -o /dev/null -w '%{http_code}\n' http://{svc}/healthz`, "curl"),
			},
			next: []item{it("If the endpoints list is empty, fix readiness or the selector before touching clients.")},
		}
	case "pool_exhausted":
		return template{
			hypotheses: []item{
				it("Connections leak: code paths that do not return them to the pool.", "leak"),
				it("Slow queries hold connections longer than usual.", "slow quer", "query plan", "index"),
				it("The pool is too small for current concurrency.", "pool size", "max_connections", "increase the pool", "increased the pool", "raised the pool"),
			},
			verify: []item{
				it(`psql -X -c "SELECT state, count(*) FROM pg_stat_activity GROUP BY state ORDER BY 2 DESC;"`, "pg_stat_activity"),
				it(`psql -X -c "SELECT pid, now() - query_start AS age, state, left(query, 80) FROM pg_stat_activity WHERE state <> 'idle' ORDER BY age DESC LIMIT 10;"`, "pg_stat_activity", "long running"),
				it(`psql -X -c "SELECT calls, round(mean_exec_time) AS mean_ms, left(query, 80) FROM pg_stat_statements ORDER BY mean_exec_time DESC LIMIT 10;"`, "pg_stat_statements", "slow quer"),
			},
			next: []item{it("Kill only clearly stuck sessions; find the code path that holds connections before resizing the pool.")},
		}
	case "migration_lock":
		return template{
			hypotheses: []item{
				it("A migration job died while holding the migration lock.", "migration job", "lock"),
				it("Two deploys run migrations at the same time.", "concurrent deploy", "two deploys"),
			},
			verify: []item{
				it(`psql -X -c "SELECT l.pid, l.locktype, l.mode, l.granted, a.state, left(a.query, 80) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' OR NOT l.granted;"`, "pg_locks"),
				it("kubectl {ns}get jobs --sort-by=.metadata.creationTimestamp", "jobs"),
			},
			next: []item{it("Confirm the lock holder is dead before releasing the lock; rerun the migration once.")},
		}
	case "config_error":
		return template{
			hypotheses: []item{
				it("A config change shipped an invalid or missing value.", "configmap", "config change"),
				it("A deploy expects a setting the environment does not have yet.", topics(rollbackTopics())...),
			},
			verify: []item{
				it("kubectl {ns}get configmap -o yaml", "configmap"),
				it("kubectl {ns}rollout history deployment/{svc}", "rollout history"),
				it("kubectl {ns}logs -l app={svc} --tail=100", "logs", "log "),
			},
			next: []item{it("Revert the last config change if the errors started with it.", topics(rollbackTopics())...)},
		}
	case "image_pull":
		return template{
			hypotheses: []item{
				it("The image tag does not exist in the registry (typo or failed build).", "tag"),
				it("Registry credentials expired or the pull secret is missing.", "pull secret", "regcred", "credential"),
				it("The registry rate-limits or is unreachable from the nodes.", "rate limit", "registry"),
			},
			verify: []item{
				it("kubectl {ns}describe pod -l app={svc}", "describe"),
				it("kubectl {ns}get events --field-selector reason=Failed --sort-by=.lastTimestamp", "events"),
			},
			next: []item{it("Fix the tag or the pull secret; the kubelet retries the pull by itself.", restartTopics()...)},
		}
	case "dns_failure":
		return template{
			hypotheses: []item{
				it("CoreDNS is overloaded or crashing.", "coredns", "kube-dns"),
				it("A record was changed or removed.", "record"),
				it("Search-path expansion (ndots) multiplies lookups and times out.", "ndots", "search path"),
			},
			verify: []item{
				it("dig +short {svc}.svc.cluster.local", "dig", "nslookup"),
				it("kubectl -n kube-system logs -l k8s-app=kube-dns --tail=100", "coredns", "kube-dns"),
				it("kubectl -n kube-system top pod -l k8s-app=kube-dns", "coredns", "kube-dns"),
			},
			next: []item{it("If CoreDNS is saturated, scale it; if a record changed, restore it at its source.")},
		}
	case "disk_pressure":
		return template{
			hypotheses: []item{
				it("Logs or temporary files fill the node or volume.", "log rotation", "logrotate", "clean"),
				it("A persistent volume is near capacity as data grows.", "resize", "expand", "volume"),
			},
			verify: []item{
				it("kubectl describe nodes | grep -A6 Conditions", "describe node", "conditions"),
				it("kubectl {ns}exec deploy/{svc} -- df -h", "df"),
			},
			next: []item{it("Free space with retention, not by deleting data blindly; then resize if growth is real.")},
		}
	case "cert_expiry":
		return template{
			hypotheses: []item{
				it("Automatic renewal failed (cert-manager or ACME challenge).", "cert-manager", "acme", "renew"),
				it("A manually managed certificate was never scheduled for renewal.", "manual"),
			},
			verify: []item{
				it("openssl s_client -connect {svc}:443 -servername {svc} </dev/null 2>/dev/null | openssl x509 -noout -enddate", "s_client", "openssl"),
				it("kubectl get certificates -A", "certificates"),
			},
			next: []item{it("Renew before expiry and add an expiry alert 21 days ahead.")},
		}
	case "latency_slo":
		return template{
			hypotheses: []item{
				it("A slow dependency adds latency to each request.", "downstream", "dependency"),
				it("CPU throttling or garbage-collection pauses slow the service.", "cpu", "gc", "throttl"),
				it("A recent deploy added an expensive code path.", topics(rollbackTopics())...),
			},
			verify: []item{
				it(`promtool query instant http://prometheus:9090 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service="{svc}"}[5m])))'`, "promtool", "p99"),
				it("kubectl {ns}top pod -l app={svc}", "kubectl top"),
			},
			next: []item{it("Check the burn rate: a fast burn pages now, a slow burn becomes a ticket.")},
		}
	case "replication_lag":
		return template{
			hypotheses: []item{
				it("A long transaction or bulk write on the primary outpaces replay.", "bulk", "long transaction", "vacuum"),
				it("The replica is under-provisioned (I/O or CPU).", "replica size", "iops", "resize"),
				it("Network between primary and replica is degraded.", "network"),
			},
			verify: []item{
				it(`psql -X -c "SELECT now() - pg_last_xact_replay_timestamp() AS replay_lag;"`, "pg_last_xact_replay_timestamp", "replay_lag"),
				it(`psql -X -c "SELECT client_addr, state, write_lag, flush_lag, replay_lag FROM pg_stat_replication;"`, "pg_stat_replication"),
			},
			next: []item{it("Route reads that need fresh data to the primary until lag recovers.")},
		}
	case "queue_backlog":
		return template{
			hypotheses: []item{
				it("Consumers are down, crash-looping or too few.", topics(scaleTopics(), []string{"consumer"})...),
				it("Producers burst above the normal rate.", "producer", "burst"),
				it("A poison message blocks a partition or queue.", "poison", "dead letter", "dlq"),
			},
			verify: []item{
				it("kubectl {ns}get pods -l app={svc} -o wide", "get pods"),
				it(`promtool query instant http://prometheus:9090 'sum by (queue) (queue_depth)'`, "promtool", "depth"),
			},
			next: []item{it("Scale consumers only after ruling out a poison message; otherwise they all stall on it.", scaleTopics()...)},
		}
	}
	return template{
		hypotheses: []item{
			it("A recent deploy or config change in the service.", topics(rollbackTopics())...),
			it("A dependency of the service is degraded.", "dependency", "downstream"),
		},
		verify: []item{
			it("kubectl {ns}describe pod -l app={svc}", "describe"),
			it("kubectl {ns}logs -l app={svc} --since=15m --tail=200", "logs", "log "),
			it("kubectl {ns}rollout history deployment/{svc}", "rollout history"),
		},
		next: []item{it("Correlate the alert start with recent changes, then narrow down with the commands above.")},
	}
}

// dependencyTemplate returns the advice added for a dependency pattern.
func dependencyTemplate(dep string) template {
	switch dep {
	case "configmap":
		return template{
			hypotheses: []item{it("A ConfigMap change was rolled out without a matching code change.", "configmap")},
			verify:     []item{it("kubectl {ns}get configmap -o yaml", "configmap")},
		}
	case "dns":
		return template{
			hypotheses: []item{it("Name resolution of a dependency fails intermittently.", "dns", "coredns")},
			verify:     []item{it("dig +tries=1 +time=2 {svc}.svc.cluster.local", "dig", "dns")},
		}
	case "downstream_api":
		return template{
			hypotheses: []item{it("A downstream API is slow or failing.", "downstream")},
			verify:     []item{it(`curl -sS -o /dev/null -w '%{http_code} %{time_total}s\n' https://DOWNSTREAM_HOST/health`, "downstream", "curl")},
		}
	case "queue":
		return template{
			hypotheses: []item{it("The message queue is backed up or unavailable.", "queue", "broker")},
			verify:     []item{it(`promtool query instant http://prometheus:9090 'sum by (queue) (queue_depth)'`, "queue depth", "promtool")},
		}
	case "object_store":
		return template{
			hypotheses: []item{it("The object store throttles or rejects requests.", "object store", "s3", "bucket")},
			verify:     []item{it(`curl -sS -I -w '%{http_code} %{time_total}s\n' https://OBJECT_STORE_ENDPOINT/`, "object store", "curl")},
		}
	case "database":
		return template{
			hypotheses: []item{it("The database is saturated by connections or slow queries.", "database", "slow quer")},
			verify:     []item{it(`psql -X -c "SELECT state, wait_event_type, count(*) FROM pg_stat_activity GROUP BY 1, 2 ORDER BY 3 DESC;"`, "pg_stat_activity")},
		}
	case "cache":
		return template{
			hypotheses: []item{it("The cache is evicting, full or slow, so load falls through to the backing store.", "cache", "redis", "evict")},
			verify: []item{
				it("redis-cli -h REDIS_HOST INFO stats | grep -E 'evicted_keys|keyspace_(hits|misses)'", "redis", "cache"),
				it("redis-cli -h REDIS_HOST --latency -c 20", "redis latency"),
			},
		}
	case "identity_provider":
		return template{
			hypotheses: []item{it("The identity provider is degraded or its signing keys rotated.", "identity provider", "idp", "jwks")},
			verify:     []item{it(`curl -sS -o /dev/null -w '%{http_code} %{time_total}s\n' https://IDP_HOST/.well-known/openid-configuration`, "idp", "curl")},
		}
	case "smtp":
		return template{
			hypotheses: []item{it("The SMTP relay rejects or delays mail.", "smtp", "relay")},
			verify:     []item{it("openssl s_client -starttls smtp -connect SMTP_HOST:587 </dev/null", "smtp", "s_client")},
		}
	case "payment_provider":
		return template{
			hypotheses: []item{it("The payment provider has an incident or rate-limits us.", "payment provider", "provider status")},
			verify:     []item{it(`curl -sS -o /dev/null -w '%{http_code} %{time_total}s\n' https://PAYMENT_PROVIDER_HOST/health`, "payment provider", "curl")},
		}
	case "feature_flag":
		return template{
			hypotheses: []item{it("A feature flag change switched on a faulty code path.", "feature flag", "flag")},
			verify:     []item{it("Review the flag audit log for changes in the hour before the alert.", "flag")},
		}
	case "secret_store":
		return template{
			hypotheses: []item{it("The secret store is unreachable or a secret was rotated.", "secret", "vault")},
			verify:     []item{it("kubectl {ns}get secret -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp", "secret")},
		}
	}
	return template{}
}

// attackTemplate returns the advice for a security case.
func attackTemplate(pattern string) template {
	h := map[string]string{
		"brute_force":          "Repeated password guesses against one or a few accounts.",
		"port_scan":            "An external or compromised host maps open ports.",
		"suspicious_login":     "A login from an unusual location, device or time.",
		"credential_stuffing":  "Leaked credentials are tried across many accounts.",
		"sql_injection":        "Injected SQL in request parameters reaches the database.",
		"xss":                  "Script injected into pages served to other users.",
		"csrf":                 "Forged cross-site requests ride on user sessions.",
		"ssrf":                 "The service is made to fetch internal URLs for an attacker.",
		"rce":                  "Remote code execution through a vulnerable endpoint or dependency.",
		"path_traversal":       "Requests with ../ sequences read files outside the web root.",
		"malware":              "Malware is running on a host or in a container.",
		"data_exfiltration":    "Data leaves the network to an unusual destination.",
		"privilege_escalation": "An account or process gained privileges it should not have.",
	}[pattern]
	if h == "" {
		h = "A security signal that needs investigation (" + pattern + ")."
	}
	return template{
		hypotheses: []item{
			it(h),
			it("An authorised test (pentest, scanner, drill) that was not announced: confirm with the security team, never assume it.", "pentest", "drill", "authorised test", "authorized test"),
		},
		verify: []item{
			it("kubectl {ns}logs -l app={svc} --since=1h | grep -iE 'denied|failed|unauthori|select|union|\\.\\./'", "logs", "log "),
			it("kubectl {ns}get events --sort-by=.lastTimestamp", "events"),
		},
		next: []item{
			it("Preserve evidence (logs, request samples, source addresses) before any cleanup."),
			it("Block or rate-limit the source only after capturing evidence.", "block", "blocked", "rate-limit", "rate limit"),
		},
	}
}

// advice is the advice of one case with covered items removed and
// placeholders filled.
type advice struct {
	hypotheses, verify, next []string
}

const (
	maxHypotheses = 4
	maxVerify     = 5
	maxNext       = 3
)

// templates memoizes the advice templates by kind and name: they are
// immutable once built and every answer asks for two or three of them. At
// most maxMemo are kept (names come from closed vocabularies; a case file
// naming others builds them afresh).
var templates sync.Map

const maxMemo = 512

var memoCount atomic.Int64

// memo returns build(name), built once per kind and name.
func memo(kind, name string, build func(string) template) template {
	key := kind + "\x00" + name
	if t, ok := templates.Load(key); ok {
		return t.(template)
	}
	t := build(name)
	if memoCount.Load() < maxMemo {
		if _, loaded := templates.LoadOrStore(key, t); !loaded {
			memoCount.Add(1)
		}
	}
	return t
}

// plan builds the advice of one case: attack, error class and dependency
// templates in that order, capped per list, without the items a recalled dead
// end covers.
func plan(c routing.CaseFile, fp openrecall.Fingerprint) advice {
	var tpls []template
	if fp.HasAttack() {
		tpls = append(tpls, memo("attack", fp.AttackPattern, attackTemplate))
	}
	tpls = append(tpls, memo("error", fp.ErrorClass, errorTemplate), memo("dependency", fp.DependencyPattern, dependencyTemplate))
	var deadEnds []string
	for _, m := range c.Memories {
		for _, d := range m.DeadEnds {
			deadEnds = append(deadEnds, openrecall.CanonicalText(d))
		}
	}
	var fill func(string) string
	var adv advice
	seen := map[string]bool{}
	add := func(dst *[]string, items []item, limit int) {
		for _, x := range items {
			if len(*dst) >= limit || covered(x, deadEnds) {
				continue
			}
			text := x.text
			if strings.IndexByte(text, '{') >= 0 {
				if fill == nil {
					fill = placeholders(c)
				}
				text = fill(text)
			}
			if seen[text] {
				continue
			}
			seen[text] = true
			*dst = append(*dst, text)
		}
	}
	for _, t := range tpls {
		add(&adv.hypotheses, t.hypotheses, maxHypotheses)
		add(&adv.verify, t.verify, maxVerify)
		add(&adv.next, t.next, maxNext)
	}
	// Dead ends may cover most of a template: fall back on the generic
	// advice so every answer keeps two hypotheses and two commands where
	// the generic advice still has uncovered ones.
	generic := memo("error", "", errorTemplate)
	if len(adv.hypotheses) < 2 {
		add(&adv.hypotheses, generic.hypotheses, 2)
	}
	if len(adv.verify) < 2 {
		add(&adv.verify, generic.verify, 2)
	}
	return adv
}

// covered reports whether a recalled dead end mentions one of the item's
// topics.
func covered(x item, deadEnds []string) bool {
	for _, d := range deadEnds {
		for _, t := range x.topics {
			if strings.Contains(d, t) {
				return true
			}
		}
	}
	return false
}
