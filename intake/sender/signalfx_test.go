package sender

import "testing"

// Two rules of one detector are two checks; messageTitle is the title.
func TestSignalFxRuleAndTitle(t *testing.T) {
	a := oneEvent(t, mapped("signalfx"), `{"detector":"CPU","detectorId":"D1","incidentId":"i1","rule":"CPU over 80%","severity":"Warning","messageTitle":"Warning Alert: CPU over 80% (CPU)","statusExtended":"anomalous","inputs":{"A":{"key":{"host":"h1","sf_service":"api"},"value":85}}}`)
	b := oneEvent(t, mapped("signalfx"), `{"detector":"CPU","detectorId":"D1","incidentId":"i2","rule":"CPU over 95%","severity":"Critical","statusExtended":"manually resolved"}`)
	if a.Rule == b.Rule || a.Title != "Warning Alert: CPU over 80% (CPU)" || b.Title != "CPU: CPU over 95%" {
		t.Errorf("rules %q %q titles %q %q", a.Rule, b.Rule, a.Title, b.Title)
	}
	if a.Service != "api" || a.Host != "h1" || b.Status != "resolved" {
		t.Errorf("service %q host %q status %q", a.Service, a.Host, b.Status)
	}
}
