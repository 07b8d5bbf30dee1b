package sender

import (
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/openrecall/openrecall"
)

// The generic reading of a JSON object that no sender recognises (DESIGN
// §3, "The generic reading"): what a person would read in it. Its parts
// come from keys found at any depth — never through an array, whose
// elements are many things at once — the shallowest first, and among keys
// at one depth in the order of the lists below.

// Keys the generic reading looks for, each list in precedence order. A
// rule key names the check that fired; without one the alert has no rule
// of its own, so memory never vouches for it.
var (
	// GenericRuleKeys name the check that fired, exactly as sent; they are
	// read at any depth (Generic), at the top level for the product's own
	// object with members of its own.
	GenericRuleKeys = []string{"rule", "rule_id", "ruleId", "rule_name", "ruleName", "alertname", "alert_name", "alertName", "check", "check_name", "monitor", "monitor_name", "alarm_name", "AlarmName", "signature", "signature_id", "checkName", "monitorName", "monitor_friendly_name", "monitorFriendlyName", "alarmName"}
	// The service, environment, id, host and time of a generic alert are
	// read at the top level only.
	GenericServiceKeys = []string{"service", "service_name", "app", "application", "component"}
	GenericEnvKeys     = []string{"environment", "env", "stage"}
	GenericIDKeys      = []string{"id", "uuid", "event_id", "eventId", "alert_id", "alertId", "incident_id", "dedup_key", "fingerprint"}
	GenericHostKeys    = []string{"host", "hostname", "host_name", "instance", "resource"}
	GenericTimeKeys    = []string{"timestamp", "time", "@timestamp", "date", "created_at", "createdAt", "datetime"}
)

// Keys of the generic reading at any depth, folded (FoldKey), each list in
// precedence order.
var (
	// genericNameKeys name the check, monitor, alert or rule itself: the
	// title a person looks for first, after an explicit title.
	genericNameKeys = []string{"checkname", "monitorname", "monitorfriendlyname", "alertname", "alarmname", "rulename",
		"incidentname", "triggername", "policyname", "detectorname", "eventname", "alerttitle", "incidenttitle", "ruletitle"}
	// genericNameOwners are the objects whose name or display name is the
	// alert's name (service.display_name, monitor.name, incident.name).
	genericNameOwners = []string{"check", "monitor", "alert", "alarm", "rule", "incident", "event", "service", "test", "trigger",
		"site", "problem", "issue", "detector", "probe", "job", "task", "policy", "condition", "endpoint", "checkresult"}
	// genericNotNames own a name that is not the alert's (a project's, a
	// user's, an organization's).
	genericNotNames = []string{"project", "owner", "user", "users", "actor", "organization", "organisation", "org", "page", "team",
		"account", "credential", "contact", "assignee", "environment", "environments", "meta", "tags", "labels", "customer", "tenant", "workspace"}
	// genericWholeNames are keys whose string value names the check itself.
	genericWholeNames = []string{"check", "monitor", "alarm", "alert", "rule"}
	// genericSummaryKeys state the alert in one line.
	genericSummaryKeys = []string{"summary", "subject", "headline"}
	// genericMessageKeys describe it: read after every name.
	genericMessageKeys = []string{"message", "msg", "description", "desc", "text", "details", "detail", "body", "longdescription",
		"output", "cause", "reason", "errormessage", "error", "alertdetails", "content"}
	// genericSubjectKeys name what was checked: with a state word they make
	// a title when nothing names the alert ("check.down: https://…").
	genericSubjectKeys = []string{"url", "requesturl", "monitorurl", "target", "endpoint", "hostname", "host", "site", "address"}
	// genericStatusKeys carry the alert's state; a key ending in status or
	// state (check_state_name too) does as well, unless it names a former
	// one (previous_state, old_status, last_status).
	genericStatusKeys = []string{"status", "state", "currentstate", "currentstatus", "newstatus", "newstate", "event", "eventtype",
		"alerttype", "alerttypefriendlyname", "notificationtype", "action", "eventaction", "alertaction", "type"}
	genericStatusSuffixes = []string{"status", "state", "statename", "statusname", "statetext", "statustext"}
	genericFormerPrefixes = []string{"previous", "prev", "old", "last", "former", "initial", "from", "recentlystarted"}
	// genericSeverityKeys carry the alert's severity; a key ending in
	// severity does as well.
	genericSeverityKeys = []string{"severity", "level", "priority", "urgency", "impact", "criticality", "importance", "importancelevel",
		"triggertype", "sev", "severitylevel", "prioritylevel", "alertseverity", "alertlevel", "alertpriority", "eventseverity", "eventlevel"}
	// genericLinkKeys hold a link to the sender's page for the alert.
	genericLinkKeys = []string{"url", "link", "href", "permalink", "shortlink", "deeplink", "detailsurl", "sourceurl", "alertresponseurl",
		"queryurl", "dashboardurl", "runbookurl", "runbook"}
)

