package sender

import (
	"net/url"
	"strings"

	"github.com/openrecall/openrecall"
)

// zabbixScale is Zabbix's trigger severity scale, by name and by number
// ({EVENT.NSEVERITY}): Not classified (0), Information (1), Warning (2),
// Average (3), High (4), Disaster (5). Warning is below Average in Zabbix,
// so Warning is low and Average medium.
var zabbixScale = Scale{
	"notclassified": openrecall.SeverityInfo, "0": openrecall.SeverityInfo,
	"information": openrecall.SeverityInfo, "1": openrecall.SeverityInfo,
	"warning": openrecall.SeverityLow, "2": openrecall.SeverityLow,
	"average": openrecall.SeverityMedium, "3": openrecall.SeverityMedium,
	"high": openrecall.SeverityHigh, "4": openrecall.SeverityHigh,
	"disaster": openrecall.SeverityCritical, "5": openrecall.SeverityCritical,
}

// zabbix is the Zabbix adapter. A Zabbix webhook media type posts the JSON
// object its parameters make — names chosen by whoever wrote the media type,
// values Zabbix macros — so the adapter reads a parameter by its name
// folded (case, '.', '_', '-' and spaces ignored: event_id, eventid, EventID
// and EVENT.ID are one): the common ones (event_id, event_name, trigger_id,
// trigger_name, trigger_name_orig, trigger_description, trigger_severity,
// event_severity, event_nseverity, trigger_status, event_status,
// event_value, event_update_status, event_update_action, host, host_name,
// host_host, host_ip, item_name, item_value, event_date, event_time,
// event_tags, alert_subject, alert_message, url), the shorter ones of
// Zulip's integration (hostname, severity, status, item, trigger, link)
// and Keep's (id, triggerId, name, service, lastReceived, description).
//
// Title: the event name ({EVENT.NAME}), else the trigger name, else the
// alert subject. Never the trigger description: that is text.
//
// Rule: the trigger's name as sent — {TRIGGER.NAME.ORIG} when the media
// type sends it, else {TRIGGER.NAME}, else the event name — with the host's
// name, where the rendered name carries it, written back as the {HOST.NAME}
// macro it came from, so that a template's trigger has one rule on every
// host. The trigger id is a label: Zabbix gives each host's copy of a
// template trigger its own id, so it would split one check by host.
//
// Service: an event tag service ({EVENT.TAGS} "service:api" or
// {EVENT.TAGSJSON}); Zabbix has no other notion of one. The host
// ({HOST.NAME}, {HOST.HOST}, and Keep's "service" parameter, which is
// {HOST.HOST}) is Host, never the service. Environment: a tag env or
// environment. Every unrendered macro ("{HOST.HOST}", "{$ZABBIX.URL}") is
// dropped.
//
// ID: "zbx-" + the event id ({EVENT.ID}, else the eventid of the link): a
// problem event is one episode, its recovery and updates carry the same
// {EVENT.ID}.
//
// Status: PROBLEM is firing, OK and RESOLVED resolved (trigger_status,
// event_status, status), else event_value 1 firing and 0 resolved; an update
// whose action acknowledged the problem is acknowledged.
func zabbix() Sender {
	return Sender{
		Name: "zabbix", Display: "Zabbix", Security: false, Episode: true,
		Match: func(v Value) bool {
			if !v.IsObject() || v.Has("event") || v.Has("alerts") {
				return false
			}
			p := zabbixParams(v)
			trigger := p.has("triggerid", "triggername", "triggernameorig", "trigger", "triggerdescription", "triggerseverity", "triggerstatus", "eventnseverity", "eventupdatestatus")
			if !trigger {
				return false
			}
			status := strings.ToUpper(p.get("triggerstatus", "eventstatus", "status"))
			sev := zabbixScale.Map(p.get("triggerseverity", "eventseverity", "severity"))
			link := p.get("link", "url", "alerturl", "eventurl", "triggerurl")
			return status == "PROBLEM" || status == "OK" || status == "RESOLVED" ||
				(sev != openrecall.SeverityUnknown && p.get("triggerseverity", "eventseverity", "severity") != "") ||
				strings.Contains(link, "tr_events.php") || p.has("eventnseverity", "eventupdatestatus")
		},
		Map: func(v Value) ([]Event, error) {
			p := zabbixParams(v)
			var e Event
			host, _ := p.first("hostname", "host", "hosthost", "service")
			e.Host = host
			visible := p.get("hostname")

			if t, k := p.first("eventname", "triggername", "trigger", "name", "alertsubject"); t != "" {
				e.Set(PartTitle, t, k)
			}
			if r, k := p.first("triggernameorig", "triggername", "trigger", "eventname", "name"); r != "" {
				e.Set(PartRule, zabbixHostMacro(r, visible, host, p.get("hosthost")), k)
			}

			tags := zabbixTags(p.raw("eventtags", "tags", "eventtagsjson"))
			if s := Rendered(tags["service"]); s != "" {
				e.Set(PartService, s, p.key("eventtags", "tags", "eventtagsjson")+".service")
			}
			for _, k := range []string{"env", "environment"} {
				if s := Rendered(tags[k]); s != "" {
					e.Set(PartEnvironment, s, p.key("eventtags", "tags", "eventtagsjson")+"."+k)
					break
				}
			}
			for k, t := range tags {
				if k != "service" && k != "env" && k != "environment" {
					e.Label("tag."+k, t)
				}
			}

			if s, k := p.first("triggerseverity", "eventseverity", "severity", "eventnseverity", "triggernseverity"); s != "" {
				e.Set(PartSeverity, s, k)
			}

			link, _ := p.first("link", "url", "alerturl", "eventurl", "triggerurl")
			if id, k := p.first("eventid", "id"); !e.SetID(k, "zbx-", "", id) {
				e.SetID(p.key("link", "url", "alerturl", "eventurl", "triggerurl"), "zbx-", "", zabbixQuery(link, "eventid"))
			}

			e.Status = zabbixStatus(p)
			e.Timestamp = v.Get(p.key("lastreceived")).Time()
			if date := p.get("eventdate"); date != "" {
				e.Timestamp = Value{date + " " + p.get("eventtime")}.Time()
			}

			triggerID := p.get("triggerid")
			if triggerID == "" {
				triggerID = zabbixQuery(link, "triggerid")
			}
			e.Label("trigger_id", triggerID)
			e.Label("host_ip", p.get("hostip"))
			e.Label("host", host)
			e.Label("url", link)
			e.Link(openrecall.LinkSource, link)
			e.Label("update_action", p.get("eventupdateaction", "updateaction"))

			desc := p.get("triggerdescription", "description")
			e.Text = JoinText(desc, p.get("alertmessage", "message"), Evidence(
				[2]string{"host", host},
				[2]string{"host ip", p.get("hostip")},
				[2]string{"item", p.get("itemname", "item")},
				[2]string{"value", p.get("itemvalue", "itemlastvalue")},
				[2]string{"operational data", p.get("eventopdata")},
				[2]string{"trigger id", triggerID},
				[2]string{"url", link},
			))
			return []Event{e}, nil
		},
		Severity: zabbixScale.Map,
		Levels:   []string{"Not classified", "Information", "Warning", "Average", "High", "Disaster", "0", "1", "2", "3", "4", "5"},
		Doc: Doc{
			Point: "a media type of type Webhook whose script POSTs its parameters as JSON to http://HOST:9555/api/v1/alerts/zabbix, with parameters event_id {EVENT.ID}, event_name {EVENT.NAME}, trigger_name {TRIGGER.NAME}, trigger_name_orig {TRIGGER.NAME.ORIG}, trigger_id {TRIGGER.ID}, trigger_description {TRIGGER.DESCRIPTION}, trigger_severity {TRIGGER.SEVERITY}, trigger_status {TRIGGER.STATUS}, event_value {EVENT.VALUE}, event_update_action {EVENT.UPDATE.ACTION}, host_name {HOST.NAME}, host_ip {HOST.IP}, item_name {ITEM.NAME}, item_value {ITEM.VALUE}, event_date {EVENT.DATE}, event_time {EVENT.TIME}, event_tags {EVENT.TAGSJSON}",
			Auth:  "the script's request header Authorization: Bearer TOKEN",
			Title: "event_name ({EVENT.NAME}), else trigger_name", Severity: "trigger_severity / event_severity (Not classified … Disaster), else event_nseverity (0-5)",
			Service: "the event tag service (never the host)", Rule: "trigger_name_orig, else trigger_name (the host's name written back as {HOST.NAME})",
			ID: "zbx- + event_id", Source: "Zulip's Zabbix fixtures (zulip/zulip zerver/webhooks/zabbix), Keep's Zabbix media type parameters (keephq/keep), Zabbix macro documentation",
		},
	}
}

