package gen

import (
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
)

// DNAPieces are the pieces DNAAlert texts are made of: phrases the rules
// look for (and near misses), high-cardinality noise in every shape the
// normalizer replaces or must keep (timestamps, clocks, UUIDs, IPv4/IPv6
// with ports and brackets, pod names, hex ids, numbers with units, HTTP
// status codes after keywords and before reason phrases), separators, and
// Unicode case traps, and one piece longer than the per-field cap.
func DNAPieces() []string {
	return []string{
		" ", " ", "\n", "-", "_", ":", ".", "/", "=", ", ", "(", ")", "[", "]", "'",
		"crash loop", "CrashLoopBackOff", "back-off restarting failed container", "OOMKilled", "out of memory",
		"ImagePullBackOff", "certificate has expired", "cert expires", "x509:", "tls handshake", "no such host",
		"SERVFAIL", "pool exhausted", "too many connections", "flyway", "replication lag", "seconds_behind_master",
		"consumer group lag", "queue backlog ", "disk full", "no space left on device", "filesystem /var 91% full",
		"permission denied", "unauthorized", "forbidden", "Internal Server Error", "bad gateway", "5xx", "4xx",
		"connection refused", "target down", "unreachable", "latency", "burn rate", "p99", "timed out", "timeout",
		"deadline exceeded", "config invalid", "CreateContainerConfigError", "sql injection", "union select",
		"' or 1=1 --", "../../etc/passwd", "brute force", "failed password for root", "<script>", "rate limit",
		"http 503", "HTTP/1.1 502", "status 404", "status_code=500", "code=429", "returned 401", "503 service unavailable",
		"500", "404", " 200 ok", "10.500", "id-500", "/500",
		"2026-11-29T21:10:00Z", "2026-01-01 00:00:00.123+02:00", "2025-12-31", "03:42:06", "3:42:06.5",
		"123e4567-e89b-12d3-a456-426614174000", "DEADBEEF-dead-beef-dead-beefdeadbeef",
		"10.0.0.1", "10.14.80.51:8080", "169.254.169.254", "fd00:ec2::254", "fe80::1", "[2001:db8::1]:443", "2001:db8::8a2e:370:7334",
		"fe80::1:", "std::vector", "a::b", "999.1.2.3", "1.2.3",
		"checkout-api-7d9f8c6b5-x2x9z", "orders-abcdefgh-abcde", "web-0", "db-12", "0xdeadbeef", "deadbeef", "a1b2c3d4e5f6",
		"12345678", "5m", "250ms", "1h30m", "10min", "5 minutes", "3 secs", "512Mi", "4GiB", "99.9%", "3.95", "1,024", "17",
		"2fa", "s3", "t1110", "1st", "100x", "42rps",
		"ſ", "K", "ß", "İ", "É", "Ｓ", "\u200b", "\t",
		// Longer than the per-field cap (8 KiB): what follows is not read.
		strings.Repeat("ok ", 2800),
		// Hex ids and near misses, set apart by spaces (pieces glued together
		// rarely sit on word boundaries): 0x with digits only or letters
		// only, seven digits, a run ending inside a word.
		" 0x12345678 ", " 0xabcdefab ", " 0xdeadbee ", " 0x", " 1234567 ", " abc12345_", " deadbeef0 ", "12345678x ",
		// Every keyword, reason phrase and time word the number pass reads, and
		// near misses (no space before a reason, a word glued to a time word).
		" https 502", " http/2 503", " http/<num> 500", " response: 500", " responded 404", " errors = 503",
		" got 418", " statuscode 500", " status code 503", " returning 502", " returns 500", " error:\t500",
		" 404not found", " 504 gateway time-out", " 504 gateway timeout ", " 401 unauthorised ", " 405 method not allowed",
		" 201 created", " 202 accepted", " 204 no content", " 301 moved", " 302 found", " 304 not modified", " 400 bad request",
		" 409 conflict", " 410 gone", " 429 too many requests", " 501 not implemented",
		" 3 hrs ", " 10 mins ", " 2 weeks ", " 7 days ", " 1 hour", " 1 hr", " 250 ms ", " 500 milliseconds", " 1 millisecond",
		" 30 sec", " 2 minute", " 1 second", " 1 min", " 1 day", " 1 week", " 5 hoursx",
		// Addresses run together: a dot right after an address, more octets.
		" 10.0.0.1.1.2.3 ", " 1.2.3.4.5.6.7.8:9 ", " 1234.1.2.3 ",
		// ATT&CK references and near misses: technique and tactic ids, a
		// sub-technique the table lacks (its parent counts) and one that is
		// none (.000), ids glued to a word, a path or a number, Sigma and
		// Falco tags in either case, hyphens and the v19 tactics.
		"T1110", "T1059.001", "T1059.999", "T1059.000", "TA0004", "TA0099", "T9999", "T1562-impair-defenses", "T1562-2",
		"xT1110", "T1110.txt", "T1110/", "T1110.", "TA0006@", "T1003\\", "attack.t1078", "ATTACK.T1021.002",
		"attack.ta0011", "attack.privilege_escalation", "attack.privilege-escalation", "attack.exfiltration",
		"attack.stealth", "attack.defense-impairment", "attack.privilege_escalation2", "MITRE_PERSISTENCE",
		"mitre_privilege_escalation", "mitre_privilege-escalation", "mitre_credential_access_x", "$T1110", "%TA0004",
	}
}