// State words of a status value, a title or a severity, folded.
var (
	genericRecovered = wordSet("resolved", "resolve", "ok", "up", "recovered", "recovery", "recover", "clear", "cleared", "closed", "close",
		"normal", "ended", "available", "inactive", "operational", "restored", "fixed", "succeeded", "success", "passed", "healthy",
		"online", "reachable")
	genericAcknowledged = wordSet("acknowledged", "acknowledge", "ack", "acked")
	genericFiring       = wordSet("firing", "fired", "fire", "triggered", "trigger", "alert", "alerting", "down", "problem", "open",
		"opened", "reopened", "started", "start", "failed", "failure", "fail", "failing", "error", "errored", "degraded", "outage",
		"unavailable", "unreachable", "offline", "investigating", "identified", "unhealthy", "raised", "escalated", "violated",
		"violation", "critical", "warning", "major", "minor", "new")
	genericNegations = wordSet("not", "no", "non", "never")
)

// maxGenericLeaves caps the scalar fields a generic reading reads, and
// maxGenericEvidence the bytes of the "path: value" lines its text holds:
// twice an adapter's evidence, since nothing says which fields matter.
const (
	maxGenericLeaves   = 1024
	maxGenericEvidence = 2 * MaxEvidence
)

// genericLeaf is one scalar of the object: its dotted path, its folded
// last key and the key before it, its depth, and whether the path goes
// through an array.
type genericLeaf struct {
	path, key, parent string
	depth             int
	inArray           bool
	v                 Value
	text              string
}