// zabbixParamSet is a Zabbix payload's top-level parameters by folded name.
type zabbixParamSet struct {
	v    Value
	keys map[string]string // folded name → key as sent
}

func zabbixParams(v Value) zabbixParamSet {
	p := zabbixParamSet{v: v, keys: map[string]string{}}
	for _, k := range v.Keys() {
		f := strings.ReplaceAll(FoldLevel(k), ".", "")
		if _, dup := p.keys[f]; !dup {
			p.keys[f] = k
		}
	}
	return p
}

// key returns the key as sent of the first folded name present, or "".
func (p zabbixParamSet) key(names ...string) string {
	for _, n := range names {
		if k, ok := p.keys[n]; ok {
			return k
		}
	}
	return ""
}

// first returns the first rendered, non-blank value of the names, and its
// key as sent.
func (p zabbixParamSet) first(names ...string) (string, string) {
	for _, n := range names {
		if k, ok := p.keys[n]; ok {
			if s := Rendered(p.v.Get(k).String()); s != "" {
				return s, k
			}
		}
	}
	return "", ""
}

func (p zabbixParamSet) get(names ...string) string { s, _ := p.first(names...); return s }

// raw returns the first present value of the names, whatever its type.
func (p zabbixParamSet) raw(names ...string) Value {
	for _, n := range names {
		if k, ok := p.keys[n]; ok && p.v.Has(k) {
			return p.v.Get(k)
		}
	}
	return Value{}
}

