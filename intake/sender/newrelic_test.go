package sender

import (
	"testing"

	"github.com/openrecall/openrecall"
)

// Two conditions on one entity are two rules, and CRITICAL is critical.
func TestNewRelicConditionIsTheRule(t *testing.T) {
	s := mapped("newrelic")
	cpu := oneEvent(t, s, `{"id":"a","issueUrl":"https://radar-api.service.newrelic.com/x","title":"h query result is > 1 on 'High CPU'","priority":"CRITICAL","impactedEntities":["h"],"state":"ACTIVATED","alertConditionNames":["High CPU"]}`)
	disk := oneEvent(t, s, `{"id":"b","issueUrl":"https://radar-api.service.newrelic.com/y","title":"h query result is > 1 on 'Low Storage'","priority":"CRITICAL","impactedEntities":["h"],"state":"ACTIVATED","alertConditionNames":["Low Storage"]}`)
	if cpu.Rule == disk.Rule || cpu.Rule != "High CPU" {
		t.Errorf("rules %q and %q", cpu.Rule, disk.Rule)
	}
	if cpu.Host != "h" || cpu.Service != "" {
		t.Errorf("host %q service %q: a host entity is the host", cpu.Host, cpu.Service)
	}
	if got := s.Severity(cpu.Severity); got != openrecall.SeverityCritical {
		t.Errorf("CRITICAL reads %s", got)
	}
}

func TestNewRelicLegacyApplicationTarget(t *testing.T) {
	e := oneEvent(t, mapped("newrelic"), `{"incident_id":7,"condition_name":"Apdex low","policy_name":"p","severity":"WARNING","current_state":"acknowledged",
		"targets":[{"name":"checkout","type":"Application","product":"APM","labels":{"env":"prod"}}],"details":"Apdex < 0.7"}`)
	if e.Service != "checkout" || e.Host != "" || e.Environment != "prod" || e.Status != openrecall.StatusAcknowledged || e.ID != "nr-7" {
		t.Errorf("%+v", e)
	}
	if got := mapped("newrelic").Severity(e.Severity); got != openrecall.SeverityMedium {
		t.Errorf("WARNING reads %s", got)
	}
}
