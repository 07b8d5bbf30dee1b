package fingerprint

import (
	"testing"

	"github.com/openrecall/openrecall"
)

// TestTemplateIssueCases are the merges and splits the token classifier
// was written for: each pair names whether its two lines are one event.
func TestTemplateIssueCases(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"http method and route", `10.11.10.1 "GET /v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail HTTP/1.1" status: 200 len: 1893`,
			`10.11.10.1 "POST /v2/54fadb412c4e40cdbaed9335e4c35a9e/os-server-external-events HTTP/1.1" status: 200 len: 380`, false},
		{"one route, other ids", `10.11.10.1 "GET /v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail HTTP/1.1" status: 200 len: 1893 time: 0.2477829`,
			`10.11.21.7 "GET /v2/e9746973ac574c6b8a9e8857f56a7608/servers/detail HTTP/1.1" status: 404 len: 12 time: 0.01`, true},
		{"quoted word", "location icon should now be in state 'Active'", "location icon should now be in state 'Inactive'", false},
		{"word before a masked id", "reason = AuthFail:0x2c", "reason = AssocFail:0x2c", false},
		{"key:value keeps its key", "onExtend:1514038530000 14 0 4", "onExtend:1514038599999 3 1 0", true},
		{"key=value keeps its key", "psu failure ambient=30", "psu failure ambient=41", true},
		{"weekday and month names", "Connection from 82.68.222.195 at Sun Jul 17 23:21:54 2005", "Connection from 10.0.0.1 at Wed Feb 2 01:02:03 2011", true},
		{"signed numbers", "boot = -5", "boot = 5", true},
		{"units", "1,120 bytes (1.09 KB) sent", "98 bytes (98 B) sent", true},
		{"names joined to digits", "Link eth0 down", "Link wlan0 down", false},
		{"instance numbers", "Link eth0 down", "Link eth1 down", true},
		{"kinds ending in digits", "ipv4 route added", "ipv6 route added", false},
		{"ATT&CK techniques", "Suspicious T1059.001 activity", "Suspicious T1059.003 activity", false},
		{"CVE ids", "Exploit of CVE-2021-42278 detected", "Exploit of CVE-2021-42287 detected", false},
		{"host names", "Certificate for shop.example.com expires in 28 days", "Certificate for *.corp.example.org expires in 3 days", true},
		{"reverse-DNS names of code", "loading com.apple.iokit.io80211family", "loading com.apple.driver.airport", false},
		{"empty values", "connection from 10.0.0.1 () at Mon Jun 20 03:40:59 2005", "connection from 10.0.0.2 (host8.example.net) at Fri Jun 17 07:07:00 2005", true},
		{"restated sizes and bounds", "close, 1190 bytes (1.16 KB) sent, lifetime 00:02", "close, 815 bytes sent, lifetime <1 sec", true},
		{"lists of values", "ask 10.0.0.1:50010 to delete blk_-857 blk_-912 blk_876", "ask 10.0.0.2:50010 to delete blk_-514", true},
		{"dot leaders", "data store interrupt caused by dcbf.........0", "data store interrupt caused by icbi.........0", false},
		{"hex masks", "setSystemUiVisibility vis=0 mask=ffffffff", "setSystemUiVisibility vis=4 mask=1", true},
		{"code names with a numbered part", "Registering class org.apache.hadoop.mapreduce.v2.app.job.event.JobEventType", "Registering class org.apache.hadoop.mapreduce.v2.app.job.event.TaskEventType", false},
		{"an account's value stays", "authentication failure; rhost=10.0.0.1 user=root", "authentication failure; rhost=10.0.0.1 user=guest", false},
		{"host ordinals", "Disk 91% full on db-7", "Disk 93% full on cache-2", true},
		{"pod names", "Pod etl-worker-7d9f8c6b5-x2x9z OOMKilled", "Pod etl-worker-5c4b3a291-k8j7h OOMKilled", true},
		{"account names", "Invalid user oracle from 187.141.143.180", "Invalid user admin from 10.0.0.1", true},
		{"bracketed IPv6", "Target [2001:db8::1]:443 down", "Target 10.0.0.1:9100 down", true},
		{"may is a word", "this may take a while", "this can take a while", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ta, tb := Template(tt.a), Template(tt.b)
			if (ta == tb) != tt.same {
				t.Errorf("Template(%q) = %q, Template(%q) = %q; same event: %v", tt.a, ta, tt.b, tb, tt.same)
			}
			for _, s := range []string{ta, tb} {
				if again := Template(s); again != s {
					t.Errorf("not idempotent: %q → %q", s, again)
				}
			}
		})
	}
}

// TestIdentityLabelValues checks the masking of identity label values: a
// CronJob's runs and a pod's hash go, targets and hosts stay.
func TestIdentityLabelValues(t *testing.T) {
	e := newExtractor(t, nil)
	job := func(name string) openrecall.Alert {
		return openrecall.Alert{Labels: labels("alertname", "KubeJobFailed", "app", "ledger-export", "namespace", "reporting", "job_name", name)}
	}
	if a, b := e.Identify(job("nightly-ledger-export-29212038")), e.Identify(job("nightly-ledger-export-29333256")); a != b || a.Service != "ledger-export/reporting/nightly-ledger-export" {
		t.Errorf("CronJob runs: %v and %v, want one identity ledger-export/reporting/nightly-ledger-export", a, b)
	}
	if a, b := e.Identify(job("nightly-ledger-export")), e.Identify(job("weekly-ledger-export")); a == b {
		t.Errorf("two jobs share %v", a)
	}
	for _, v := range []string{"10.0.0.1:9115", "https://shop-29212038.example.com", "node-12345678.example.com", "[2001:db8::1]:443"} {
		if got := runOwner(v); got != v {
			t.Errorf("runOwner(%q) = %q, want it unchanged", v, got)
		}
	}
	for in, want := range map[string]string{"nightly-29212038-x2x9z": "nightly", "checkout-7d9f8b6c5-x2x9z": "checkout", "web": "web", "mysql-2": "mysql-2"} {
		if got := runOwner(in); got != want {
			t.Errorf("runOwner(%q) = %q, want %q", in, got, want)
		}
	}
}
