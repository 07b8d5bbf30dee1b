package fingerprint

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

type fieldCase struct {
	name  string
	alert openrecall.Alert
	want  string
}

func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func runFieldCases(t *testing.T, field string, tests []fieldCase) {
	t.Helper()
	e := newDefault(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := e.Extract(tt.alert).Get(field)
			if got != tt.want {
				_, ev := e.Explain(tt.alert)
				t.Errorf("%s = %q, want %q (evidence %+v)", field, got, tt.want, ev)
			}
		})
	}
}

func TestErrorClass(t *testing.T) {
	runFieldCases(t, openrecall.FieldErrorClass, []fieldCase{
		{"alertname crashloop", openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping")}, "crashloopbackoff"},
		{"alertname case-insensitive", openrecall.Alert{Labels: labels("alertname", "kubepodcrashlooping")}, "crashloopbackoff"},
		{"alertname oom", openrecall.Alert{Labels: labels("alertname", "ContainerOOMKilled")}, "oomkilled"},
		{"alertname oom short", openrecall.Alert{Labels: labels("alertname", "OOMKilled")}, "oomkilled"},
		{"alertname target down", openrecall.Alert{Labels: labels("alertname", "TargetDown")}, "connection_refused"},
		{"alertname pod not ready", openrecall.Alert{Labels: labels("alertname", "KubePodNotReady")}, "pod_not_ready"},
		// Common exporters (node-exporter, kube-state-metrics, databases,
		// queues, proxies, blackbox), by the words of their alert names.
		{"host disk space", openrecall.Alert{Labels: labels("alertname", "HostOutOfDiskSpace")}, "disk_pressure"},
		{"host inodes", openrecall.Alert{Labels: labels("alertname", "HostOutOfInodes")}, "disk_pressure"},
		{"host memory", openrecall.Alert{Labels: labels("alertname", "HostOutOfMemory")}, "memory_pressure"},
		{"host cpu", openrecall.Alert{Labels: labels("alertname", "HostHighCpuLoad")}, "cpu_saturation"},
		{"host network", openrecall.Alert{Labels: labels("alertname", "HostNetworkReceiveErrors")}, "network_errors"},
		{"host clock", openrecall.Alert{Labels: labels("alertname", "HostClockSkew")}, "clock_skew"},
		{"cpu throttling", openrecall.Alert{Labels: labels("alertname", "CPUThrottlingHigh")}, "cpu_saturation"},
		{"k8s node not ready", openrecall.Alert{Labels: labels("alertname", "KubernetesNodeNotReady")}, "node_not_ready"},
		{"k8s pvc", openrecall.Alert{Labels: labels("alertname", "KubernetesPersistentvolumeclaimPending")}, "volume_error"},
		{"k8s oom", openrecall.Alert{Labels: labels("alertname", "KubernetesContainerOomKiller")}, "oomkilled"},
		{"mysql restarted", openrecall.Alert{Labels: labels("alertname", "MysqlRestarted")}, "restarted"},
		{"mysql replication", openrecall.Alert{Labels: labels("alertname", "MysqlSlaveIoThreadNotRunning")}, "replication_lag"},
		{"mongodb replica member", openrecall.Alert{Labels: labels("alertname", "MongodbReplicaMemberUnhealthy")}, "cluster_degraded"},
		{"postgres connections", openrecall.Alert{Labels: labels("alertname", "PostgresqlTooManyConnections")}, "pool_exhausted"},
		{"redis missing master", openrecall.Alert{Labels: labels("alertname", "RedisMissingMaster")}, "replication_lag"},
		{"elasticsearch cluster red", openrecall.Alert{Labels: labels("alertname", "ElasticsearchClusterRed")}, "cluster_degraded"},
		{"rabbitmq messages", openrecall.Alert{Labels: labels("alertname", "RabbitmqTooManyMessagesInQueue")}, "queue_backlog"},
		{"kafka lag", openrecall.Alert{Labels: labels("alertname", "KafkaConsumersGroupLag")}, "queue_backlog"},
		{"haproxy 5xx", openrecall.Alert{Labels: labels("alertname", "HaproxyHighHttp5xxErrorRateBackend")}, "http_5xx"},
		{"mysql down", openrecall.Alert{Labels: labels("alertname", "MysqlDown")}, "service_down"},
		{"blackbox ssl", openrecall.Alert{Labels: labels("alertname", "BlackboxSslCertificateWillExpireSoon")}, "cert_expiry"},
		{"probe timed out is a timeout", openrecall.Alert{Labels: labels("alertname", "ProbeFailed"), Text: "probe of https://shop.example.com timed out after 5s; connection reset"}, "timeout"},
		{"generic word yields to the text", openrecall.Alert{Labels: labels("alertname", "ShopDown"), Text: "dns lookup failed"}, "dns_failure"},
		{"alertname 5xx", openrecall.Alert{Labels: labels("alertname", "HTTP5xxErrors")}, "http_5xx"},
		{"alertname 4xx", openrecall.Alert{Labels: labels("alertname", "HighHTTP4xxRate")}, "http_4xx"},
		{"alertname cert", openrecall.Alert{Labels: labels("alertname", "SSLCertExpiry")}, "cert_expiry"},
		{"alertname disk", openrecall.Alert{Labels: labels("alertname", "KubeNodeDiskPressure")}, "disk_pressure"},
		{"alertname replication", openrecall.Alert{Labels: labels("alertname", "MySQLReplicationLag")}, "replication_lag"},
		{"alertname queue", openrecall.Alert{Labels: labels("alertname", "RabbitMQQueueBacklog")}, "queue_backlog"},
		{"alertname latency", openrecall.Alert{Labels: labels("alertname", "HighLatency")}, "latency_slo"},
		{"alertname image pull", openrecall.Alert{Labels: labels("alertname", "KubeImagePullBackOff")}, "image_pull"},
		{"alertname by words", openrecall.Alert{Labels: labels("alertname", "PaymentsConsumerGroupLagHigh")}, "queue_backlog"},
		{"kube-state-metrics reason", openrecall.Alert{Labels: labels("alertname", "KubeContainerWaiting", "reason", "ErrImagePull")}, "image_pull"},
		{"label beats text", openrecall.Alert{Labels: labels("alertname", "TargetDown"), Text: "request timed out"}, "connection_refused"},
		{"title beats text", openrecall.Alert{Title: "dns lookup failed", Text: "connection refused"}, "dns_failure"},
		{"text crashloop", openrecall.Alert{Text: "Back-off restarting failed container"}, "crashloopbackoff"},
		{"text oom", openrecall.Alert{Text: "Memory cgroup out of memory: Killed process 4242"}, "oomkilled"},
		{"text http 503", openrecall.Alert{Text: "upstream returned 503"}, "http_5xx"},
		{"text status code", openrecall.Alert{Text: "status code: 502"}, "http_5xx"},
		{"text 5xx word", openrecall.Alert{Text: "5xx ratio above 5%"}, "http_5xx"},
		{"text reason phrase", openrecall.Alert{Text: "504 Gateway Timeout from nginx"}, "http_5xx"},
		{"text 404", openrecall.Alert{Text: "GET /v1/items returned 404"}, "http_4xx"},
		{"bare number is not a status", openrecall.Alert{Text: "queue has 503 items waiting"}, ""},
		{"port is not a status", openrecall.Alert{Text: "listening on 10.0.0.1:500"}, ""},
		{"tls", openrecall.Alert{Text: "remote error: tls: handshake failure"}, "tls_handshake"},
		{"certificate name expired", openrecall.Alert{Text: "test certificate dev-playground.example.dev expired in dev"}, "cert_expiry"},
		{"x509 expired is cert expiry", openrecall.Alert{Text: "x509: certificate has expired or is not yet valid"}, "cert_expiry"},
		{"dns", openrecall.Alert{Text: "dial tcp: lookup db.internal on 10.96.0.10:53: no such host"}, "dns_failure"},
		{"pool", openrecall.Alert{Text: "HikariPool-1 - Connection is not available, request timed out after 30000ms"}, "pool_exhausted"},
		{"pg slots", openrecall.Alert{Text: "FATAL: remaining connection slots are reserved for non-replication superuser connections"}, "pool_exhausted"},
		{"migration lock", openrecall.Alert{Text: "Waiting for schema migration lock held by another deploy"}, "migration_lock"},
		{"replication", openrecall.Alert{Text: "Seconds_Behind_Master is 340"}, "replication_lag"},
		{"consumer lag", openrecall.Alert{Text: "consumer group lag on topic orders"}, "queue_backlog"},
		{"disk", openrecall.Alert{Text: "write /var/lib/data: no space left on device"}, "disk_pressure"},
		{"auth failure", openrecall.Alert{Text: "authentication failed for user svc-reporting"}, "auth_failure"},
		{"auth 401", openrecall.Alert{Text: "upstream returned 401"}, "auth_failure"},
		{"connection refused", openrecall.Alert{Text: "dial tcp 10.0.0.5:5432: connect: connection refused"}, "connection_refused"},
		{"timeout", openrecall.Alert{Text: "context deadline exceeded"}, "timeout"},
		{"latency", openrecall.Alert{Text: "p99 latency above objective"}, "latency_slo"},
		{"config", openrecall.Alert{Text: "failed to parse config: yaml: line 3"}, "config_error"},
		{"nothing", openrecall.Alert{Title: "Prometheus self-scrape target is up"}, ""},
		{"empty alert", openrecall.Alert{}, ""},
	})
}

func TestServiceRole(t *testing.T) {
	runFieldCases(t, openrecall.FieldServiceRole, []fieldCase{
		{"table checkout-api", openrecall.Alert{Labels: labels("service", "checkout-api")}, "api_edge"},
		{"exporter mysql", openrecall.Alert{Labels: labels("alertname", "MysqlDown", "job", "mysqld-exporter")}, "db_primary"},
		{"exporter replica by name", openrecall.Alert{Labels: labels("alertname", "PostgresqlReplicaLagging", "job", "embedded-exporter")}, "db_replica"},
		{"exporter redis", openrecall.Alert{Labels: labels("alertname", "RedisMissingMaster", "job", "embedded-exporter")}, "cache"},
		{"exporter cassandra", openrecall.Alert{Labels: labels("alertname", "CassandraNodeDown")}, "storage"},
		{"exporter kafka", openrecall.Alert{Labels: labels("alertname", "KafkaConsumersGroupLag")}, "queue_consumer"},
		{"exporter nginx", openrecall.Alert{Labels: labels("alertname", "NginxHighHttp5xxErrorRate")}, "api_edge"},
		{"exporter node", openrecall.Alert{Labels: labels("alertname", "HostOutOfMemory", "job", "node-exporter")}, "host"},
		{"workload alert has no platform role", openrecall.Alert{Labels: labels("alertname", "KubernetesPodCrashLooping")}, ""},
		{"service label beats alert name", openrecall.Alert{Labels: labels("alertname", "RedisDown", "service", "payments")}, "payment_service"},
		{"gateway", openrecall.Alert{Service: "gateway"}, "api_edge"},
		{"suffix api", openrecall.Alert{Service: "orders-api"}, "api_edge"},
		{"ingress", openrecall.Alert{Labels: labels("app", "ingress-nginx")}, "api_edge"},
		{"frontend", openrecall.Alert{Service: "web-frontend"}, "web_frontend"},
		{"ui", openrecall.Alert{Service: "ui"}, "web_frontend"},
		{"worker", openrecall.Alert{Service: "thumbnail-worker"}, "batch_worker"},
		{"etl", openrecall.Alert{Labels: labels("job", "nightly-etl")}, "batch_worker"},
		{"db primary", openrecall.Alert{Service: "postgres-primary"}, "db_primary"},
		{"db primary statefulset ordinal", openrecall.Alert{Labels: labels("container", "postgres-primary-0")}, "db_primary"},
		{"mysql primary", openrecall.Alert{Service: "mysql-primary"}, "db_primary"},
		{"replica suffix", openrecall.Alert{Service: "orders-db-replica"}, "db_replica"},
		{"read replica", openrecall.Alert{Service: "read-replica"}, "db_replica"},
		{"redis", openrecall.Alert{Service: "redis"}, "cache"},
		{"cache suffix", openrecall.Alert{Service: "session-cache"}, "cache"},
		{"consumer", openrecall.Alert{Service: "orders-consumer"}, "queue_consumer"},
		{"cron", openrecall.Alert{Service: "billing-cron"}, "scheduler"},
		{"keycloak", openrecall.Alert{Service: "keycloak"}, "auth_service"},
		{"sso", openrecall.Alert{Service: "corp-sso"}, "auth_service"},
		{"payment", openrecall.Alert{Service: "checkout-payments"}, "payment_service"},
		{"billing", openrecall.Alert{Service: "billing"}, "payment_service"},
		{"storage", openrecall.Alert{Service: "minio"}, "storage"},
		{"storage suffix", openrecall.Alert{Service: "invoice-storage"}, "storage"},
		{"pod hash stripped", openrecall.Alert{Labels: labels("container", "checkout-api-7d9f8c6b5-x2x9z")}, "api_edge"},
		{"service label before job", openrecall.Alert{Labels: labels("service", "redis", "job", "checkout-api")}, "cache"},
		{"label before Alert.Service", openrecall.Alert{Labels: labels("app", "redis"), Service: "checkout-api"}, "cache"},
		{"kubernetes recommended label", openrecall.Alert{Labels: labels("app.kubernetes.io/name", "keycloak")}, "auth_service"},
		{"unknown", openrecall.Alert{Service: "prometheus"}, ""},
		{"text is not a service", openrecall.Alert{Text: "redis is slow"}, ""},
	})
}

func TestDependencyPattern(t *testing.T) {
	runFieldCases(t, openrecall.FieldDependencyPattern, []fieldCase{
		{"configmap", openrecall.Alert{Text: "key missing from configmap app-config"}, "configmap"},
		{"dns", openrecall.Alert{Text: "coredns returned SERVFAIL"}, "dns"},
		{"downstream", openrecall.Alert{Text: "upstream inventory service slow"}, "downstream_api"},
		{"queue", openrecall.Alert{Text: "kafka broker not available"}, "queue"},
		{"object store", openrecall.Alert{Text: "PUT to S3 failed"}, "object_store"},
		{"database", openrecall.Alert{Text: "postgres connection reset"}, "database"},
		{"cache", openrecall.Alert{Text: "redis timeout"}, "cache"},
		{"idp", openrecall.Alert{Text: "OIDC token endpoint of Okta unreachable"}, "identity_provider"},
		{"smtp", openrecall.Alert{Text: "SMTP relay refused mail"}, "smtp"},
		{"payment provider", openrecall.Alert{Text: "Stripe API errors"}, "payment_provider"},
		{"feature flag", openrecall.Alert{Text: "LaunchDarkly stream disconnected"}, "feature_flag"},
		{"secret store", openrecall.Alert{Text: "Vault sealed"}, "secret_store"},
		{"label", openrecall.Alert{Labels: labels("dependency", "postgres"), Text: "kafka"}, "database"},
		{"replica set is not a database", openrecall.Alert{Text: "6 of 12 new pods stuck, old replica set still serving"}, ""},
		{"none", openrecall.Alert{Text: "cpu high"}, ""},
	})
}

func TestSignalShape(t *testing.T) {
	runFieldCases(t, openrecall.FieldSignalShape, []fieldCase{
		{"spike", openrecall.Alert{Text: "sudden spike in errors"}, "spike"},
		{"sustained", openrecall.Alert{Text: "error rate above 5% for the last 15m"}, "sustained"},
		{"sustained any duration", openrecall.Alert{Text: "error rate above 2% for the last 2h"}, "sustained"},
		{"sawtooth", openrecall.Alert{Text: "memory grows then drops every 30m"}, "sawtooth"},
		{"regression", openrecall.Alert{Text: "latency doubled since the last deploy"}, "regression"},
		{"flapping", openrecall.Alert{Text: "target flapping"}, "flapping"},
		{"flapping alertname", openrecall.Alert{Labels: labels("alertname", "KubeNodeReadinessFlapping")}, "flapping"},
		{"rate window is not sustained", openrecall.Alert{Text: "error rate 12% over 5m"}, ""},
	})
}

func TestAttackPattern(t *testing.T) {
	runFieldCases(t, openrecall.FieldAttackPattern, []fieldCase{
		{"alertname", openrecall.Alert{Labels: labels("alertname", "SSHBruteForce")}, "brute_force"},
		{"alertname words", openrecall.Alert{Labels: labels("alertname", "WindowsRdpBruteForceDetected")}, "brute_force"},
		{"attack label", openrecall.Alert{Labels: labels("attack", "SQLi")}, "sql_injection"},
		{"attack label unknown value", openrecall.Alert{Labels: labels("attack", "weird-thing")}, "suspicious_activity"},
		// An ATT&CK technique anywhere gives its tactic (DESIGN §4).
		{"mitre sub-technique", openrecall.Alert{Labels: labels("mitre_technique", "T1110.004")}, "credential_access"},
		{"mitre technique", openrecall.Alert{Labels: labels("mitre_technique", "T1110")}, "credential_access"},
		{"mitre technique beats words", openrecall.Alert{Labels: labels("mitre_technique", "T1003"), Title: "brute force on bastion"}, "credential_access"},
		{"technique in text", openrecall.Alert{Text: "Falco rule tags: container, T1611, mitre_privilege_escalation"}, "privilege_escalation"},
		{"sigma tag", openrecall.Alert{Labels: labels("tags", "attack.execution,attack.t1059.001")}, "execution"},
		{"tactic id", openrecall.Alert{Title: "TA0010 exfiltration over web service"}, "data_exfiltration"},
		{"tactic name field", openrecall.Alert{Title: "Wazuh rule 5712", Labels: labels("mitre_tactic", "Lateral Movement")}, "lateral_movement"},
		{"technique id inside a word is not one", openrecall.Alert{Title: "build XT1059 finished", Labels: labels("env", "prod")}, ""},
		{"security sender without tactic", openrecall.Alert{Title: "Unexpected outbound connection", Sender: "falcosidekick", Security: true}, "security_detection"},
		{"security sender keeps its attack word", openrecall.Alert{Title: "possible brute force on bastion", Sender: "wazuh", Security: true}, "brute_force"},
		{"security category alone", openrecall.Alert{Labels: labels("category", "security"), Title: "GuardDuty finding"}, "suspicious_activity"},
		{"security category with text", openrecall.Alert{Labels: labels("category", "security"), Text: "nmap scan from 1.2.3.4"}, "port_scan"},
		{"brute force text", openrecall.Alert{Text: "Possible brute force on bastion"}, "brute_force"},
		{"failed password N attempts", openrecall.Alert{Text: "Failed password for root from 203.0.113.5 port 52113 ssh2 (23 attempts)"}, "brute_force"},
		{"failed password multiple", openrecall.Alert{Text: "failed password for admin, multiple sources"}, "brute_force"},
		{"N failed login attempts", openrecall.Alert{Text: "57 failed login attempts for user admin"}, "brute_force"},
		{"port scan", openrecall.Alert{Text: "Port scan detected from 45.33.32.156"}, "port_scan"},
		{"impossible travel", openrecall.Alert{Text: "impossible travel for user bob"}, "suspicious_login"},
		{"login from new country", openrecall.Alert{Text: "Login from new country: BR"}, "suspicious_login"},
		{"credential stuffing", openrecall.Alert{Text: "credential stuffing against /login"}, "credential_stuffing"},
		{"sql injection union", openrecall.Alert{Text: "GET /p?id=1 UNION SELECT password FROM users"}, "sql_injection"},
		{"sql injection or 1=1", openrecall.Alert{Text: "q=' or 1=1 --"}, "sql_injection"},
		{"xss", openrecall.Alert{Text: "q=<script>alert(1)</script>"}, "xss"},
		{"csrf", openrecall.Alert{Text: "CSRF token missing"}, "csrf"},
		{"ssrf metadata ip", openrecall.Alert{Text: "fetch http://169.254.169.254/latest/meta-data/"}, "ssrf"},
		{"ssrf word", openrecall.Alert{Text: "possible SSRF via webhook url"}, "ssrf"},
		{"rce", openrecall.Alert{Text: "remote code execution attempt"}, "rce"},
		{"rce jndi", openrecall.Alert{Text: "${jndi:ldap://x.example/a}"}, "rce"},
		{"path traversal", openrecall.Alert{Text: "GET /../../etc/passwd"}, "path_traversal"},
		{"malware", openrecall.Alert{Text: "trojan detected by EDR"}, "malware"},
		{"exfiltration", openrecall.Alert{Text: "possible data exfiltration"}, "data_exfiltration"},
		{"privilege escalation", openrecall.Alert{Text: "privilege escalation via sudo"}, "privilege_escalation"},
		{"auth failure is not an attack", openrecall.Alert{Text: "auth failure calling okta"}, ""},
		{"one failed password is not an attack", openrecall.Alert{Text: "Failed password for root from 203.0.113.5 port 52113 ssh2"}, ""},
		{"401 is not an attack", openrecall.Alert{Text: "upstream returned 401 unauthorized"}, ""},
		{"ops alert", openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping"), Text: "restarted 5 times"}, ""},
		{"other category", openrecall.Alert{Labels: labels("category", "infrastructure")}, ""},
	})
}

func TestEnvironment(t *testing.T) {
	runFieldCases(t, openrecall.FieldEnvironment, []fieldCase{
		{"alert environment", openrecall.Alert{Environment: "staging"}, "staging"},
		{"alert environment first", openrecall.Alert{Environment: "dev", Labels: labels("env", "prod")}, "dev"},
		{"env label", openrecall.Alert{Labels: labels("env", "production")}, "prod"},
		{"environment label", openrecall.Alert{Labels: labels("environment", "stg")}, "staging"},
		{"env before cluster", openrecall.Alert{Labels: labels("cluster", "prod-eu-1", "env", "dev")}, "dev"},
		{"cluster name", openrecall.Alert{Labels: labels("cluster", "prod-eu-west-1")}, "prod"},
		{"namespace name", openrecall.Alert{Labels: labels("namespace", "shop-staging")}, "staging"},
		{"text", openrecall.Alert{Text: "disk pressure in production"}, "prod"},
		{"title before text", openrecall.Alert{Title: "[staging] api down", Text: "prod traffic unaffected"}, "staging"},
		{"unknown cluster", openrecall.Alert{Labels: labels("cluster", "research-lab")}, ""},
		{"product is not prod", openrecall.Alert{Text: "product catalog slow"}, ""},
	})
}

// TestInvariance checks that alerts of one family that differ only in
// high-cardinality noise get the same fingerprint.
func TestInvariance(t *testing.T) {
	e := newDefault(t)
	tests := []struct {
		name string
		a, b openrecall.Alert
	}{
		{"pods", openrecall.Alert{
			Title:  "Pod shop/checkout-api-7d9f8c6b5-x2x9z crash looping",
			Labels: labels("alertname", "KubePodCrashLooping", "pod", "checkout-api-7d9f8c6b5-x2x9z", "container", "checkout-api-7d9f8c6b5-x2x9z"),
		}, openrecall.Alert{
			Title:  "Pod shop/checkout-api-5c6d7e8f9a-b7k2m crash looping",
			Labels: labels("alertname", "KubePodCrashLooping", "pod", "checkout-api-5c6d7e8f9a-b7k2m", "container", "checkout-api-5c6d7e8f9a-b7k2m"),
		}},
		{"ips and ports", openrecall.Alert{
			Text: "dial tcp 10.0.0.5:5432: connect: connection refused from [2001:db8::1]:443",
		}, openrecall.Alert{
			Text: "dial tcp 192.168.77.201:6432: connect: connection refused from [fe80::dead:beef]:8443",
		}},
		{"numbers and durations", openrecall.Alert{
			Text: "error rate 12.3% for the last 15m, 231 failed login attempts, latency 250ms",
		}, openrecall.Alert{
			Text: "error rate 7% for the last 1h30m, 9 failed login attempts, latency 1.5s",
		}},
		{"timestamps uuids hex", openrecall.Alert{
			Text: "at 2026-11-30T03:42:06.265Z request 3fa85f64-5717-4562-b3fc-2c963f66afa6 trace 4bf92f3577b34da6 returned 503",
		}, openrecall.Alert{
			Text: "at 2026-12-01 17:00:00 request 6ba7b810-9dad-11d1-80b4-00c04fd430c8 trace 00f067aa0ba902b7 returned 503",
		}},
		{"ordinals and hosts", openrecall.Alert{
			Title: "disk 95% on db-1", Labels: labels("alertname", "DiskFull", "service", "db-1", "cluster", "prod-1"),
		}, openrecall.Alert{
			Title: "disk 81% on db-12", Labels: labels("alertname", "DiskFull", "service", "db-12", "cluster", "prod-7"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa, fb := e.Extract(tt.a), e.Extract(tt.b)
			if fa != fb {
				t.Errorf("fingerprints differ:\n a: %s\n b: %s", fa, fb)
			}
			if fa.IsZero() {
				t.Errorf("fingerprint is empty; the case proves nothing")
			}
		})
	}
}

// TestLabelOrder builds the same label set in many insertion orders (Go maps
// iterate randomly anyway) and expects one fingerprint and one evidence list.
func TestLabelOrder(t *testing.T) {
	e := newDefault(t)
	kv := []string{
		"alertname", "HighErrorRate", "service", "redis", "job", "checkout-api", "app", "keycloak",
		"env", "prod", "cluster", "dev-1", "namespace", "staging", "category", "security", "attack", "xss",
		"dependency", "kafka",
	}
	base := openrecall.Alert{Labels: labels(kv...)}
	wantFP, wantEv := e.Explain(base)
	for i := range 50 {
		m := map[string]string{}
		n := len(kv) / 2
		for j := range n {
			k := (i*7 + j*3) % n // a different permutation per round when n is coprime
			m[kv[2*k]] = kv[2*k+1]
		}
		for j := range n { // fill any the permutation missed
			if _, ok := m[kv[2*j]]; !ok {
				m[kv[2*j]] = kv[2*j+1]
			}
		}
		gotFP, gotEv := e.Explain(openrecall.Alert{Labels: m})
		if gotFP != wantFP {
			t.Fatalf("round %d: %s, want %s", i, gotFP, wantFP)
		}
		if diff := cmp.Diff(wantEv, gotEv); diff != "" {
			t.Fatalf("round %d: evidence differs (-want +got):\n%s", i, diff)
		}
	}
	want := "error_class=http_5xx;service_role=cache;dependency_pattern=queue;signal_shape=;attack_pattern=xss;environment=prod"
	if wantFP.String() != want {
		t.Errorf("fingerprint %s, want %s", wantFP, want)
	}
}

func TestExplain(t *testing.T) {
	e := newDefault(t)
	a := openrecall.Alert{
		Title:       "Checkout errors spiking",
		Text:        "upstream payments-db timeouts",
		Labels:      labels("alertname", "HighErrorRate", "env", "prod", "pod", "checkout-api-7d9f8b-x2x1"),
		Service:     "checkout-api",
		Annotations: map[string]string{"summary": "5xx ratio above 5%"},
	}
	fp, ev := e.Explain(a)
	want := []Evidence{
		{Field: "error_class", Value: "http_5xx", Rule: "table alertname[HighErrorRate]", Source: "label:alertname"},
		{Field: "service_role", Value: "api_edge", Rule: "table names[checkout-api]", Source: "service"},
		{Field: "dependency_pattern", Value: "database", Rule: "pattern database", Source: "text"},
		{Field: "signal_shape", Value: "spike", Rule: "pattern spike", Source: "title"},
		{Field: "environment", Value: "prod", Rule: "table names[prod]", Source: "label:env"},
	}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if fp != e.Extract(a) {
		t.Errorf("Explain fingerprint %s differs from Extract %s", fp, e.Extract(a))
	}
	for _, x := range ev {
		if got, _ := fp.Get(x.Field); got != x.Value {
			t.Errorf("evidence %+v disagrees with fingerprint value %q", x, got)
		}
	}
}

func TestNormalize(t *testing.T) {
	e := newDefault(t)
	tests := []struct{ in, want string }{
		{"Pod checkout-api-7d9f8c6b5-x2x9z restarted", "pod checkout-api-<pod> restarted"},
		{"id 3FA85F64-5717-4562-B3FC-2C963F66AFA6", "id <uuid>"},
		{"from 10.0.0.12:8080 and 10.0.0.1", "from <ip> and <ip>"},
		{"from [2001:db8::1]:443 and fe80::1: refused", "from <ip> and <ip>: refused"},
		{"at 2026-11-30T03:42:06.265Z and 2026-11-30 and 03:42:06", "at <ts> and <ts> and <ts>"},
		{"trace 4bf92f3577b34da6 and 0xdeadbeef", "trace <hex> and <hex>"},
		{"took 250ms, 1h30m, 5 minutes, 2 hrs", "took <dur>, <dur>, <dur>, <dur>"},
		{"std::vector and a::b", "std::vector and a::b"},
		{"5xx ratio above 5% with 512Mi", "5xx ratio above <num>% with <num>"},
		{"HTTP 503; status 502; code=500; returned 404; http/1.1 504", "http 503; status 502; code=500; returned 404; http/<num> 504"},
		{"503 Service Unavailable", "503 service unavailable"},
		{"queue has 503 items; id-500; v1.500", "queue has <num> items; id-<num>; v1.<num>"},
		{"curl 169.254.169.254/latest", "curl <metadata_ip>/latest"},
		{"s3 t1110 x509 ipv4 deadbeefcafe", "s3 t1110 x509 ipv4 deadbeefcafe"},
		{"counted 12345678 events", "counted <num> events"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := e.Normalize(tt.in)
			if got != tt.want {
				t.Errorf("Normalize(%q)\n got  %q\n want %q", tt.in, got, tt.want)
			}
			if again := e.Normalize(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestConcurrentExtract(t *testing.T) {
	e := newDefault(t)
	alerts := readAlerts(t)
	want := make([]openrecall.Fingerprint, len(alerts))
	for i, a := range alerts {
		want[i] = e.Extract(a)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(alerts))
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, a := range alerts {
				if got := e.Extract(a); got != want[i] {
					errs <- fmt.Sprintf("alert %s: %s, want %s", a.ID, got, want[i])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

// TestAlertNotModified checks that extraction leaves its input alone.
func TestAlertNotModified(t *testing.T) {
	e := newDefault(t)
	a := openrecall.Alert{Title: "T 10.0.0.1", Labels: labels("service", "Checkout-API-7d9f8c6b5-x2x9z"), Annotations: map[string]string{"summary": "S"}}
	before := fmt.Sprintf("%#v", a)
	e.Explain(a)
	if after := fmt.Sprintf("%#v", a); after != before || !strings.Contains(after, "Checkout-API") {
		t.Errorf("alert changed:\n%s\n%s", before, after)
	}
}

// BenchmarkExtract extracts the golden alerts and the rule corpus's
// alerts (every firing with its own instance and value, as in make
// bench-analyze's queue) in turn. "hit": the fingerprint cache is warm, so
// every extraction is a hit (as 96.8% of the corpus queue's are); "miss": the
// cache holds one entry per generation, so every extraction runs the rules.
func BenchmarkExtract(b *testing.B) {
	for _, set := range []struct {
		name   string
		alerts func(testing.TB) []openrecall.Alert
	}{
		{"golden", readAlerts},
		{"corpus", func(tb testing.TB) []openrecall.Alert { return ruleCorpusAlerts(tb, 2000) }},
	} {
		for _, hit := range []bool{true, false} {
			name := set.name + "/miss"
			if hit {
				name = set.name + "/hit"
			}
			b.Run(name, func(b *testing.B) {
				e := newDefault(b)
				alerts := set.alerts(b)
				if hit {
					for _, a := range alerts {
						e.Extract(a)
					}
				} else {
					e.cache = newDNACache(1, dnaCacheBytes)
				}
				hits := e.cache.hits.Load()
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cpuTime(b)
				for i := 0; b.Loop(); i++ {
					e.Extract(alerts[i%len(alerts)])
				}
				b.StopTimer()
				b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(e.cache.hits.Load()-hits)/float64(b.N), "hits/op")
			})
		}
	}
}

// TestDNACacheIsBounded: the fingerprint cache keeps at most two
// generations of its bound, whatever the number of distinct alerts, and a
// cached answer equals a fresh one.
func TestDNACacheIsBounded(t *testing.T) {
	e := newDefault(t)
	e.cache = newDNACache(16, 1<<20)
	for i := range 200 {
		a := openrecall.Alert{Title: fmt.Sprintf("disk full on host%c%c", 'a'+i%26, 'a'+i/26), Labels: labels("service", "api")}
		first := e.Extract(a)
		if again := e.Extract(a); again != first {
			t.Fatalf("alert %d: cached %s, fresh %s", i, again, first)
		}
		if n := e.cache.len(); n > 32 {
			t.Fatalf("after %d alerts the cache holds %d entries, bound 2×16", i+1, n)
		}
	}
	if e.cache.hits.Load() != 200 {
		t.Errorf("%d hits, want 200 (every second extraction)", e.cache.hits.Load())
	}
}

// TestDNACacheKeysAreUnambiguous: two alerts whose values differ only in
// which side of a boundary a NUL byte sits get their own fingerprints (the
// cache key once joined the values with NUL separators, so the second alert
// was answered with the first one's entry).
func TestDNACacheKeysAreUnambiguous(t *testing.T) {
	e := newDefault(t)
	a := openrecall.Alert{Title: "disk full", Environment: "production", Service: "\x00checkout-api"}
	b := openrecall.Alert{Title: "disk full", Environment: "production\x00", Service: "checkout-api"}
	wantA, _ := e.Explain(a)
	wantB, _ := e.Explain(b)
	if wantA == wantB {
		t.Fatalf("both alerts give %s: the test proves nothing", wantA)
	}
	for _, c := range []struct {
		a    openrecall.Alert
		want openrecall.Fingerprint
	}{{a, wantA}, {b, wantB}, {a, wantA}} {
		if got := e.Extract(c.a); got != c.want {
			t.Errorf("environment %q, service %q: %s, want %s", c.a.Environment, c.a.Service, got, c.want)
		}
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
