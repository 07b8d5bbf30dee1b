package sender

import "testing"

// A plain Splunk webhook is splunk's; one carrying a notable, or sent by an
// ES correlation search, is splunk-es's.
func TestSplunkAndSplunkES(t *testing.T) {
	plain := mustParse(t, `{"result":{"host":"a","count":"3"},"sid":"s1","results_link":"http://x","search_name":"errors","app":"search"}`)
	notable := mustParse(t, `{"result":{"rule_name":"Excessive Failed Logins","security_domain":"access","urgency":"high","user":"alice"},"sid":"s2","results_link":"http://x","search_name":"Access - Excessive Failed Logins - Rule","app":"SplunkEnterpriseSecuritySuite"}`)
	escu := mustParse(t, `{"result":{"dest":"h","user":"bob"},"sid":"s3","results_link":"http://x","search_name":"ESCU - Detect Mimikatz - Rule","app":"DA-ESS-ContentUpdate"}`)
	if !mapped("splunk").Match(plain) || mapped("splunk-es").Match(plain) {
		t.Error("a plain webhook is splunk's alone")
	}
	for _, v := range []Value{notable, escu} {
		if mapped("splunk").Match(v) || !mapped("splunk-es").Match(v) {
			t.Errorf("%s is splunk-es's alone", v.Compact())
		}
	}
	events, _ := mapped("splunk-es").Map(escu)
	if e := events[0]; e.Rule != "ESCU - Detect Mimikatz - Rule" || e.Title != e.Rule || e.Entities["user"] != "bob" || e.Host != "h" {
		t.Errorf("%+v", e)
	}
}

func TestSplunkESMitreAndCommand(t *testing.T) {
	e := oneEvent(t, mapped("splunk-es"), `{"index":"notable","rule_name":"r","security_domain":"endpoint","urgency":"low",
		"annotations":{"mitre_attack":{"mitre_technique_id":["T1059.001"]}},"process":"powershell.exe -enc AAA","process_name":"powershell.exe","status":"5"}`)
	if e.Labels["mitre_attack"] != "T1059.001" {
		t.Errorf("mitre %q", e.Labels["mitre_attack"])
	}
	if e.Entities["process"] != "powershell.exe" || e.Entities["command"] != "powershell.exe -enc AAA" {
		t.Errorf("entities %v", e.Entities)
	}
	if e.Status != "resolved" {
		t.Errorf("status 5 (Closed) reads %q", e.Status)
	}
}
