package fingerprint

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

func TestIdentify(t *testing.T) {
	e := newExtractor(t, nil)
	tests := []struct {
		name  string
		alert openrecall.Alert
		want  openrecall.Identity
	}{
		{"alertname and job", openrecall.Alert{Format: "alertmanager", Labels: labels("alertname", "MysqlDown", "job", "mysqld", "instance", "db-1:9104")},
			openrecall.Identity{Rule: "MysqlDown", Service: "mysqld"}},
		{"service label first", openrecall.Alert{Labels: labels("alertname", "HighErrorRate", "service", " Checkout-API ", "app", "x", "job", "y")},
			openrecall.Identity{Rule: "HighErrorRate", Service: "checkout-api"}},
		{"app before k8s name", openrecall.Alert{Labels: labels("alertname", "A", "app", "cart", "app.kubernetes.io/name", "web")},
			openrecall.Identity{Rule: "A", Service: "cart"}},
		{"container before job", openrecall.Alert{Labels: labels("alertname", "A", "container", "api", "job", "kubelet")},
			openrecall.Identity{Rule: "A", Service: "api"}},
		{"never host instance or pod", openrecall.Alert{Labels: labels("alertname", "A", "host", "h1", "instance", "i1", "pod", "p-1")},
			openrecall.Identity{Rule: "A"}},
		{"generic service field", openrecall.Alert{Format: "jsonl", Title: "Disk 91% full on db-7", Service: "Orders"},
			openrecall.Identity{Rule: "disk * full on *", Service: "orders"}},
		{"summary before title", openrecall.Alert{Title: "ignored", Annotations: map[string]string{"summary": "Queue stuck on 10.0.0.1"}},
			openrecall.Identity{Rule: "queue stuck on *"}},
		{"text alert title is its first line", openrecall.Alert{Format: "text", Title: "Backup failed on host-3 at 03:00\nmore"},
			openrecall.Identity{Rule: "backup failed on * at *"}},
		{"pagerduty custom_details alertname", openrecall.Alert{Format: "pagerduty", Source: "db-1.example", Service: "db-1.example",
			Labels: labels("alertname", "PostgresqlDown", "class", "availability", "component", "postgres")},
			openrecall.Identity{Rule: "PostgresqlDown", Service: "postgres"}},
		{"pagerduty class, never source", openrecall.Alert{Format: "pagerduty", Title: "Disk full on db-1", Source: "db-1.example", Service: "db-1.example",
			Labels: labels("class", "disk")},
			openrecall.Identity{Rule: "disk"}},
		{"class outside pagerduty is a label", openrecall.Alert{Format: "jsonl", Title: "Disk full", Labels: labels("class", "disk")},
			openrecall.Identity{Rule: "disk full"}},
		{"crash loop names its workload", openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping", "job", "kube-state-metrics",
			"namespace", "Shop", "pod", "checkout-7d9f8b6c5-x2x9z", "container", "checkout")},
			openrecall.Identity{Rule: "KubePodCrashLooping", Service: "checkout/shop/checkout"}},
		{"pod hash without digits", openrecall.Alert{Labels: labels("alertname", "KubePodNotReady", "job", "kube-state-metrics",
			"namespace", "shop", "pod", "cart-bcdfgh-xkzwq")},
			openrecall.Identity{Rule: "KubePodNotReady", Service: "kube-state-metrics/shop/cart"}},
		{"statefulset ordinal", openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping", "job", "ksm", "namespace", "db", "pod", "mysql-2")},
			openrecall.Identity{Rule: "KubePodCrashLooping", Service: "ksm/db/mysql"}},
		{"deployment label beats pod", openrecall.Alert{Labels: labels("alertname", "KubeDeploymentReplicasMismatch", "job", "ksm", "namespace", "shop", "deployment", "web", "pod", "x-1")},
			openrecall.Identity{Rule: "KubeDeploymentReplicasMismatch", Service: "ksm/shop/web"}},
		{"blackbox target", openrecall.Alert{Labels: labels("alertname", "BlackboxProbeFailed", "job", "blackbox", "instance", "https://shop.example.com")},
			openrecall.Identity{Rule: "BlackboxProbeFailed", Service: "blackbox/https://shop.example.com"}},
		{"no identity labels present", openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping", "job", "ksm")},
			openrecall.Identity{Rule: "KubePodCrashLooping", Service: "ksm"}},
		{"no rule, no title", openrecall.Alert{Labels: labels("service", "x")}, openrecall.Identity{}},
		{"title without a word", openrecall.Alert{Title: "12345 10.0.0.1", Service: "x"}, openrecall.Identity{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.Identify(tt.alert); got != tt.want {
				_, ev := e.ExplainIdentity(tt.alert)
				t.Errorf("Identify = %+v, want %+v (evidence %+v)", got, tt.want, ev)
			}
		})
	}
}

func TestIdentityLabels(t *testing.T) {
	e := newExtractor(t, nil)
	if got := e.IdentityLabels("blackboxprobefailed"); !slices.Equal(got, []string{"target", "probe_target", "instance"}) {
		t.Errorf("blackbox: %v", got)
	}
	if got := e.IdentityLabels(" KubeNodeNotReady "); !slices.Equal(got, []string{"node"}) {
		t.Errorf("node: %v", got)
	}
	if got := e.IdentityLabels("MysqlDown"); got != nil {
		t.Errorf("MysqlDown: %v, want none", got)
	}
}