// Generic reads a JSON object that no sender recognises as a person
// would read it (DESIGN §3, "The generic reading"); norm maps a severity
// value to the normalized scale (intake.NormalizeSeverity).
//
//   - Title: an explicit title; else the name of the check, monitor, alert
//     or rule (check_name, monitor_friendly_name, ruleName; the name or
//     display name of a check, monitor, service, incident… object; a name
//     that is not a project's, user's or organization's); else a summary;
//     else a message or description; else a state and what was checked
//     ("check.down: https://…"); only an object with none of these gets a
//     compact rendering of its scalar fields.
//   - Severity: the first severity-like key (severity, level, priority,
//     urgency, impact, importance, triggerType, …) whose value is on a
//     known scale — a word, P0–P5, Sev0–Sev5, a word inside the value
//     ("ResolvedCritical"), a number 0–5 under a priority, urgency or
//     sev key — else a status-like value that states one (an Icinga state
//     CRITICAL).
//   - Status: the first status-like key (status, state, current_state,
//     event, eventType, alert_type…, any key ending in status or state but
//     not a former one) whose value holds a state word decides — after an
//     arrow the last state counts ("DOWN -> UP"), a negated recovery is no
//     recovery ("Not Available"); else a recovery form in the title
//     (GenericTitleStatus); else a severity that is a recovery (Kapacitor's
//     level OK, Sumo Logic's ResolvedCritical); else firing.
//   - Rule: only from a rule-like key (GenericRuleKeys at any depth, then
//     the name or id of a rule, check, monitor or alarm object), so memory
//     vouches for the alert only when it names its check.
//   - Text: the description, then every scalar as "path: value" lines in
//     path order, capped at twice MaxEvidence — when the cap bites, ids, times,
//     numbers and booleans go first, so no string a person reads is
//     dropped; links (http and https only) are kept as labels too.
//
// An object with no non-blank scalar at all gives an event with neither
// title nor text, which intake rejects as empty.
func Generic(v Value, norm func(string) openrecall.Severity) Event {
	var e Event
	leaves := genericLeaves(v)
	title := genericTitle(v, leaves)
	if title.path != "" {
		e.Set(PartTitle, title.text, title.path)
	}
	pick := func(part string, keys []string) {
		for _, k := range keys {
			if e.Set(part, v.Get(k).String(), k) {
				return
			}
		}
	}
	if r, path := genericRule(leaves); r != "" {
		e.Set(PartRule, r, path)
	}
	if raw, path := genericSeverity(leaves, norm); raw != "" {
		e.Set(PartSeverity, raw, path)
	}
	pick(PartService, GenericServiceKeys)
	pick(PartEnvironment, GenericEnvKeys)
	for _, k := range GenericIDKeys {
		if e.SetID(k, "json-", "", v.Get(k).String()) {
			break
		}
	}
	e.PayloadID = PayloadID(openrecall.SenderGeneric, v, 0)
	e.Host, _ = v.First(GenericHostKeys...)
	for _, k := range GenericTimeKeys {
		if t := v.Get(k).Time(); !t.IsZero() {
			e.Timestamp = t
			break
		}
	}
	var statusFrom string
	e.Status, statusFrom = genericStatusFrom(leaves, e.Title)
	if statusFrom != "" {
		if e.Origin == nil {
			e.Origin = map[string]string{}
		}
		e.Origin[PartStatus] = statusFrom
	}
	prose := genericProse(leaves, title.path)
	skip := map[string]bool{prose.path: true}
	for _, p := range strings.Split(title.path, "+") {
		skip[p] = true
	}
	e.Text = JoinText(prose.text, genericEvidence(leaves, skip))
	for _, l := range leaves {
		if containsString(genericLinkKeys, l.key) || strings.HasSuffix(l.key, "url") {
			if u := strings.TrimSpace(l.text); httpLink(u) {
				e.Label(l.path, u)
			}
		}
	}
	if e.Title == "" && len(leaves) > 0 {
		var parts []string
		for _, l := range leaves {
			parts = append(parts, l.path+"="+l.text)
			if len(strings.Join(parts, " ")) > 160 {
				break
			}
		}
		e.Set(PartTitle, strings.Join(parts, " "), "(rendered)")
	}
	return e
}

// genericLeaves returns the object's non-blank scalars in path order.
func genericLeaves(v Value) []genericLeaf {
	var out []genericLeaf
	var walk func(x any, path []string, inArray bool) bool
	walk = func(x any, path []string, inArray bool) bool {
		if len(out) >= maxGenericLeaves {
			return false
		}
		switch t := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !walk(t[k], append(path, k), inArray) {
					return false
				}
			}
		case []any:
			for i, el := range t {
				if !walk(el, append(path, strconv.Itoa(i)), true) {
					return false
				}
			}
		case nil:
		default:
			s := strings.TrimSpace((Value{x}).String())
			if s == "" {
				return true
			}
			l := genericLeaf{path: strings.Join(path, "."), depth: len(path) - 1, inArray: inArray, v: Value{x}, text: s}
			l.key = FoldKey(path[len(path)-1])
			if len(path) > 1 {
				l.parent = FoldKey(path[len(path)-2])
			}
			out = append(out, l)
		}
		return true
	}
	walk(v.v, nil, false)
	return out
}

