package intake

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake/sender"
)

// genericFixtures holds payloads of senders openrecall does not map, one
// folder per sender: each folder's payloads (*.json, one a file, as the
// sender posts it), an ATTRIBUTION file naming each payload's origin and
// licence, and golden.json, what the generic reading makes of them
// (rewritten with -update). DESIGN §3, "The generic reading".
const genericFixtures = "testdata/generic"

// genericWant is what a person reading a generic fixture expects: its
// status, and words its title must hold (the check's name).
type genericWant struct {
	status string
	title  string
}

// genericWants states, per fixture, the status and the title a person
// would agree with; every fixture of testdata/generic is listed.
var genericWants = map[string]genericWant{
	"appdynamics/health-rule-violation-started.json": {openrecall.StatusFiring, "Health Rule Violation Started - Critical"},
	"appdynamics/health-rule-violation-ended.json":   {openrecall.StatusResolved, "Health Rule Violation Ended - Critical"},
	"betterstack/incident-started.json":              {openrecall.StatusFiring, "example.com is down"},
	"betterstack/incident-acknowledged.json":         {openrecall.StatusAcknowledged, "example.com is down"},
	"betterstack/incident-resolved.json":             {openrecall.StatusResolved, "example.com is down"},
	"checkmk/host-up-to-down.json":                   {openrecall.StatusFiring, "CheckMK server1 - UP -> DOWN"},
	"checkmk/host-down-to-up.json":                   {openrecall.StatusResolved, "CheckMK server1 - DOWN -> UP"},
	"freshping/check-unreachable.json":               {openrecall.StatusFiring, "Test Check"},
	"freshping/check-reachable.json":                 {openrecall.StatusResolved, "Test Check"},
	"honeybadger/site-down.json":                     {openrecall.StatusFiring, "Heroku"},
	"honeybadger/site-up.json":                       {openrecall.StatusResolved, "Heroku"},
	"icinga2/service-critical.json":                  {openrecall.StatusFiring, "HTTP checkout"},
	"icinga2/service-ok.json":                        {openrecall.StatusResolved, "HTTP checkout"},
	"insping/website-not-responding.json":            {openrecall.StatusFiring, "http://privisus.zulipdev.org:9991"},
	"insping/website-available.json":                 {openrecall.StatusResolved, "http://privisus.zulipdev.org:9991"},
	"kapacitor/cpu-critical.json":                    {openrecall.StatusFiring, "cpu:cpu=cpu-total,host=serverA is CRITICAL"},
	"kapacitor/cpu-ok.json":                          {openrecall.StatusResolved, "cpu:cpu=cpu-total,host=serverA is OK"},
	"librenms/device-down.json":                      {openrecall.StatusFiring, "Alert for device 10.10.1.147 - Devices up/down"},
	"librenms/device-recovered.json":                 {openrecall.StatusResolved, "Device 10.10.1.147 recovered from Devices up/down"},
	"openstatus/monitor-error.json":                  {openrecall.StatusFiring, "test"},
	"openstatus/monitor-recovered.json":              {openrecall.StatusResolved, "test"},
	"pingdom/http-up-to-down.json":                   {openrecall.StatusFiring, "Test check"},
	"pingdom/imap-down-to-up.json":                   {openrecall.StatusResolved, "IMAP check"},
	"statuspage/incident-identified.json":            {openrecall.StatusFiring, "Database query delays"},
	"statuspage/incident-resolved.json":              {openrecall.StatusResolved, "Database query delays"},
	"sumologic/monitor-critical.json":                {openrecall.StatusFiring, "Checkout 5xx rate"},
	"sumologic/monitor-resolved-critical.json":       {openrecall.StatusResolved, "Checkout 5xx rate"},
	"thousandeyes/agent-offline-trigger.json":        {openrecall.StatusFiring, "Default Agent Offline Notification"},
	"thousandeyes/http-server-clear.json":            {openrecall.StatusResolved, "PDF Test"},
	"updown/check-down.json":                         {openrecall.StatusFiring, "https://updown.io"},
	"updown/check-up-again.json":                     {openrecall.StatusResolved, "https://updown.io"},
	"uptimerobot/monitor-down.json":                  {openrecall.StatusFiring, "Web Server"},
	"uptimerobot/monitor-up.json":                    {openrecall.StatusResolved, "Mail Server"},
}

