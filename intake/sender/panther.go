package sender

import (
	"sort"
	"strings"

	"github.com/openrecall/openrecall"
)

// panther reads the alerts Panther (a SIEM: detections over a log
// pipeline) posts to a Custom Webhook destination, a security detection
// sender: every alert it sends is an attack (DESIGN §4). The payload is one
// alert: id (the DETECTION's id: the rule's or the policy's), alertId (the
// alert's own id, one per alert: Panther groups an event's matches into
// one alert for the rule's deduplication period), type (RULE,
// SCHEDULED_RULE, POLICY, CORRELATION_RULE, and the *_ERROR types when a
// detection itself failed), severity (INFO, LOW, MEDIUM, HIGH, CRITICAL),
// title (the alert's generated title, often naming the user or resource),
// name (the detection's display name), link (the alert in Panther's
// console), createdAt, alertContext (the rule's alert_context: user, ip,
// account…), description, runbook, tags, version; some payloads add the
// detection's reports ({"MITRE ATT&CK": ["TA0006:T1110"]}) and a status.
//
// The same alert through Panther's Amazon SNS destination is the SNS
// notification's Message.
//
// Recognised by Panther's own shape: a type of Panther's alert types with
// an alertId member (null for a policy in Panther's early payloads) and
// either an alertContext member or a link into a Panther console
// (runpanther.io, runpanther.net, panther.com), or the detection's id,
// name and severity beside them.
//
// The rule is id exactly as sent (else ruleId, detectionId): never the
// alert's id. The title is the detection's name (else the title, without
// the "New Alert: " or "[Re-sent]: " prefix early Panther versions add);
// the alert's own title, which names the user or resource the rule fired
// on, opens the text, so that one detection fired for another user keeps
// its Alert DNA. The text then has the description, the alert context as
// evidence, the runbook and the link.
//
// The id is "panther-" and alertId, one per alert (Episode); without one
// (a policy's alert in Panther's early payloads) the id is left to
// intake's content hash over everything the alert carries (title, text
// with the alert context, labels, severity, time, rule, entities), never a
// constant. Status: Panther's webhook sends no status change; a status
// member (as Panther's alert API writes it) OPEN is firing, TRIAGED
// acknowledged, RESOLVED and CLOSED resolved.
//
// Labels: panther_type (the alert type), tags (comma-joined, as the
// detection declares them: ATT&CK tactic names among them), and each of
// the detection's reports as sent: "MITRE ATT&CK" as mitre_attack
// ("TA0006:T1110, TA0006:T1078"), any other framework as report_<name>.
// Entities from the alert context: the user (user, username, user_name,
// userName, actor, actor_email, email, user_email, principal…) and the
// account (accountId, account_id, recipientAccountId). The host is the
// context's host or hostname.
func panther() Sender {
	return Sender{
		Name: "panther", Display: "Panther", Security: true, Episode: true,
		Match: pantherMatch,
		Map: func(v Value) ([]Event, error) {
			v = awsSNSMessage(v) // Panther's Amazon SNS destination, forced as panther
			var e Event
			for _, k := range []string{"id", "ruleId", "detectionId"} {
				if x := v.Get(k); x.IsString() && e.Set(PartRule, Rendered(x.String()), k) {
					break
				}
			}
			alertTitle := Rendered(v.Get("title").String())
			if !e.Set(PartTitle, Rendered(v.Get("name").String()), "name") {
				if !e.Set(PartTitle, pantherUnprefixed(alertTitle), "title") {
					e.Set(PartTitle, e.Rule, e.Origin[PartRule])
				}
			}
			e.Set(PartSeverity, v.Get("severity").String(), "severity")
			e.SetID("alertId", "panther-", "", v.Get("alertId").String())
			switch FoldLevel(v.Get("status").String()) {
			case "triaged":
				e.Status = openrecall.StatusAcknowledged
			case "resolved", "closed":
				e.Status = openrecall.StatusResolved
			default:
				e.Status = openrecall.StatusFiring
			}
			e.Timestamp = v.Get("createdAt").Time()
			e.Label("panther_type", v.Get("type").String())
			tags := v.Get("tags").Strings()
			e.Label("tags", strings.Join(tags, ", "))
			e.Tags(tags, "tags")
			reports := v.Get("reports")
			for _, k := range reports.Keys() {
				vals := strings.Join(reports.Get(k).Strings(), ", ")
				if key := pantherReportKey(k); key != "" {
					e.Label(key, vals)
				}
			}
			ctx := v.Get("alertContext")
			e.Host, _ = ctx.First("host", "hostname", "host_name", "computer_name", "device_name")
			for _, k := range []string{"user", "username", "user_name", "userName", "actor", "actor_email", "actor_user", "email", "user_email", "userEmail", "principal", "principalId", "user_principal_name"} {
				if x := ctx.Get(k); !x.IsObject() && !x.IsArray() {
					if s := Rendered(x.String()); s != "" {
						e.Entity("user", s)
						break
					}
				}
			}
			for _, k := range []string{"accountId", "account_id", "recipientAccountId", "aws_account_id"} {
				if s := Rendered(ctx.Get(k).String()); s != "" {
					e.Entity("account", s)
					break
				}
			}
			pairs := append([][2]string(nil), ctx.Scalars(64)...)
			sort.SliceStable(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
			pairs = append(pairs, [2]string{"runbook", v.Get("runbook").String()}, [2]string{"link", v.Get("link").String()})
			e.Link(openrecall.LinkSource, v.Get("link").String())
			e.Link(openrecall.LinkRunbook, v.Get("runbook").String()) // a runbook is often words: a link only when it is one
			opening := ""
			if alertTitle != "" && alertTitle != e.Title {
				opening = alertTitle
			}
			e.Text = JoinText(opening, v.Get("description").String(), Evidence(pairs...))
			return []Event{e}, nil
		},
		Severity: Scale{
			"critical": openrecall.SeverityCritical, "high": openrecall.SeverityHigh, "medium": openrecall.SeverityMedium,
			"low": openrecall.SeverityLow, "info": openrecall.SeverityInfo, "informational": openrecall.SeverityInfo,
		}.Map,
		Levels: []string{"CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO"},
		Doc: Doc{
			Point:    "Panther Console → Configure → Alert Destinations → Custom Webhook, URL http://HOST:9555/api/v1/alerts/panther?token=TOKEN (or an Amazon SNS destination whose HTTPS subscription is that URL)",
			Auth:     "a custom HTTP header (Header Name Authorization, Header Value Bearer TOKEN), or ?token=",
			Title:    "name (the detection's display name), else title; the alert's own title opens the text",
			Severity: "severity (INFO, LOW, MEDIUM, HIGH, CRITICAL)",
			Service:  "tags service:… (an alert names no service)",
			Rule:     "id (the detection's id), else ruleId",
			ID:       "panther- + alertId (one per alert), else a hash of the content",
			Source:   "Panther's documented Custom Webhook payload (docs.panther.com, alerts/destinations/custom_webhook); written for openrecall",
		},
	}
}

// pantherTypes are Panther's alert types (the type member).
var pantherTypes = map[string]bool{
	"RULE": true, "SCHEDULED_RULE": true, "POLICY": true, "CORRELATION_RULE": true,
	"RULE_ERROR": true, "SCHEDULED_RULE_ERROR": true, "POLICY_ERROR": true, "SYSTEM_ERROR": true,
}

// pantherMatch reports whether v is an alert Panther's Custom Webhook
// posts: one of Panther's alert types and an alertContext member or a link
// into a Panther console, or an alertId member (its value may be null) with
// the detection's id, name and severity.
func pantherMatch(v Value) bool {
	if !v.IsObject() || !pantherTypes[strings.TrimSpace(v.Get("type").String())] {
		return false
	}
	keys := v.Keys()
	has := func(k string) bool {
		i := sort.SearchStrings(keys, k)
		return i < len(keys) && keys[i] == k
	}
	if has("alertContext") || pantherLink(v.Get("link").String()) {
		// Panther's own members: an alert without its alertId (early
		// policy alerts) is still Panther's, never generic JSON whose "id"
		// (the detection's) would name every alert of the detection.
		return true
	}
	return has("alertId") && v.Get("id").IsString() && v.Has("name") && v.Has("severity")
}

// pantherLink reports whether a link points into a Panther console
// (https://acme.runpanther.net/alerts/…, https://runpanther.io/alerts/…,
// a console under panther.com).
func pantherLink(link string) bool {
	link = strings.ToLower(strings.TrimSpace(link))
	rest, ok := strings.CutPrefix(link, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(link, "http://"); !ok {
			return false
		}
	}
	host, _, _ := strings.Cut(rest, "/")
	for _, d := range []string{"runpanther.io", "runpanther.net", "panther.com"} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// pantherUnprefixed removes the prefix early Panther versions put before a
// rule's title ("New Alert: ", "[Re-sent]: ").
func pantherUnprefixed(title string) string {
	for _, p := range []string{"New Alert: ", "[Re-sent]: "} {
		if rest, ok := strings.CutPrefix(title, p); ok {
			return strings.TrimSpace(rest)
		}
	}
	return title
}

// pantherReportKey is the label a report of the detection is kept as:
// "MITRE ATT&CK" as mitre_attack, any other framework as report_ and its
// name folded to lowercase letters, digits and '_' ("" when none is left).
func pantherReportKey(name string) string {
	if f := FoldLevel(name); f == "mitreatt&ck" || f == "mitreattack" || f == "mitre" {
		return "mitre_attack"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	s := strings.TrimSuffix(b.String(), "_")
	if s == "" {
		return ""
	}
	return "report_" + s
}
