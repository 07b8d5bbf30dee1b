package sender

import "testing"

func TestFalcoPodOwner(t *testing.T) {
	for pod, want := range map[string]string{
		"alpine-deployment-77789455d6-m7flp": "alpine-deployment",
		"falco-74htl":                        "falco",
		"mysql-0":                            "mysql",
		"web-proxy":                          "web-proxy",
		"payments-api":                       "payments-api",
	} {
		if got := falcoPodOwner(pod); got != want {
			t.Errorf("falcoPodOwner(%q) = %q, want %q", pod, got, want)
		}
	}
}

func TestFalcoServiceNeverHost(t *testing.T) {
	// No Kubernetes or container field: no service, whatever the host.
	v, _ := Parse([]byte(`{"uuid":"u1","output":"x","priority":"Critical","rule":"Netcat Remote Code Execution in Container","time":"2024-01-01T00:00:00Z","source":"syscall","hostname":"node-7","output_fields":{"proc.name":"nc","k8s.ns.name":null,"container.id":"host"}}`))
	s := falcosidekick()
	if !s.Match(v) {
		t.Fatal("not recognised")
	}
	events, err := s.Map(v)
	if err != nil || len(events) != 1 {
		t.Fatalf("Map = %v, %v", events, err)
	}
	if e := events[0]; e.Service != "" || e.Host != "node-7" || e.ID != "falco-u1" || e.Entities["process"] != "nc" {
		t.Errorf("service %q host %q id %q entities %v", e.Service, e.Host, e.ID, e.Entities)
	}
	if s.Severity("Critical") != "critical" || s.Severity("Notice") != "low" {
		t.Error("priority mapping")
	}
}
