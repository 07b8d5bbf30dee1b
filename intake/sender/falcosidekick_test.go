package sender

import (
	"fmt"
	"testing"
)

// falcoRead reads a Falco event through the registry's falcosidekick
// sender (the mapping).
func falcoRead(t *testing.T, body string) Event {
	t.Helper()
	v, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := Lookup("falcosidekick")
	if !ok {
		t.Fatal("no falcosidekick sender")
	}
	if !s.Match(v) {
		t.Fatal("not recognised")
	}
	events, err := s.Map(v)
	if err != nil || len(events) != 1 {
		t.Fatalf("Map = %v, %v", events, err)
	}
	return events[0]
}

// TestFalcoPodOwner: the service is the pod's owner, without what a
// controller adds to name its pods.
func TestFalcoPodOwner(t *testing.T) {
	for pod, want := range map[string]string{
		"alpine-deployment-77789455d6-m7flp": "alpine-deployment",
		"falco-74htl":                        "falco",
		"mysql-0":                            "mysql",
		"web-proxy":                          "web-proxy",
		"payments-api":                       "payments-api",
	} {
		e := falcoRead(t, fmt.Sprintf(`{"output":"x","priority":"Notice","rule":"r","output_fields":{"k8s.pod.name":%q}}`, pod))
		if e.Service != want {
			t.Errorf("the owner of %q = %q, want %q", pod, e.Service, want)
		}
	}
}

func TestFalcoServiceNeverHost(t *testing.T) {
	// No Kubernetes or container field: no service, whatever the host.
	e := falcoRead(t, `{"uuid":"u1","output":"x","priority":"Critical","rule":"Netcat Remote Code Execution in Container","time":"2024-01-01T00:00:00Z","source":"syscall","hostname":"node-7","output_fields":{"proc.name":"nc","k8s.ns.name":null,"container.id":"host"}}`)
	if e.Service != "" || e.Host != "node-7" || e.ID != "falco-u1" || e.Entities["process"] != "nc" {
		t.Errorf("service %q host %q id %q entities %v", e.Service, e.Host, e.ID, e.Entities)
	}
	s, _ := Lookup("falcosidekick")
	if s.Severity("Critical") != "critical" || s.Severity("Notice") != "low" {
		t.Error("priority mapping")
	}
}

// TestFalcoForwardedReadsTheMapping: the Alertmanager path fills the
// output fields the mapping reads from falcosidekick's labels, so an event
// reads the same service, environment, severity and entities on both.
func TestFalcoForwardedReadsTheMapping(t *testing.T) {
	labels := map[string]string{"source": "falco", "rule": "Terminal shell in container", "priority": "Error",
		"k8s_ns_name": "shop", "k8s_pod_name": "cart-7d4b9c8f6d-x2x4z", "proc_name": "bash", "proc_pname": "<NA>",
		"ka_uri_param_command": "sh", "cluster": "prod"}
	s, e, ok := Forwarded(labels)
	if !ok || s.Name != "falcosidekick" {
		t.Fatalf("Forwarded = %s, %v", s.Name, ok)
	}
	if e.Service != "shop/cart" || e.Environment != "prod" || e.Severity != "Error" ||
		e.Entities["process"] != "bash" || e.Entities["command"] != "sh" || e.Entities["parent_process"] != "" || e.Entities["namespace"] != "shop" {
		t.Errorf("service %q environment %q severity %q entities %v", e.Service, e.Environment, e.Severity, e.Entities)
	}
	for _, k := range []string{"k8s.ns.name", "k8s.pod.name", "proc.name", "ka.uri.param[command]", "container.image.repository"} {
		found := false
		for _, m := range s.membersRead("output_fields") {
			found = found || m == k
		}
		if !found {
			t.Errorf("the mapping reads no output field %s", k)
		}
	}
	if _, _, ok := Forwarded(map[string]string{"alertname": "HighErrorRate", "severity": "critical"}); ok {
		t.Error("an alert no Falco forwarder posted read as forwarded")
	}
}
