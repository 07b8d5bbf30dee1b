package detectcorpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PantherFile is the file of Panther's detection rules in the corpus
// folder (panther-labs/panther-analysis, Apache-2.0; see its ATTRIBUTION).
// Load does not read it: LoadPanther does.
const PantherFile = "panther_rules.jsonl"

// PantherRepo is the repository the Panther rules come from.
const PantherRepo = "panther-labs/panther-analysis"

// The delivery forms of a detection raised by a SIEM rather than by Falco
// (RenderSIEM). Panther's rules are delivered in all four; Sigma's in the
// last three, since no sender delivers a Sigma rule as such.
const (
	// PantherWebhook is the JSON Panther's Custom Webhook destination
	// posts (docs.panther.com, alerts/destinations/custom_webhook: id,
	// createdAt, severity, type, link, title, name, alertId, alertContext,
	// description, runbook, tags, version). openrecall has no Panther
	// sender: this form reaches its generic reader.
	PantherWebhook Form = "panther-webhook"
	// SIEMJSON is a SIEM's own JSON alert object: a title, a tags array of
	// ATT&CK in Sigma's notation (attack.credential_access, attack.t1110),
	// a rule object with a level, a logsource, source "siem".
	SIEMJSON Form = "siem-json"
	// AlertmanagerATTACK is Alertmanager's webhook for an alert a forwarder
	// posted with ATT&CK in its labels, in one of three ways forwarders
	// write it (mitre_attack_tactic/mitre_technique as comma-joined names
	// and ids; Sentinel's CamelCase tactics and techniques; a tactic id and
	// technique URLs), and source naming the rule set (panther, sigma).
	AlertmanagerATTACK Form = "alertmanager-attack"
	// AlertmanagerProduct is Alertmanager's webhook for an alert whose
	// labels carry no ATT&CK at all: only a source label naming the
	// security product ("Panther"; for a Sigma rule, the SIEM it runs in,
	// by its full name), the rule's name, id and severity.
	AlertmanagerProduct Form = "alertmanager-product"
)

// SIEMForms returns the forms RenderSIEM delivers a rule source's rules in:
// four for Panther, three for Sigma.
func SIEMForms(source string) []Form {
	if source == "panther" {
		return []Form{PantherWebhook, SIEMJSON, AlertmanagerATTACK, AlertmanagerProduct}
	}
	return []Form{SIEMJSON, AlertmanagerATTACK, AlertmanagerProduct}
}