// FoldKey folds a key for lookup: lowercased, letters and digits only
// ("check_state_name" and "checkStateName" are "checkstatename").
func FoldKey(k string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, k)
}

// best returns the leaf of the lowest rank among those rank accepts
// (rank >= 0): the shallowest first, then the lowest rank, then path
// order. Leaves inside arrays are never taken.
func best(leaves []genericLeaf, rank func(genericLeaf) int) (genericLeaf, bool) {
	var got genericLeaf
	bestRank, found := 0, false
	for _, l := range leaves {
		if l.inArray {
			continue
		}
		r := rank(l)
		if r < 0 {
			continue
		}
		if !found || l.depth < got.depth || l.depth == got.depth && r < bestRank {
			got, bestRank, found = l, r, true
		}
	}
	return got, found
}

// index returns the position of s in list, or -1.
func index(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func containsString(list []string, s string) bool { return index(list, s) >= 0 }

// titleLeaf is the title's value and the path it came from.
type titleLeaf struct{ text, path string }

// genericTitle picks the title (see Generic): tiers in order, and within
// a tier the shallowest key.
func genericTitle(v Value, leaves []genericLeaf) titleLeaf {
	str := func(l genericLeaf) bool {
		return l.v.IsString() && Rendered(l.text) != "" && strings.IndexFunc(l.text, unicode.IsLetter) >= 0
	}
	tiers := []func(genericLeaf) int{
		func(l genericLeaf) int { return boolRank(str(l) && l.key == "title") },
		func(l genericLeaf) int {
			if !str(l) {
				return -1
			}
			return index(genericNameKeys, l.key)
		},
		func(l genericLeaf) int {
			if !str(l) || l.key != "name" && l.key != "displayname" && l.key != "title" {
				return -1
			}
			return index(genericNameOwners, l.parent)
		},
		func(l genericLeaf) int {
			if !str(l) {
				return -1
			}
			return index(genericWholeNames, l.key)
		},
		func(l genericLeaf) int {
			return boolRank(str(l) && (l.key == "name" || l.key == "displayname") && !containsString(genericNotNames, l.parent))
		},
		func(l genericLeaf) int {
			if !str(l) {
				return -1
			}
			return index(genericSummaryKeys, l.key)
		},
		func(l genericLeaf) int {
			if !str(l) {
				return -1
			}
			return index(genericMessageKeys, l.key)
		},
	}
	for _, rank := range tiers {
		if l, ok := best(leaves, rank); ok {
			return titleLeaf{text: l.text, path: l.path}
		}
	}
	// No name and no message: the state and what was checked.
	state, okState := best(leaves, func(l genericLeaf) int {
		if !str(l) || strings.IndexFunc(l.text, unicode.IsLetter) < 0 {
			return -1
		}
		return statusRank(l)
	})
	subject, okSubject := best(leaves, func(l genericLeaf) int {
		if !str(l) {
			return -1
		}
		return index(genericSubjectKeys, l.key)
	})
	switch {
	case okState && okSubject:
		return titleLeaf{text: state.text + ": " + subject.text, path: state.path + "+" + subject.path}
	case okSubject:
		return titleLeaf{text: subject.text, path: subject.path}
	}
	return titleLeaf{}
}

func boolRank(ok bool) int {
	if ok {
		return 0
	}
	return -1
}

// genericRule returns the rule: the first rule key at the shallowest
// depth, else the name or id of a rule, check, monitor or alarm object.
func genericRule(leaves []genericLeaf) (string, string) {
	folded := make([]string, len(GenericRuleKeys))
	for i, k := range GenericRuleKeys {
		folded[i] = FoldKey(k)
	}
	if l, ok := best(leaves, func(l genericLeaf) int { return index(folded, l.key) }); ok {
		if r := Rendered(l.text); r != "" {
			return r, l.path
		}
	}
	owners := []string{"rule", "check", "monitor", "alarm"}
	if l, ok := best(leaves, func(l genericLeaf) int {
		i := index(owners, l.parent)
		switch {
		case i < 0:
			return -1
		case l.key == "name":
			return 2 * i
		case l.key == "id":
			return 2*i + 1
		}
		return -1
	}); ok {
		if r := Rendered(l.text); r != "" {
			return r, l.path
		}
	}
	return "", ""
}

// statusRank ranks a status-like key, or -1 for another key.
func statusRank(l genericLeaf) int {
	if i := index(genericStatusKeys, l.key); i >= 0 {
		return i
	}
	for _, p := range genericFormerPrefixes {
		if strings.HasPrefix(l.key, p) {
			return -1
		}
	}
	for _, s := range genericStatusSuffixes {
		if strings.HasSuffix(l.key, s) {
			return len(genericStatusKeys)
		}
	}
	return -1
}

// severityRank ranks a severity-like key, or -1 for another key.
func severityRank(l genericLeaf) int {
	for _, p := range genericFormerPrefixes {
		if strings.HasPrefix(l.key, p) {
			return -1
		}
	}
	if i := index(genericSeverityKeys, l.key); i >= 0 {
		return i
	}
	if strings.HasSuffix(l.key, "severity") {
		return len(genericSeverityKeys)
	}
	return -1
}

// StatusFromTitle is the Origin of a status read from a recovery or
// acknowledgement form of the title (GenericTitleStatus).
const StatusFromTitle = "(title)"

// genericStatusFrom reads the status (see Generic) and where it came
// from: a key's path, StatusFromTitle, or "" when nothing said and the
// alert is firing.
func genericStatusFrom(leaves []genericLeaf, title string) (string, string) {
	if l, ok := best(leaves, func(l genericLeaf) int {
		if statusOf(l.text) == "" {
			return -1
		}
		return statusRank(l)
	}); ok {
		return statusOf(l.text), l.path
	}
	if s := GenericTitleStatus(title); s != "" {
		return s, StatusFromTitle
	}
	if l, ok := best(leaves, func(l genericLeaf) int {
		if s := statusOf(l.text); s != openrecall.StatusResolved && s != openrecall.StatusAcknowledged {
			return -1
		}
		return severityRank(l)
	}); ok {
		return statusOf(l.text), l.path
	}
	return openrecall.StatusFiring, ""
}

// statusOf reads the state words of a status value: after an arrow only
// the last state counts ("DOWN -> UP" is up); an acknowledgement word makes
// it acknowledged, else a recovery word not negated ("Not Available" is
// none) resolved, else a firing word firing; "" when it holds no state
// word (a number, "identified"… is firing: see genericFiring).
func statusOf(s string) string {
	for _, arrow := range []string{"->", "=>", "→"} {
		if i := strings.LastIndex(s, arrow); i >= 0 {
			s = s[i+len(arrow):]
		}
	}
	words := splitWords(s)
	ack, rec, fire := false, false, false
	for i, w := range words {
		negated := i > 0 && genericNegations[words[i-1]]
		switch {
		case genericAcknowledged[w] && !negated:
			ack = true
		case genericRecovered[w] && !negated:
			rec = true
		case genericRecovered[w], genericAcknowledged[w], genericFiring[w]:
			fire = true
		}
	}
	switch {
	case ack:
		return openrecall.StatusAcknowledged
	case rec:
		return openrecall.StatusResolved
	case fire:
		return openrecall.StatusFiring
	}
	return ""
}

// splitWords splits s into lowercase words at every character that is
// not a letter or digit and at lower-to-upper case changes
// ("ResolvedCritical", "ALERT_NOTIFICATION_CLEAR", "check.up").
func splitWords(s string) []string {
	var words []string
	var cur []rune
	var prev rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// genericRecoveredAfter are the words after which "recovered" says a
// check is over.
var genericRecoveredAfter = wordSet("has", "have", "is", "are", "was", "were", "been", "just", "fully", "now")

// GenericTitleStatus reads the recovery and acknowledgement forms people
// and tools write in a title: a leading marker ("RESOLVED:", "OK:",
// "[RECOVERED]", "Recovery -", "ACK:"), a state after an arrow ("DOWN ->
// UP", "CRITICAL → OK"), "recovered from" and "has recovered" (not a
// detection's "Accessed or Recovered"), "back up",
// "back online", "back to normal", "is up again", "no longer violating" and
// an ending ("Health Rule Violation Ended", "outage ended"). It returns
// StatusResolved, StatusAcknowledged or "" — never firing: a title without
// a form says nothing.
func GenericTitleStatus(title string) string {
	t := strings.TrimSpace(title)
	if t == "" {
		return ""
	}
	words := splitWords(t)
	if len(words) == 0 {
		return ""
	}
	// A leading marker: a state word before ':' or '-', or in brackets.
	lead := strings.TrimLeft(t, "[(* ")
	if i := strings.IndexFunc(lead, func(r rune) bool { return !unicode.IsLetter(r) }); i > 0 {
		w, rest := strings.ToLower(lead[:i]), strings.TrimLeft(lead[i:], " ")
		if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "]") || strings.HasPrefix(rest, ")") || strings.HasPrefix(rest, "- ") || strings.HasPrefix(rest, "*") {
			switch {
			case genericAcknowledged[w]:
				return openrecall.StatusAcknowledged
			case w == "resolved" || w == "recovered" || w == "recovery" || w == "ok" || w == "cleared" || w == "clear" || w == "up" || w == "closed" || w == "fixed":
				return openrecall.StatusResolved
			}
		}
	}
	for _, arrow := range []string{"->", "=>", "→"} {
		if i := strings.LastIndex(t, arrow); i >= 0 {
			after := splitWords(t[i+len(arrow):])
			if len(after) > 0 && genericRecovered[after[0]] {
				return openrecall.StatusResolved
			}
			if len(after) > 0 {
				return ""
			}
		}
	}
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		switch {
		case w == "recovered" && (next == "from" || genericRecoveredAfter[prev]):
			// "web-3 recovered from Devices up/down", "API check has
			// recovered" — not a detection's "Key Accessed or Recovered".
			return openrecall.StatusResolved
		case w == "back" && (next == "up" || next == "online" || next == "normal") && !genericNegations[prev]:
			return openrecall.StatusResolved
		case w == "back" && next == "to" && i+2 < len(words) && words[i+2] == "normal":
			return openrecall.StatusResolved
		case w == "up" && next == "again":
			return openrecall.StatusResolved
		case w == "longer" && prev == "no" && strings.HasPrefix(next, "violat"):
			return openrecall.StatusResolved
		case w == "ended" && containsString([]string{"violation", "outage", "incident", "alert", "problem", "downtime", "event", "episode"}, prev):
			return openrecall.StatusResolved
		}
	}
	return ""
}