// DNALabelValues are values the label, service and environment sources may
// take: names with pod hashes and ordinals, role suffixes, environments.
func DNALabelValues() []string {
	return []string{
		"", " ", "checkout-api", "Checkout-API-7d9f8c6b5-x2x9z", "orders-db-replica", "orders-db-primary", "redis-cache",
		"orders-consumer", "report-cron", "media-s3", "etl-worker", "web-frontend", "node-exporter", "kafka-2", "postgres-0",
		"KubePodCrashLooping", "KubeContainerOOMKilled", "TargetDown", "HighErrorRate5xx", "PostgresReplicationLag",
		"CertificateExpiringSoon", "DiskPressure", "SSHBruteForce", "CrashLoopBackOff", "OOMKilled", "ImagePullBackOff",
		"prod", "production", "stg", "staging", "dev", "Prod-EU", "security", "ſecurity",
		"checkout-bcdfgh-xkzwq", "web-7d9f8c6b5-x2x9z", "10.0.0.1:9100", "https://shop.example.com/health", "shop",
		"BlackboxProbeFailed", "KubeDeploymentReplicasMismatch",
		// Pod tails at their edges: a six- and a ten-character hash, hashes
		// too long, tails too long or not alphanumeric, a value that is all
		// tail, an ordinal after a pod hash.
		"web-7d9f8c-x2x9z", "cache-abc1234567-x2x9z", "q-abc12345678-x2x9z", "svc-7d9f8c6b5-x2x9z1", "api-7d9f8c6b5-x.9z",
		"-0", "-7d9f8c6b5-x2x9z", "db-7d9f8c6b5-x2x9z-0", "db-12-3", "web-7d9f8c6b5-X2X9Z",
		// Tactic names as a tactic field holds them, and ATT&CK ids and
		// tags as a label holds them.
		"Privilege Escalation", "'Defense Evasion'", " \"Command and Control\" ", "TA0011", "ta0040", "credential-access",
		"Exfiltration", "data_exfiltration", "stealth", "Lateral  Movement", "T1021.002", "attack.discovery,attack.t1087",
		"mitre_execution", "CVE-2021-42278",
		// Rules an identity rule's regex takes by one alternative or
		// another (blackbox_probe: '^blackbox…|^probe'), and a near miss.
		"ProbeFailed", "probe_success", "SlowProbe",
	}
}

// DNAAlert is an alert built from DNAPieces and DNALabelValues by index.
type DNAAlert struct {
	Title, Text, Summary, Description []int
	// Labels index DNALabelValues for alertname, service, job, app,
	// container, env, category, reason, pod, namespace, instance, target,
	// rule.mitre.tactic, tags and class, in that order.
	Labels               []int
	Service, Environment int
	// Kind is the sender: 0 a plain alert, 1 a security detection sender,
	// 2 PagerDuty, 3 a JSON object no sender recognises.
	Kind int
	// Rule indexes DNALabelValues for the sender's rule.
	Rule int
}

// DNAKinds is the number of DNAAlert kinds.
const DNAKinds = 4

// dnaLabelNames are the label names DNAAlert.Labels fill, in order.
var dnaLabelNames = []string{"alertname", "service", "job", "app", "container", "env", "category", "reason", "pod", "namespace", "instance", "target",
	"rule.mitre.tactic", "tags", "class"}

func dnaText(idx []int) string { return joinPieces(DNAPieces(), idx) }

