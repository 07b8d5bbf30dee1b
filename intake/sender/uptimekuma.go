package sender

import (
	"net/url"
	"strings"

	"github.com/openrecall/openrecall"
)

// uptimeKuma reads Uptime Kuma's Webhook notification (application/json,
// or its form-data "data" member decoded): {"heartbeat": {monitorID,
// status, time, msg, ping, important, duration, retries, timezone,
// timezoneOffset, localDateTime}, "monitor": {id, name, url, type,
// hostname, port, pathName, tags, …}, "msg"}. It is recognised by a
// heartbeat with monitorID and status beside a monitor with id or name, by
// a monitor with name and type beside msg (a notification without a
// heartbeat: a certificate about to expire), or by the test notification
// ({"heartbeat": null, "monitor": null, "msg"}), a notice for a person.
//
// Rule is monitor.name exactly as sent (the monitor is the check; its
// numeric id repeats across Uptime Kuma instances); a notification without
// a heartbeat is another check of the monitor: "NAME certificate expiry"
// when it is about the certificate, else "NAME notification". The title is
// msg ("[NAME] [🔴 Down] connect ECONNREFUSED …"), the one Uptime Kuma shows.
// Service comes only from a monitor tag service (or app); else it is left
// empty, the monitor is the rule. Host is monitor.hostname, else the host of
// monitor.url.
//
// heartbeat.status: 0 down is firing, 1 up resolved, 2 pending (failing,
// retries not yet spent) firing, 3 maintenance a notice. Uptime Kuma
// notifies on important heartbeats, the changes of status, so the id is
// "uk-" + monitorID + "/" + heartbeat.time: one per change, a redelivery
// keeps it, the next firing gets another; the ids name episodes.
//
// Uptime Kuma has no severity: Severity and Levels are empty, and its
// alerts read as unknown severity.
func uptimeKuma() Sender {
	return Sender{
		Name: "uptime-kuma", Display: "Uptime Kuma", Security: false, Episode: true,
		Match: uptimeKumaMatch,
		Map:   uptimeKumaMap,
		Doc: Doc{
			Point:    "Settings → Notifications → Setup Notification, type Webhook, Post URL http://HOST:9555/api/v1/alerts/uptime-kuma, Request Body application/json; enable it on the monitors",
			Auth:     `Additional Headers {"Authorization": "Bearer TOKEN"}`,
			Title:    "msg",
			Severity: "none (Uptime Kuma has no severity)",
			Service:  "a monitor tag service (or app), else none",
			Rule:     "monitor.name",
			ID:       "heartbeat.monitorID + heartbeat.time",
			Source:   "Uptime Kuma's webhook provider (louislam/uptime-kuma server/notification-providers/webhook.js) and heartbeat/monitor JSON",
		},
	}
}

func uptimeKumaMatch(v Value) bool {
	hb, mon := v.Get("heartbeat"), v.Get("monitor")
	switch {
	case hb.IsObject():
		return hb.Has("monitorID") && hb.Has("status") && mon.IsObject() && (mon.Has("id") || mon.Has("name"))
	case mon.IsObject():
		return mon.Has("name") && mon.Has("type") && v.Has("msg") && hb.IsNull()
	}
	return uptimeKumaTest(v)
}

// uptimeKumaTest reports whether v is Uptime Kuma's test notification:
// exactly heartbeat and monitor, both null, and msg.
func uptimeKumaTest(v Value) bool {
	keys := v.Keys()
	return len(keys) == 3 && keys[0] == "heartbeat" && keys[1] == "monitor" && keys[2] == "msg" &&
		v.Get("heartbeat").IsNull() && v.Get("monitor").IsNull() && v.Get("msg").String() != ""
}

func uptimeKumaMap(v Value) ([]Event, error) {
	var e Event
	hb, mon := v.Get("heartbeat"), v.Get("monitor")
	msg := strings.TrimSpace(v.Get("msg").String())
	if uptimeKumaTest(v) {
		e.Status = openrecall.StatusNotice
		e.Set(PartTitle, "Uptime Kuma test notification: "+msg, "msg")
		e.Text = msg
		return []Event{e}, nil
	}
	name := strings.TrimSpace(mon.Get("name").String())
	if !e.Set(PartTitle, msg, "msg") {
		e.Set(PartTitle, name+": "+hb.Get("msg").String(), "monitor.name")
	}
	if hb.IsObject() {
		e.Set(PartRule, name, "monitor.name")
		id := hb.Get("monitorID").String()
		if id == "" {
			id = mon.Get("id").String()
		}
		e.SetID("heartbeat.monitorID+heartbeat.time", "uk-", "/", id, hb.Get("time").String())
		switch hb.Get("status").String() {
		case "1":
			e.Status = openrecall.StatusResolved
		case "3":
			e.Status = openrecall.StatusNotice
		default: // 0 down, 2 pending
			e.Status = openrecall.StatusFiring
		}
		e.Label("status", map[string]string{"0": "down", "1": "up", "2": "pending", "3": "maintenance"}[hb.Get("status").String()])
		// time is UTC; localDateTime with timezoneOffset is the same instant.
		e.Timestamp = hb.Get("time").Time()
		if e.Timestamp.IsZero() {
			e.Timestamp = Value{hb.Get("localDateTime").String() + hb.Get("timezoneOffset").String()}.Time()
		}
	} else {
		check := " notification"
		if strings.Contains(strings.ToLower(msg), "certificate") {
			check = " certificate expiry"
		}
		e.Set(PartRule, name+check, "monitor.name+msg")
		e.Status = openrecall.StatusFiring
	}

	for _, t := range mon.Get("tags").Elements() {
		key := strings.ToLower(strings.TrimSpace(t.Get("name").String()))
		val := strings.TrimSpace(t.Get("value").String())
		if key == "" {
			continue
		}
		e.Label("tag_"+key, uptimeKumaOr(val, "true"))
		switch key {
		case "service", "app":
			if e.Service == "" {
				e.Set(PartService, val, "monitor.tags")
			}
		case "env", "environment":
			e.Set(PartEnvironment, val, "monitor.tags")
		}
	}
	target := strings.TrimSpace(mon.Get("url").String())
	if target == "https://" || target == "http://" {
		target = ""
	}
	e.Host = strings.TrimSpace(mon.Get("hostname").String())
	if e.Host == "" && target != "" {
		if u, err := url.Parse(target); err == nil {
			e.Host = u.Hostname()
		}
	}
	e.Label("monitor_type", mon.Get("type").String())
	e.Label("monitor_group", mon.Get("pathName").String())
	port := mon.Get("port").String()
	e.Text = JoinText(hb.Get("msg").String(), Evidence(
		[2]string{"monitor", name}, [2]string{"type", mon.Get("type").String()}, [2]string{"url", target},
		[2]string{"hostname", mon.Get("hostname").String()}, [2]string{"port", port},
		[2]string{"ping ms", hb.Get("ping").String()}, [2]string{"retries", hb.Get("retries").String()},
		[2]string{"duration s", hb.Get("duration").String()}, [2]string{"description", mon.Get("description").String()},
	))
	return []Event{e}, nil
}

// uptimeKumaOr returns s, or def when s is blank.
func uptimeKumaOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