func (p zabbixParamSet) has(names ...string) bool { return p.key(names...) != "" }

// zabbixHostMacro writes a host's name, where a rendered trigger name
// carries it, back as the {HOST.NAME} macro ("Zabbix agent on web-1 is
// unreachable" is the trigger "Zabbix agent on {HOST.NAME} is
// unreachable").
func zabbixHostMacro(name string, hosts ...string) string {
	for _, h := range hosts {
		if len(h) >= 3 && strings.Contains(name, h) {
			name = strings.ReplaceAll(name, h, "{HOST.NAME}")
		}
	}
	return name
}

// zabbixTags reads event tags: {EVENT.TAGSJSON} ([{"tag":"service",
// "value":"api"}], as an array or a JSON string), or {EVENT.TAGS}
// ("service:api, env:prod").
func zabbixTags(v Value) map[string]string {
	out := map[string]string{}
	if s := strings.TrimSpace(v.String()); strings.HasPrefix(s, "[") {
		if parsed, err := Parse([]byte(s)); err == nil {
			v = parsed
		}
	}
	if v.IsArray() {
		for _, t := range v.Elements() {
			if k := t.Get("tag").String(); k != "" {
				out[strings.ToLower(k)] = t.Get("value").String()
			}
		}
		return out
	}
	if v.IsObject() {
		for k, val := range v.Labels() {
			out[strings.ToLower(k)] = val
		}
		return out
	}
	for _, part := range strings.Split(Rendered(v.String()), ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), ":")
		if k = strings.TrimSpace(k); k != "" {
			out[strings.ToLower(k)] = strings.TrimSpace(val)
		}
	}
	return out
}

// zabbixQuery returns a query parameter of a Zabbix link
// (tr_events.php?triggerid=…&eventid=…).
func zabbixQuery(link, name string) string {
	_, q, ok := strings.Cut(link, "?")
	if !ok {
		return ""
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return ""
	}
	return vals.Get(name)
}

// zabbixStatus reads the event's status.
func zabbixStatus(p zabbixParamSet) string {
	action := strings.ToLower(p.get("eventupdateaction", "updateaction"))
	if strings.Contains(action, "acknowledged") && !strings.Contains(action, "unacknowledged") {
		return openrecall.StatusAcknowledged
	}
	switch strings.ToUpper(p.get("triggerstatus", "eventstatus", "status")) {
	case "PROBLEM":
		return openrecall.StatusFiring
	case "OK", "RESOLVED":
		return openrecall.StatusResolved
	}
	switch p.get("eventvalue") {
	case "0":
		return openrecall.StatusResolved
	}
	return openrecall.StatusFiring
}