// LoadPanther reads the Panther rules of the corpus folder dir, in file
// order. Keys are unique; every rule has an id, a title and a severity.
func LoadPanther(dir string) ([]Rule, error) {
	path := filepath.Join(dir, PantherFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrAbsent)
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []Rule
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r Rule
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		if r.Source != "panther" || r.ID == "" || r.Title == "" || severityOf(r) == "" {
			return nil, fmt.Errorf("%s line %d: rule without source panther, id, title or a Panther severity (%q)", path, line, r.Severity)
		}
		if seen[r.Key()] {
			return nil, fmt.Errorf("%s line %d: rule %s twice", path, line, r.Key())
		}
		seen[r.Key()] = true
		r.Repo = PantherRepo
		if len(r.LogTypes) > 0 {
			r.LogSource = LogSource{Product: "panther", Service: r.LogTypes[0]}
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Sample returns every k-th rule of rules, the first included (all of them
// when k < 2): a fixed, evenly spaced sample.
func Sample(rules []Rule, k int) []Rule {
	if k < 2 {
		return rules
	}
	out := make([]Rule, 0, (len(rules)+k-1)/k)
	for i := 0; i < len(rules); i += k {
		out = append(out, rules[i])
	}
	return out
}

// patternOrder is DESIGN §4's list of the tactics' attack_pattern values:
// when a rule declares several tactics, the first of this order is the one
// expected. It is written here again, not taken from the product, so that
// the corpus's ground truth does not follow the code it measures.
var patternOrder = [...]string{
	"initial_access", "execution", "persistence", "privilege_escalation", "defense_evasion",
	"credential_access", "discovery", "lateral_movement", "collection", "command_and_control",
	"data_exfiltration", "impact", "reconnaissance", "resource_development",
}

// patternOfTactic is the attack_pattern value DESIGN §4 gives the tactic
// tactics[i]: its shortname with '_', exfiltration as data_exfiltration,
// and ATT&CK v19's stealth and defense-impairment as defense_evasion.
func patternOfTactic(i int) string {
	switch s := tactics[i].short; s {
	case "exfiltration":
		return "data_exfiltration"
	case "stealth", "defense-impairment":
		return "defense_evasion"
	default:
		return strings.ReplaceAll(s, "-", "_")
	}
}

// pantherReport splits one of Panther's "MITRE ATT&CK" reports, written
// "TA0006:T1110" or "TA0006:T1098.001", into the tactic's index in tactics
// (-1 when the tactic is no Enterprise tactic id, as in "TA003:T1556") and
// the technique id ("" when there is none).
func pantherReport(s string) (int, string) {
	tac, tech, _ := strings.Cut(strings.TrimSpace(s), ":")
	i := -1
	if t := strings.TrimSpace(tac); len(t) == 6 {
		i = tagTactic(t)
	}
	return i, tagTechnique(strings.TrimSpace(tech))
}

// declared returns the indices in tactics of the tactics a rule declares
// (Sigma's attack.<tactic> tags, Falco's mitre_<tactic>, Panther's reports),
// each once, in the rule's order, and its technique ids.
func declared(r Rule) (tacs []int, techs []string) {
	add := func(i int, id string) {
		if i >= 0 && !containsInt(tacs, i) {
			tacs = append(tacs, i)
		}
		if id != "" && !containsString(techs, id) {
			techs = append(techs, id)
		}
	}
	if r.Source == "panther" {
		for _, rep := range r.Attack {
			add(pantherReport(rep))
		}
		return tacs, techs
	}
	for _, t := range r.Tags {
		add(tagTactic(t), tagTechnique(t))
	}
	return tacs, techs
}

// DeclaredPattern returns the attack_pattern value of the tactic the rule
// declares — the first in DESIGN §4's order when it declares several — or
// "" when it declares no tactic (a rule may declare only techniques).
func DeclaredPattern(r Rule) string {
	tacs, _ := declared(r)
	best := len(patternOrder)
	for _, i := range tacs {
		p := patternOfTactic(i)
		for k, q := range patternOrder {
			if q == p && k < best {
				best = k
			}
		}
	}
	if best == len(patternOrder) {
		return ""
	}
	return patternOrder[best]
}

// Severity returns the rule's severity in openrecall's words (critical,
// high, medium, low, info): a Panther severity, a Sigma level, a Falco
// priority by the mapping Elastic's prebuilt rules use for it.
func Severity(r Rule) string {
	if s := severityOf(r); s != "" {
		return s
	}
	sev, _ := severity(r)
	return sev
}

// severityOf maps a Panther severity or a Sigma level, or returns "".
func severityOf(r Rule) string {
	v := r.Level
	if r.Source == "panther" {
		v = r.Severity
	}
	switch strings.ToLower(v) {
	case "critical":
		return "critical"
	case "high":
		return "high"
	case "medium":
		return "medium"
	case "low":
		return "low"
	case "info", "informational":
		return "info"
	}
	return ""
}

// severityWord is the rule's severity as its own rule set writes it
// (Panther: Info … Critical; Sigma: informational … critical), lowercased.
func severityWord(r Rule) string {
	if r.Source == "panther" {
		return strings.ToLower(r.Severity)
	}
	if r.Level != "" {
		return r.Level
	}
	return Severity(r)
}

// products are the full names a Sigma rule's firing names its SIEM by in
// the AlertmanagerProduct form, one per rule by its key: SIEMs that run
// Sigma rules, spelled as their vendors spell them, all named in DESIGN §4
// or issue 32.
var products = [...]string{"Splunk Enterprise Security", "Google SecOps", "Chronicle", "Microsoft Sentinel", "IBM QRadar", "Elastic Security"}

// Product returns the product a firing of the rule names in its source
// label in the AlertmanagerProduct form.
func Product(r Rule) string {
	if r.Source == "panther" {
		return "Panther"
	}
	h := fnv.New32a()
	h.Write([]byte(r.Key()))
	return products[h.Sum32()%uint32(len(products))]
}

// LabelStyle returns which of the three ways of writing ATT&CK in labels
// (0: mitre_attack_tactic names, 1: Sentinel's CamelCase, 2: tactic ids
// and technique URLs) the rule's firings use in the AlertmanagerATTACK
// form, fixed by its key.
func LabelStyle(r Rule) int {
	h := fnv.New32a()
	h.Write([]byte("labels/" + r.Key()))
	return int(h.Sum32() % 3)
}

// RenderSIEM returns firings per rule of rules in one of the SIEM forms,
// like Render: DefaultFirings when firings < 1, rules in order and each
// rule's firings in order, a function of its arguments. The firings of one
// rule differ only in host, user, time and the alert's id. It panics on a
// form that is not a SIEM form.
func RenderSIEM(rules []Rule, form Form, firings int, seed int64) []Firing {
	if firings < 1 {
		firings = DefaultFirings
	}
	out := make([]Firing, 0, len(rules)*firings)
	for _, r := range rules {
		for n := range firings {
			e := newEvent(r, n, seed)
			s := siemEvent(r, e, seed)
			var payload []byte
			switch form {
			case PantherWebhook:
				payload = mustJSON(pantherWebhook(r, s))
			case SIEMJSON:
				payload = mustJSON(siemJSON(r, s))
			case AlertmanagerATTACK:
				payload = mustJSON(amWebhook(amLabels(r, s, true), r, s))
			case AlertmanagerProduct:
				payload = mustJSON(amWebhook(amLabels(r, s, false), r, s))
			default:
				panic(fmt.Sprintf("detectcorpus: %q is no SIEM form", form))
			}
			tacs, techs := declared(r)
			out = append(out, Firing{
				Rule: r, Form: form, N: n, Key: r.Key(), ATTACK: len(tacs) > 0 || len(techs) > 0, Payload: payload,
				Host: s.host, User: s.user, Time: s.time,
			})
		}
	}
	return out
}

// siemFiring is what changes between two firings of a rule in the SIEM
// forms: host, user, time and the alert's id.
type siemFiring struct {
	host, user string
	time       time.Time
	alertID    string
}

func siemEvent(r Rule, e *event, seed int64) siemFiring {
	user := e.user
	switch e.plat {
	case aws, gcp, azure, okta, github:
		user = e.email
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", seed, r.Key(), e.n)
	return siemFiring{
		host: e.host, user: user, time: e.time.Truncate(time.Second),
		alertID: fmt.Sprintf("%016x%s", h.Sum64(), strings.ReplaceAll(uuidOf("siem-alert", r.Key(), strconv.Itoa(e.n), strconv.FormatInt(seed, 10)), "-", "")[:16]),
	}
}

// pantherWebhook is the body Panther's Custom Webhook destination posts for
// an alert of the rule: the title is the rule's display name (Panther's
// default when a rule defines no title function), the tags the rule's own
// Tags; Panther's payload carries no ATT&CK report and no source field.
func pantherWebhook(r Rule, s siemFiring) map[string]any {
	tags := append([]string{}, r.Tags...)
	return map[string]any{
		"id":           r.ID,
		"createdAt":    s.time.Format(time.RFC3339),
		"severity":     strings.ToUpper(r.Severity),
		"type":         "RULE",
		"link":         "https://acme.runpanther.net/alerts/" + s.alertID,
		"title":        r.Title,
		"name":         r.Title,
		"alertId":      s.alertID,
		"alertContext": map[string]any{"user": s.user, "host": s.host},
		"description":  r.Description,
		"runbook":      "",
		"tags":         tags,
		"version":      uuidOf("panther-version", r.Key())[:32],
	}
}

// attackTags writes the rule's ATT&CK in Sigma's tag notation: a Sigma
// rule's own tags as they are; for a Panther rule, attack.<tactic> with
// '_' between words and attack.t<id>.
func attackTags(r Rule) []string {
	if r.Source == "sigma" {
		return append([]string{}, r.Tags...)
	}
	tacs, techs := declared(r)
	out := []string{}
	for _, i := range tacs {
		out = append(out, "attack."+strings.ReplaceAll(tactics[i].short, "-", "_"))
	}
	for _, id := range techs {
		out = append(out, "attack."+strings.ToLower(id))
	}
	return out
}

// logsource is the rule's log source as a SIEM's JSON writes it: Sigma's
// own, or for Panther the log type's vendor as product and the log type
// as service.
func logsource(r Rule) map[string]string {
	ls := map[string]string{}
	if r.Source == "panther" {
		if len(r.LogTypes) > 0 {
			vendor, _, _ := strings.Cut(r.LogTypes[0], ".")
			ls["product"] = strings.ToLower(vendor)
			ls["service"] = r.LogTypes[0]
		}
		return ls
	}
	if r.LogSource.Product != "" {
		ls["product"] = r.LogSource.Product
	}
	if r.LogSource.Service != "" {
		ls["service"] = r.LogSource.Service
	}
	if r.LogSource.Category != "" {
		ls["category"] = r.LogSource.Category
	}
	return ls
}

// siemJSON is a SIEM's own JSON alert object for a firing of the rule.
func siemJSON(r Rule, s siemFiring) map[string]any {
	rule := map[string]any{"id": r.ID, "name": r.Title, "level": severityWord(r), "description": r.Description}
	if r.Author != "" {
		rule["author"] = r.Author // the DRL asks that a Sigma rule's author stay with its matches
	}
	return map[string]any{
		"id":        s.alertID,
		"title":     r.Title,
		"timestamp": s.time.Format(time.RFC3339),
		"source":    "siem",
		"tags":      attackTags(r),
		"rule":      rule,
		"logsource": logsource(r),
		"host":      map[string]any{"name": s.host},
		"user":      map[string]any{"name": s.user},
	}
}

// tacticName writes a tactic as ATT&CK names it ("Command and Control");
// camel writes it as Sentinel does ("CommandAndControl").
func tacticName(i int, camel bool) string {
	n := tactics[i].name
	if !camel {
		return n
	}
	var b strings.Builder
	for _, w := range strings.Fields(n) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// techniqueURL is a technique's page on attack.mitre.org.
func techniqueURL(id string) string {
	parent, sub, ok := strings.Cut(id, ".")
	if ok {
		return "https://attack.mitre.org/techniques/" + parent + "/" + sub + "/"
	}
	return "https://attack.mitre.org/techniques/" + parent + "/"
}

// amLabels are the labels a forwarder gives the alert of a firing: the
// rule's name, id and severity, host and user, the source, and with
// withATTACK the rule's ATT&CK in the rule's LabelStyle; without, the
// source names the product (Product).
func amLabels(r Rule, s siemFiring, withATTACK bool) map[string]string {
	labels := map[string]string{
		"alertname": r.Title,
		"rule_id":   r.ID,
		"severity":  severityWord(r),
		"host":      s.host,
		"user":      s.user,
	}
	if r.Author != "" {
		labels["rule_author"] = r.Author
	}
	if !withATTACK {
		labels["source"] = Product(r)
		return labels
	}
	labels["source"] = r.Source
	tacs, techs := declared(r)
	var tn, tt []string
	switch LabelStyle(r) {
	case 0:
		for _, i := range tacs {
			tn = append(tn, tacticName(i, false))
		}
		if len(tn) > 0 {
			labels["mitre_attack_tactic"] = strings.Join(tn, ", ")
		}
		if len(techs) > 0 {
			labels["mitre_technique"] = strings.Join(techs, ", ")
		}
	case 1:
		for _, i := range tacs {
			tn = append(tn, tacticName(i, true))
		}
		if len(tn) > 0 {
			labels["tactics"] = strings.Join(tn, ",")
		}
		if len(techs) > 0 {
			labels["techniques"] = strings.Join(techs, ",")
		}
	default:
		for _, i := range tacs {
			if id := tactics[i].id; id != "" {
				tn = append(tn, id)
			} else {
				tn = append(tn, tactics[i].name) // v19's tactics have no id in v18.1
			}
		}
		for _, id := range techs {
			tt = append(tt, techniqueURL(id))
		}
		if len(tn) > 0 {
			labels["mitre_tactic_id"] = strings.Join(tn, ";")
		}
		if len(tt) > 0 {
			labels["mitre_technique_url"] = strings.Join(tt, " ")
		}
	}
	return labels
}

// amWebhook is Alertmanager's webhook (version 4) carrying one firing
// alert with the labels given, the rule's title as summary and its
// description as description.
func amWebhook(labels map[string]string, r Rule, s siemFiring) map[string]any {
	annotations := map[string]string{"summary": r.Title}
	if r.Description != "" {
		annotations["description"] = r.Description
	}
	alert := map[string]any{
		"status":       "firing",
		"labels":       labels,
		"annotations":  annotations,
		"startsAt":     s.time.Format(time.RFC3339Nano),
		"endsAt":       "0001-01-01T00:00:00Z",
		"generatorURL": "",
		"fingerprint":  amFingerprint(labels),
	}
	return map[string]any{
		"receiver":          "openrecall",
		"status":            "firing",
		"alerts":            []any{alert},
		"groupLabels":       map[string]string{"alertname": r.Title},
		"commonLabels":      labels,
		"commonAnnotations": annotations,
		"externalURL":       "http://alertmanager.example:9093",
		"version":           "4",
		"groupKey":          `{}:{alertname=` + strconv.Quote(r.Title) + `}`,
		"truncatedAlerts":   0,
	}
}