// genericSeverity returns the severity value to map and the path it came
// from: the first severity-like key whose value maps to a known severity
// (as sent, else a word inside it, else a documented number), else a
// status-like value that is a severity; else the first severity-like value
// as sent (intake keeps it as the sender_severity label), else "".
func genericSeverity(leaves []genericLeaf, norm func(string) openrecall.Severity) (string, string) {
	var firstRaw, firstPath string
	known := func(l genericLeaf) string {
		raw := l.text
		if norm(raw) != openrecall.SeverityUnknown {
			return raw
		}
		if n, err := strconv.Atoi(raw); err == nil && n >= 0 && n <= 5 {
			switch {
			case l.key == "priority" || l.key == "urgency" || strings.HasSuffix(l.key, "priority"):
				return "P" + strconv.Itoa(n)
			case strings.Contains(l.key, "sev"):
				return "sev" + strconv.Itoa(n)
			}
			return ""
		}
		for _, w := range splitWords(raw) {
			if genericRecovered[w] || genericFiring[w] && norm(w) == openrecall.SeverityUnknown {
				continue
			}
			if norm(w) != openrecall.SeverityUnknown {
				return w
			}
		}
		return ""
	}
	var bestL genericLeaf
	bestRank, found := 0, false
	for _, l := range leaves {
		r := severityRank(l)
		if l.inArray || r < 0 {
			continue
		}
		if firstRaw == "" {
			firstRaw, firstPath = l.text, l.path
		}
		if known(l) == "" {
			continue
		}
		if !found || l.depth < bestL.depth || l.depth == bestL.depth && r < bestRank {
			bestL, bestRank, found = l, r, true
		}
	}
	if found {
		return known(bestL), bestL.path
	}
	if l, ok := best(leaves, func(l genericLeaf) int {
		if !genericStateSeverities[FoldLevel(l.text)] {
			return -1
		}
		return statusRank(l)
	}); ok {
		return l.text, l.path
	}
	return firstRaw, firstPath
}