// Alert returns the alert.
func (d DNAAlert) Alert() openrecall.Alert {
	values := DNALabelValues()
	a := openrecall.Alert{
		Title: dnaText(d.Title), Text: dnaText(d.Text), Labels: map[string]string{}, Annotations: map[string]string{},
		Service: values[d.Service%len(values)], Environment: values[d.Environment%len(values)],
		Rule: values[d.Rule%len(values)],
	}
	switch d.Kind % DNAKinds {
	case 1:
		a.Sender, a.Security = "falco", true
	case 2:
		a.Format = "pagerduty"
	case 3:
		a.Sender = "json"
	}
	for i, v := range d.Labels {
		if i < len(dnaLabelNames) && values[v%len(values)] != "" {
			a.Labels[dnaLabelNames[i]] = values[v%len(values)]
		}
	}
	if s := dnaText(d.Summary); s != "" {
		a.Annotations["summary"] = s
	}
	if s := dnaText(d.Description); s != "" {
		a.Annotations["description"] = s
	}
	return a
}

// DNAAlertGen generates alerts whose texts and labels are made of the
// phrases the fingerprint rules look for, noise the normalizer replaces,
// ATT&CK references, and Unicode traps, from plain, security, PagerDuty and
// unrecognised senders: up to 12 pieces per text and 15 labels, shrinking toward
// fewer and earlier pieces.
func DNAAlertGen() gopter.Gen {
	text := SliceUpTo(12, Index(len(DNAPieces()), 0.05), reflect.TypeOf(0))
	value := Index(len(DNALabelValues()), 0.3)
	return gg.Struct(reflect.TypeOf(DNAAlert{}), map[string]gopter.Gen{
		"Title": text, "Text": text, "Summary": text, "Description": text,
		"Labels":  SliceUpTo(len(dnaLabelNames), value, reflect.TypeOf(0)),
		"Service": value, "Environment": value,
		"Kind": Index(DNAKinds, 0.4), "Rule": Index(len(DNALabelValues()), 0.8),
	})
}

// DNALinePieces are the pieces DNALines are made of: what the number pass
// reads around a number (status keywords before it, reason phrases and time
// words after it), numbers, white space and a few phrases the rules look
// for, so that lines often end with a number and start with what it reads.
func DNALinePieces() []string {
	return []string{
		"", "500", "404", "17", "1.5", "200", "503", " ", "\t", "\n",
		"status", "status code:", "error =", "http", "HTTP/1.1", "returned", "got", "code=",
		"ok", "not found", "Bad Gateway", "minutes", "ms", "hrs", "seconds", "days",
		"disk full", "latency", "connection refused", "crash loop", "out of memory",
		"10.0.0.1:9100", "0xdeadbeef", "web-7d9f8c6b5-x2x9z", "2026-11-29T21:10:00Z", "5m", "fe80::1",
		// A number with white space after it (label values are not
		// trimmed), and a run of spaces as long as the status keyword window.
		"500 ", "404\t", strings.Repeat(" ", 20),
	}
}

// DNALines is an alert whose title, text, annotations and label values are
// lines of DNALinePieces (by index, joined with spaces). An empty title is the
// summary, as it often is.
type DNALines struct {
	Title, Text, Summary, Description []int
	// Alertname, Code, Instance and Port are label values.
	Alertname, Code, Instance, Port []int
}

func dnaLine(idx []int) string {
	pieces := DNALinePieces()
	words := make([]string, len(idx))
	for i, x := range idx {
		words[i] = pieces[x%len(pieces)]
	}
	return strings.Join(words, " ")
}

// Alert returns the alert.
func (d DNALines) Alert() openrecall.Alert {
	a := openrecall.Alert{Title: dnaLine(d.Title), Text: dnaLine(d.Text), Labels: map[string]string{}, Annotations: map[string]string{}}
	for name, idx := range map[string][]int{"alertname": d.Alertname, "code": d.Code, "instance": d.Instance, "port": d.Port} {
		if len(idx) > 0 {
			a.Labels[name] = dnaLine(idx)
		}
	}
	if len(d.Summary) > 0 {
		a.Annotations["summary"] = dnaLine(d.Summary)
	}
	if len(d.Description) > 0 {
		a.Annotations["description"] = dnaLine(d.Description)
	}
	if a.Title == "" {
		a.Title = a.Annotations["summary"]
	}
	return a
}

// Indexes returns every piece index of d.
func (d DNALines) Indexes() []int {
	var out []int
	for _, idx := range [][]int{d.Title, d.Text, d.Summary, d.Description, d.Alertname, d.Code, d.Instance, d.Port} {
		out = append(out, idx...)
	}
	return out
}

// DNALinesGen generates DNALines of up to four pieces per line, shrinking
// toward fewer and earlier pieces.
func DNALinesGen() gopter.Gen {
	line := SliceUpTo(4, Index(len(DNALinePieces()), 0.05), reflect.TypeOf(0))
	return gg.Struct(reflect.TypeOf(DNALines{}), map[string]gopter.Gen{
		"Title": line, "Text": line, "Summary": line, "Description": line,
		"Alertname": line, "Code": line, "Instance": line, "Port": line,
	})
}