// genericGolden is what one alert of a generic fixture reads as: every
// part a person checks by eye, the whole text included.
type genericGolden struct {
	Title    string            `json:"title"`
	Severity string            `json:"severity"`
	Status   string            `json:"status"`
	Sender   string            `json:"sender"`
	Rule     string            `json:"rule,omitempty"`
	ID       string            `json:"id"`
	Identity string            `json:"identity"`
	Service  string            `json:"service,omitempty"`
	Source   string            `json:"source,omitempty"`
	Origin   map[string]string `json:"origin,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Text     string            `json:"text"`
}

type genericGoldenFile struct {
	Fixture string          `json:"fixture"`
	Alerts  []genericGolden `json:"alerts"`
}

// TestGenericFixtures reads the payloads of senders openrecall does not
// map and holds each to its golden reading and to what a person expects
// (DESIGN §3, "The generic reading"): read, by no sender adapter; its
// title names the check (never a key=value rendering); a recovery or an
// acknowledgement is a notice, never triaged, a firing is triaged; and
// nothing a person reads is dropped — every string of the payload that is
// not an id or a time is in the title or the text.
func TestGenericFixtures(t *testing.T) {
	ex, err := fingerprint.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(genericFixtures)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	senders := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		senders++
		dir := d.Name()
		t.Run(dir, func(t *testing.T) {
			if _, ok := sender.Lookup(dir); ok {
				t.Errorf("%s is a mapped sender: its fixtures belong under testdata/senders", dir)
			}
			if _, err := os.Stat(filepath.Join(genericFixtures, dir, "ATTRIBUTION")); err != nil {
				t.Errorf("no ATTRIBUTION file: every fixture names its origin and licence")
			}
			names, err := filepath.Glob(filepath.Join(genericFixtures, dir, "*.json"))
			if err != nil {
				t.Fatal(err)
			}
			var goldens []genericGoldenFile
			var firing, notice bool
			for _, path := range names {
				name := filepath.Base(path)
				if name == "golden.json" {
					continue
				}
				key := dir + "/" + name
				seen[key] = true
				want, ok := genericWants[key]
				if !ok {
					t.Errorf("%s: no expectation in genericWants", key)
				}
				body, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				g := genericGoldenFile{Fixture: name}
				for _, rec := range readAll(t, string(body), Options{Source: name}) {
					if rec.Err != nil {
						t.Errorf("%s: rejected: %v", key, rec.Err)
						continue
					}
					a := rec.Alert
					g.Alerts = append(g.Alerts, genericGolden{
						Title: a.Title, Severity: string(a.Severity), Status: a.Status, Sender: a.Sender, Rule: a.Rule,
						ID: a.ID, Identity: ex.Identify(a).String(), Service: a.Service, Source: a.Source, Origin: a.Origin, Labels: a.Labels, Text: a.Text,
					})
					if a.Sender != openrecall.SenderGeneric {
						t.Errorf("%s: read by %q, want the generic reading", key, a.Sender)
					}
					if a.Status != want.status {
						t.Errorf("%s: status %q, want %q", key, a.Status, want.status)
					}
					if !strings.Contains(a.Title, want.title) {
						t.Errorf("%s: title %q, want the check's name %q", key, a.Title, want.title)
					}
					if strings.Contains(a.Title, "=") && !strings.Contains(want.title, "=") {
						t.Errorf("%s: title %q is a key=value rendering", key, a.Title)
					}
					if openrecall.Triaged(a.Status) {
						firing = true
					} else {
						notice = true
					}
					if missing := unreadStrings(body, a); len(missing) > 0 {
						t.Errorf("%s: dropped what a person reads: %q", key, missing)
					}
				}
				goldens = append(goldens, g)
			}
			if !firing || !notice {
				t.Errorf("%s: want a firing and a recovery (firing %v, notice %v)", dir, firing, notice)
			}
			checkGenericGolden(t, dir, goldens)
		})
	}
	for key := range genericWants {
		if !seen[key] {
			t.Errorf("genericWants names %s, which is no fixture", key)
		}
	}
	if senders < 15 {
		t.Errorf("%d senders under %s: want at least 15", senders, genericFixtures)
	}
}

// unreadStrings returns the string leaves of a payload that are neither in
// the alert's title nor in its text, leaving out ids and times (their keys
// say so: an id, a uuid, a token, a time or date; or the value reads as a
// time) and what the reading put in a part of its own (service, source).
func unreadStrings(body []byte, a openrecall.Alert) []string {
	v, err := sender.Parse(body)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, l := range v.Scalars(0) {
		path, val := l[0], strings.TrimSpace(l[1])
		if !isStringLeaf(v, path) || idOrTimePath(path) || !(sender.Of(val).Time().IsZero()) {
			continue
		}
		clean := collapseSpace(val)
		if clean == "" || clean == a.Service || clean == a.Source {
			continue
		}
		if !strings.Contains(collapseSpace(a.Title), clean) && !strings.Contains(collapseSpace(a.Text), clean) {
			out = append(out, path+"="+val)
		}
	}
	return out
}

// isStringLeaf reports whether the leaf at a Scalars path is a JSON string.
func isStringLeaf(v sender.Value, path string) bool {
	cur := v
	for _, p := range strings.Split(path, ".") {
		if cur.IsArray() {
			var i int
			if err := json.Unmarshal([]byte(p), &i); err != nil {
				return false
			}
			cur = cur.At(i)
			continue
		}
		cur = cur.Get(p)
	}
	return cur.IsString()
}

// idOrTimePath reports whether the last key of a path names an id or a
// time.
func idOrTimePath(path string) bool {
	k := path
	if i := strings.LastIndex(k, "."); i >= 0 {
		k = k[i+1:]
	}
	k = strings.ToLower(k)
	for _, s := range []string{"id", "uuid", "token", "code", "time", "date", "_at", "timestamp", "since", "started", "version"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

func checkGenericGolden(t *testing.T, dir string, goldens []genericGoldenFile) {
	t.Helper()
	checkGoldenJSON(t, filepath.Join(genericFixtures, dir, "golden.json"), "TestGenericFixtures", goldens)
}