// genericStateSeverities are the states that are severities too (an
// Icinga or Nagios state CRITICAL, WARNING, OK): a state such as "error"
// or "down" says that something failed, not how badly, so it gives none.
var genericStateSeverities = wordSet("critical", "crit", "warning", "warn", "major", "minor", "ok", "info", "informational",
	"notice", "emergency", "fatal", "disaster", "average", "high", "medium", "low")

// genericProse returns the description that opens the text: the first
// message-like string that is not the title.
func genericProse(leaves []genericLeaf, titlePath string) titleLeaf {
	l, ok := best(leaves, func(l genericLeaf) int {
		if !l.v.IsString() || l.path == titlePath || strings.IndexFunc(l.text, unicode.IsLetter) < 0 {
			return -1
		}
		return index(genericMessageKeys, l.key)
	})
	if !ok {
		return titleLeaf{}
	}
	return titleLeaf{text: l.text, path: l.path}
}

// genericEvidence renders every leaf but the title's and the prose's as
// "path: value" lines in path order, within maxGenericEvidence bytes: when they
// do not fit, the lines a person reads least (ids, times, numbers,
// booleans) are left out first, from the last one back.
func genericEvidence(leaves []genericLeaf, skip map[string]bool) string {
	var lines []string
	var minor []bool
	size := 0
	for _, l := range leaves {
		if skip[l.path] {
			continue
		}
		line := l.path + ": " + l.text
		lines = append(lines, line)
		minor = append(minor, !l.v.IsString() || idOrTimeKey(l.key) || !l.v.Time().IsZero())
		size += len(line) + 1
	}
	for i := len(lines) - 1; i >= 0 && size > maxGenericEvidence; i-- {
		if minor[i] {
			size -= len(lines[i]) + 1
			lines[i] = ""
		}
	}
	var b strings.Builder
	for _, line := range lines {
		if line == "" {
			continue
		}
		if b.Len()+len(line)+1 > maxGenericEvidence {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String()
}

// idOrTimeKey reports whether a folded key names an id or a time.
func idOrTimeKey(k string) bool {
	for _, s := range []string{"id", "uuid", "token", "time", "timestamp", "date", "fingerprint", "hash"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// httpLink reports whether s is an absolute http or https URL: the only
// links the generic reading keeps as links.
func httpLink(s string) bool {
	l := strings.ToLower(s)
	return (strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) && !strings.ContainsAny(s, " \t\n\"<>")
}

// GenericStatus reads the status of an object as Generic does: from its
// status-like keys at any depth, else a recovery form of title, else a
// severity that is a recovery; firing when none says otherwise. from is
// where it came from: a key's path, StatusFromTitle, or "".
func GenericStatus(v Value, title string) (status, from string) {
	return genericStatusFrom(genericLeaves(v), title)
}