func TestExplainIdentity(t *testing.T) {
	e := newExtractor(t, nil)
	a := openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping", "job", "kube-state-metrics", "namespace", "shop", "pod", "web-7d9f8b6c5-x2x9z")}
	id, ev := e.ExplainIdentity(a)
	if id != e.Identify(a) {
		t.Fatalf("ExplainIdentity %v, Identify %v", id, e.Identify(a))
	}
	want := []Evidence{
		{Field: IdentityRule, Value: "KubePodCrashLooping", Rule: IdentityPrecedence, Source: "label:alertname"},
		{Field: IdentityService, Value: "kube-state-metrics", Rule: IdentityPrecedence, Source: "label:job"},
		{Field: IdentityService, Value: "kube-state-metrics/shop/web", Rule: "identity kubernetes_workload", Source: "label:namespace, label:pod"},
	}
	if len(ev) != len(want) {
		t.Fatalf("evidence %+v, want %+v", ev, want)
	}
	for i := range want {
		if ev[i] != want[i] {
			t.Errorf("evidence %d = %+v, want %+v", i, ev[i], want[i])
		}
	}
	_, ev = e.ExplainIdentity(openrecall.Alert{Title: "Disk 91% full", Service: "db"})
	if len(ev) != 2 || ev[0].Source != "template:title" || ev[1].Source != SourceService {
		t.Errorf("template evidence %+v", ev)
	}
}

func TestTemplate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Disk 91% full on db-7", "disk * full on *"},
		{"Disk 93% full on db-2", "disk * full on *"},
		{"  Flink job   is not running (instance 10.0.0.1:9100)", "flink job is not running (instance *)"},
		{"Probe https://shop.example.com/health failed", "probe * failed"},
		{"Mail to ops@example.com bounced", "mail to * bounced"},
		{`Queue "orders eu" is stuck`, `queue "orders eu" is stuck`},
		{`Queue "4411" is stuck`, `queue "*" is stuck`},
		{"Queue 'orders' can't drain", "queue 'orders' can't drain"},
		{"Write to /var/lib/mysql/data failed", "write to * failed"},
		{"Peer fe80::abcd unreachable", "peer * unreachable"},
		{"Trace 123e4567-e89b-12d3-a456-426614174000 slow", "trace * slow"},
		{"Object deadbeefcafebabe missing", "object * missing"},
		{"Pod checkout-bcdfgh-xkzwq restarted", "pod * restarted"},
		{"Pod checkout-7d9f8b6c5-x2x9z restarted", "pod * restarted"},
		{"checkout restarted 3 times in 5 m", "checkout restarted * times in *"},
		{"First line\nsecond line 42", "first line"},
		{"12 34 10.1.1.1", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Template(tt.in); got != tt.want {
			t.Errorf("Template(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := Template(Template(tt.in)); got != Template(tt.in) {
			t.Errorf("Template not idempotent on %q: %q", tt.in, got)
		}
	}
}

func TestIdentityRulesFile(t *testing.T) {
	defaults, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	override := load(t, "custom.yaml", `
identity:
  - name: mine
    rules: [ShopDown]
    labels: [region]
  - name: blackbox_probe
    disabled: true
  - name: kubernetes_workload
    labels: [namespace]
`)
	e, err := New(defaults.Merge(override))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		alert openrecall.Alert
		want  string
	}{
		{openrecall.Alert{Labels: labels("alertname", "shopdown", "job", "web", "region", "EU")}, "web/eu"},
		{openrecall.Alert{Labels: labels("alertname", "BlackboxProbeFailed", "job", "bb", "instance", "https://x")}, "bb"},
		{openrecall.Alert{Labels: labels("alertname", "KubePodCrashLooping", "job", "ksm", "namespace", "shop", "pod", "web-1")}, "ksm/shop"},
	} {
		if got := e.Identify(tt.alert).Service; got != tt.want {
			t.Errorf("%v: service %q, want %q", tt.alert.Labels, got, tt.want)
		}
	}
}

func TestIdentityRulesErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"not a list", "identity: {a: b}\n", "custom.yaml:1: identity: want a list"},
		{"no name", "identity:\n  - rules: [A]\n    labels: [x]\n", "identity: rule without a name"},
		{"twice", "identity:\n  - {name: a, rules: [A], labels: [x]}\n  - {name: a, rules: [B], labels: [y]}\n", `custom.yaml:3: identity: rule "a" defined twice`},
		{"unknown key", "identity:\n  - {name: a, rules: [A], label: [x]}\n", `identity: rule "a": unknown key "label"`},
		{"empty labels", "identity:\n  - {name: a, rules: [A], labels: []}\n", `identity: rule "a": labels: want a non-empty list`},
		{"bad alternative", "identity:\n  - {name: a, rules: [A], labels: ['x||y']}\n", `labels: "x||y" is not a label name`},
		{"bad regex", "identity:\n  - {name: a, regex: 'a(', labels: [x]}\n", `identity: rule "a": regex: missing closing )`},
		{"rule twice", "identity:\n  - {name: a, rules: [A, a], labels: [x]}\n", `rules: "a" listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadRules(strings.NewReader(tt.src), "custom.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, openrecall.ErrInvalid) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// A partial rule is fine to load (it may be merged) but not to use alone.
	r := load(t, "custom.yaml", "identity:\n  - {name: a, labels: [x]}\n")
	if _, err := New(r); err == nil || !strings.Contains(err.Error(), `identity: rule "a" needs labels and rules or a regex`) {
		t.Errorf("New: %v", err)
	}
}
