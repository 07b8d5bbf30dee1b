package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint/attack"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/detectcorpus"
)

// BenignMemory is what memory holds for an alert in the security
// properties: N (5 + Extra, up to 12) unanimous memories of the alert's own
// identity and fingerprint with one benign decision, at critical severity,
// so that memory vouches as strongly as it can.
type BenignMemory struct {
	Extra, Decision int
}

// N is the number of memories.
func (m BenignMemory) N() int { return 5 + m.Extra }

// BenignDecision is the memories' decision.
func (m BenignMemory) BenignDecision() openrecall.Decision {
	return benignDecisions[m.Decision%len(benignDecisions)]
}

var benignDecisions = []openrecall.Decision{openrecall.DecisionKnownBenign, openrecall.DecisionFalsePositive, openrecall.DecisionDuplicate}

// Incidents returns the memories for the alert of identity id and
// fingerprint fp; tag keeps two alerts' memories apart in one store.
func (m BenignMemory) Incidents(tag string, id openrecall.Identity, fp openrecall.Fingerprint) []openrecall.Incident {
	var out []openrecall.Incident
	for i := 0; i < m.N(); i++ {
		out = append(out, openrecall.Incident{
			Fingerprint: fp, Identity: id, Severity: openrecall.SeverityCritical, Decision: m.BenignDecision(),
			Note: "reviewed: expected activity", SourceAlertID: fmt.Sprintf("%s-%d", tag, i), Analyst: "pbt", CreatedAt: Times()[i%len(Times())],
		})
	}
	return out
}

func benignMemoryGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(BenignMemory{}), map[string]gopter.Gen{
		"Extra": IntUpTo(7), "Decision": Index(len(benignDecisions), 0),
	})
}

// ---------------------------------------------------------------- ATT&CK

// AttackItem is one ATT&CK technique (sub-techniques included) or tactic
// of the embedded table.
type AttackItem struct {
	ID string // "T1059.001" or "TA0002"
	// Shortname and Name are a tactic's; empty for a technique.
	Shortname, Name string
	// Patterns are the attack_pattern values the item maps to.
	Patterns []string
}

// AttackItems returns every tactic of the embedded table, then every
// technique, in table order: the pool P52 draws references from, so a new
// table widens the test space by itself.
func AttackItems() []AttackItem { return attackItems() }

var attackItems = sync.OnceValue(func() []AttackItem {
	t := attack.Enterprise()
	var out []AttackItem
	for _, tc := range t.Tactics() {
		out = append(out, AttackItem{ID: tc.ID, Shortname: tc.Shortname, Name: tc.Name, Patterns: []string{tc.Pattern}})
	}
	for _, tq := range t.Techniques() {
		var ps []string
		for _, s := range tq.Tactics {
			ps = append(ps, attack.PatternOf(s))
		}
		out = append(out, AttackItem{ID: tq.ID, Patterns: ps})
	}
	return out
})

// Tactic says whether the item is a tactic.
func (it AttackItem) Tactic() bool { return it.Shortname != "" }

// AttackRefForms names the ways an alert writes a reference, by index:
// a technique takes the first four, a tactic all but the first.
func AttackRefForms() []string {
	return []string{"technique id", "sigma tag", "tactic id", "sigma tactic tag", "sigma tactic tag with hyphens", "falco tag", "tactic name field", "technique id with its name"}
}

// AttackFields names the field kinds a reference is placed in.
func AttackFields() []string {
	return []string{"title", "text", "label value", "annotation value", "tags label", "rule"}
}

// AttackRef is one reference: an item of AttackItems written in a form of
// AttackRefForms, placed in a field of AttackFields, inside a context.
type AttackRef struct {
	Item, Form, Field, Context int
}

// refFormDraws is the range of AttackRef.Form: a multiple of the three
// technique forms and the five tactic forms, so that each is as likely.
const refFormDraws = 15

// refContexts are the texts around a reference (%s is the reference).
var refContexts = []string{"%s", "detected %s.", "(%s)", "[%s]", "mitre=%s", "\"%s\"", "rule tags: %s, shell", "%s\tcontainer"}

// Written returns the reference as written and its form's name.
func (r AttackRef) Written() (string, string) {
	it := AttackItems()[r.Item%len(AttackItems())]
	forms := AttackRefForms()
	var form string
	if it.Tactic() {
		form = forms[2+r.Form%(len(forms)-3)]
	} else {
		form = []string{forms[0], forms[1], forms[7]}[r.Form%3]
	}
	switch form {
	case "technique id":
		return it.ID, form
	case "technique id with its name":
		return it.ID + "-impair-defenses", form
	case "sigma tag":
		return "attack." + strings.ToLower(it.ID), form
	case "tactic id":
		return it.ID, form
	case "sigma tactic tag":
		return "attack." + strings.ReplaceAll(it.Shortname, "-", "_"), form
	case "sigma tactic tag with hyphens":
		return "attack." + it.Shortname, form
	case "falco tag":
		return "mitre_" + strings.ReplaceAll(it.Shortname, "-", "_"), form
	}
	return it.Name, form // the tactic name field
}

// FieldName returns the field kind the reference is placed in: a tactic name
// always goes to a field that names tactics.
func (r AttackRef) FieldName() string {
	if _, form := r.Written(); form == "tactic name field" {
		return "tactic label"
	}
	return AttackFields()[r.Field%len(AttackFields())]
}

// AttackAlert is a neutral alert (no attack word, no security sender) that
// carries one to three ATT&CK references, and the memory that vouches for it.
type AttackAlert struct {
	Refs     []AttackRef
	Title    int
	Severity int
	Memory   BenignMemory
}

// neutralTitles are titles without attack words or ATT&CK references.
var neutralTitles = []string{"Unexpected process activity", "Sensitive file opened for reading", "Outbound connection to a rare destination", "Container drift detected"}

// Alert returns the alert, built as a sender would deliver it.
func (a AttackAlert) Alert() openrecall.Alert {
	al := openrecall.Alert{
		ID: "att-1", Format: "jsonl", Status: openrecall.StatusFiring,
		Title:    neutralTitles[a.Title%len(neutralTitles)],
		Severity: []openrecall.Severity{openrecall.SeverityHigh, openrecall.SeverityMedium, openrecall.SeverityCritical, openrecall.SeverityLow}[a.Severity%4],
		Labels:   map[string]string{"alertname": "RuntimeDetection", "service": "checkout-api"}, Annotations: map[string]string{},
		Service: "checkout-api",
	}
	add := func(s *string, v string) {
		if *s == "" {
			*s = v
		} else {
			*s += " " + v
		}
	}
	for _, r := range a.Refs {
		w, _ := r.Written()
		in := fmt.Sprintf(refContexts[r.Context%len(refContexts)], w)
		switch r.FieldName() {
		case "title":
			add(&al.Title, in)
		case "text":
			add(&al.Text, in)
		case "label value":
			v := al.Labels["mitre"]
			add(&v, in)
			al.Labels["mitre"] = v
		case "annotation value":
			v := al.Annotations["threat"]
			add(&v, in)
			al.Annotations["threat"] = v
		case "tags label":
			v := al.Labels["tags"]
			if v == "" {
				v = "container,shell"
			}
			al.Labels["tags"] = v + "," + w + ",maturity_stable"
		case "rule":
			add(&al.Rule, "Runtime "+in)
		case "tactic label":
			key := []string{"tactic", "mitre_tactic", "threat.tactic.name"}[r.Context%3]
			if _, taken := al.Labels[key]; taken {
				key += "_" + strconv.Itoa(len(al.Labels))
			}
			al.Labels[key] = w
		}
	}
	return al
}

// Declared says whether the reference declares its tactic (DESIGN §4): a
// Sigma or Falco tag or a tactic name, or any form in a label, annotation
// or tags field whose key says it holds ATT&CK (mitre, threat, tags,
// tactic); a bare id in the title, text or rule is only found.
func (r AttackRef) Declared() bool {
	switch _, form := r.Written(); form {
	case "technique id", "tactic id", "technique id with its name":
		f := r.FieldName()
		return f != "title" && f != "text" && f != "rule"
	}
	return true
}

// WantPattern is the attack_pattern DESIGN §4 gives the alert: the first
// tactic, in its order, among those the references declare, else among
// those they name.
func (a AttackAlert) WantPattern() string {
	best := -1
	order := attack.Patterns()
	declared := slices.ContainsFunc(a.Refs, AttackRef.Declared)
	for _, r := range a.Refs {
		if declared && !r.Declared() {
			continue
		}
		for _, p := range AttackItems()[r.Item%len(AttackItems())].Patterns {
			if i := slices.Index(order, p); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
	}
	if best < 0 {
		return ""
	}
	return order[best]
}

// AttackAlertGen generates neutral alerts carrying one to three ATT&CK
// references drawn from the whole embedded table (a tactic half of the
// time), in every form and field kind, with 5 to 12 unanimous benign
// memories. It shrinks toward one reference to the first tactic, in the
// title, written as its id.
func AttackAlertGen() gopter.Gen {
	nTactics := len(attack.Enterprise().Tactics())
	item := gopter.DeriveGen(
		func(tactic bool, t, q int) int {
			if tactic {
				return t
			}
			return nTactics + q
		},
		func(i int) (bool, int, int) {
			if i < nTactics {
				return true, i, 0
			}
			return false, 0, i - nTactics
		},
		gg.Bool(), Index(nTactics, 0), Index(len(AttackItems())-nTactics, 0),
	)
	ref := gg.Struct(reflect.TypeOf(AttackRef{}), map[string]gopter.Gen{
		"Item": item, "Form": Index(refFormDraws, 0), "Field": Index(len(AttackFields()), 0), "Context": Index(len(refContexts), 0.3),
	})
	return gg.Struct(reflect.TypeOf(AttackAlert{}), map[string]gopter.Gen{
		"Refs":     nonEmptyUpTo[AttackRef](3, ref),
		"Title":    Index(len(neutralTitles), 0),
		"Severity": Index(4, 0),
		"Memory":   benignMemoryGen(),
	})
}

// ValidAttackAlert reports an alert without a reference or with indexes
// out of range.
func ValidAttackAlert(a AttackAlert) error {
	if len(a.Refs) == 0 {
		return fmt.Errorf("no reference")
	}
	for _, r := range a.Refs {
		if err := indexesIn([]int{r.Item}, len(AttackItems()), "item"); err != nil {
			return err
		}
		if err := indexesIn([]int{r.Form}, refFormDraws, "form"); err != nil {
			return err
		}
		if err := indexesIn([]int{r.Field}, len(AttackFields()), "field"); err != nil {
			return err
		}
	}
	if a.WantPattern() == "" {
		return fmt.Errorf("references name no tactic")
	}
	return validMemory(a.Memory)
}

func validMemory(m BenignMemory) error {
	if m.Extra < 0 || m.Extra > 7 || m.Decision < 0 || m.Decision >= len(benignDecisions) {
		return fmt.Errorf("memory %+v", m)
	}
	return nil
}

// nonEmptyUpTo returns slices of one to max elements (the rest bounded by
// the size parameter); it shrinks the first element and the rest, never to
// an empty slice.
func nonEmptyUpTo[T any](max int, elem gopter.Gen) gopter.Gen {
	return gopter.DeriveGen(
		func(first T, rest []T) []T { return append([]T{first}, rest...) },
		func(s []T) (T, []T) {
			var zero T
			if len(s) == 0 {
				return zero, nil
			}
			return s[0], s[1:]
		},
		elem, SliceUpTo(max-1, elem, reflect.TypeOf([]T(nil)).Elem()),
	)
}

// ------------------------------------------------------- security senders

// SecurityTools are spellings of security tools that intake reads from a
// source, sender, tool, product, detector, generator or origin label.
func SecurityTools() []string {
	return []string{"falco", "Falco", " wazuh ", "SURICATA", "guardduty", "aws.guardduty", "elastic-security", "Splunk ES", "sigma", "crowdstrike", "tetragon", "osquery", "auditd", "ossec", "zeek"}
}

// SecurityToolLabels are the labels that name the tool that sent an alert.
func SecurityToolLabels() []string {
	return []string{"source", "sender", "tool", "product", "detector", "generator", "origin"}
}

// SecuritySenders are the sender adapters that deliver security detections.
func SecuritySenders() []string {
	return []string{"falcosidekick", "wazuh", "elastic-security", "splunk-es", "suricata", "guardduty"}
}

// SecurityFixture is one payload of a security sender's fixtures.
type SecurityFixture struct {
	Sender, Name string
	Payload      []byte
}

// SecurityFixtures returns the payloads of every security sender's
// fixtures (intake/testdata/senders/<sender>/*.json, but the goldens), in
// sender then file order.
func SecurityFixtures() []SecurityFixture { return securityFixtures() }

var securityFixtures = sync.OnceValue(func() []SecurityFixture {
	root, err := findUp(filepath.Join("intake", "testdata", "senders"))
	if err != nil {
		panic(err)
	}
	var out []SecurityFixture
	for _, s := range SecuritySenders() {
		files, _ := filepath.Glob(filepath.Join(root, s, "*.json"))
		sort.Strings(files)
		for _, f := range files {
			base := filepath.Base(f)
			if base == "golden.json" || base == "identity.json" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				panic(err)
			}
			out = append(out, SecurityFixture{Sender: s, Name: base, Payload: b})
		}
	}
	if len(out) == 0 {
		panic("gen: no security sender fixtures under " + root)
	}
	return out
})

// findUp finds rel in the working directory or one above it.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("gen: %s not found above the working directory", rel)
		}
		dir = filepath.Dir(dir)
	}
}

// SecurityAlert is an alert of a security sender: a generated alert whose
// label names a security tool (Origin < len(SecurityTools())), or a
// security sender's fixture (Origin - len(SecurityTools()) indexes
// SecurityFixtures()); with the memory that vouches for it.
type SecurityAlert struct {
	Origin, Label, Title, Service, Severity int
	Memory                                  BenignMemory
}

// securityTitles are titles of detections without attack words or ATT&CK
// references, with the alertname each fires as.
var securityTitles = [][2]string{
	{"Unexpected outbound connection from container", "OutboundConnection"},
	{"Sensitive file opened for reading by non-trusted program", "SensitiveFileRead"},
	{"Shell spawned in a container with an attached terminal", "TerminalShell"},
	{"File below a monitored directory opened for writing", "WriteBelowEtc"},
}

var securityServices = []string{"checkout-api", "orders-db-primary", "redis-cache", "etl-worker"}

// Fixture says whether the alert is a sender's fixture, and which.
func (s SecurityAlert) Fixture() (SecurityFixture, bool) {
	n := len(SecurityTools())
	if s.Origin < n {
		return SecurityFixture{}, false
	}
	fx := SecurityFixtures()
	return fx[(s.Origin-n)%len(fx)], true
}

// Record returns the generated alert as a JSON Lines record: its tool label
// names tool (a security tool, or "prometheus" for the plain twin).
func (s SecurityAlert) Record(tool string) []byte {
	t := securityTitles[s.Title%len(securityTitles)]
	a := openrecall.Alert{
		Title: t[0], Text: "rule fired on the node",
		Severity: []openrecall.Severity{openrecall.SeverityHigh, openrecall.SeverityMedium, openrecall.SeverityCritical, openrecall.SeverityLow}[s.Severity%4],
		Labels: map[string]string{
			"alertname": t[1], "service": securityServices[s.Service%len(securityServices)],
			SecurityToolLabels()[s.Label%len(SecurityToolLabels())]: tool,
		},
	}
	return []byte(JSONLine(a, "") + "\n")
}

// Tool returns the generated alert's tool spelling.
func (s SecurityAlert) Tool() string { return SecurityTools()[s.Origin%len(SecurityTools())] }

// SecurityAlertGen generates alerts of security senders: half generated
// with a tool label, half the senders' fixtures; with 5 to 12 unanimous
// benign memories. It shrinks toward a source=falco alert.
func SecurityAlertGen() gopter.Gen {
	n := len(SecurityTools())
	origin := gopter.DeriveGen(
		func(fixture bool, t, f int) int {
			if fixture {
				return n + f
			}
			return t
		},
		func(o int) (bool, int, int) {
			if o < n {
				return false, o, 0
			}
			return true, 0, o - n
		},
		gg.Bool(), Index(n, 0), Index(len(SecurityFixtures()), 0),
	)
	return gg.Struct(reflect.TypeOf(SecurityAlert{}), map[string]gopter.Gen{
		"Origin": origin, "Label": Index(len(SecurityToolLabels()), 0.3), "Title": Index(len(securityTitles), 0),
		"Service": Index(len(securityServices), 0), "Severity": Index(4, 0), "Memory": benignMemoryGen(),
	})
}

// ValidSecurityAlert reports indexes out of range.
func ValidSecurityAlert(s SecurityAlert) error {
	if err := indexesIn([]int{s.Origin}, len(SecurityTools())+len(SecurityFixtures()), "origin"); err != nil {
		return err
	}
	if err := indexesIn([]int{s.Label}, len(SecurityToolLabels()), "label"); err != nil {
		return err
	}
	return validMemory(s.Memory)
}

// ------------------------------------------------------ detection changes

// DetectionHosts are the hosts a detection changes to. Like the other
// Detection pools (users, pids, addresses, ports, time shifts), index 0
// means "unchanged". Hosts name environments and roles inside their names, users
// name services (a process user postgres is evidence, not a database).
func DetectionHosts() []string {
	return []string{"", "gke-prod-pool-1-4f9a2c1e-x7kq", "worker-3.prod.k8s.local", "dev-box.staging.internal", "db-primary-01", "redis-cache-2",
		"WIN-7QK2M3D", "CORP-DC01.corp.example", "ip-10-9-8-7.eu-west-1.compute.internal", "smtp-relay-1", "stage_runner", "vault-0"}
}

// DetectionUsers are the users a detection changes to.
func DetectionUsers() []string {
	return []string{"", "alice", "postgres", "www-data", "Administrator", "system:serviceaccount:payments:default", "redis", "svc_deploy", "nobody", "ec2-user"}
}

// DetectionPIDs are the pids a detection changes to.
func DetectionPIDs() []int { return []int{0, 1, 4242, 31337, 65535, 999999} }

// DetectionAddrs are the addresses a detection changes to (IPv4 and IPv6).
// The cloud metadata address is not among them: the normalizer names it
// (<metadata_ip>), and a connection to it is SSRF evidence, not noise.
func DetectionAddrs() []string {
	return []string{"", "10.200.3.4", "192.0.2.77", "172.31.255.254", "2001:db8::7", "fe80::1ff:fe23:4567:890a", "100.64.0.9", "::1"}
}

// DetectionPorts are the ports a detection changes to.
func DetectionPorts() []int { return []int{0, 22, 443, 4444, 50123, 65535, 8080} }

// DetectionShifts are the time shifts a detection's timestamps take.
func DetectionShifts() []time.Duration {
	return []time.Duration{0, time.Second, 59 * time.Second, time.Hour, 26 * time.Hour, -3 * time.Hour, 37 * 24 * time.Hour, 400 * 24 * time.Hour}
}

// DetectionBase is a detection payload: a security sender's fixture, or a
// firing of the detection corpus (testdata/security) rendered in one form.
type DetectionBase struct {
	Name    string
	Payload []byte
	// Known are values the payload holds that its keys may not name (the
	// corpus firing's own host, user, pid and addresses).
	Known map[string][]string
}

// DetectionBases returns the fixtures, then the corpus rules in every
// delivery form when the corpus is present.
func DetectionBases() []func() DetectionBase { return detectionBases() }

var detectionBases = sync.OnceValue(func() []func() DetectionBase {
	var out []func() DetectionBase
	for _, f := range SecurityFixtures() {
		out = append(out, func() DetectionBase { return DetectionBase{Name: f.Sender + "/" + f.Name, Payload: f.Payload} })
	}
	dir, err := detectcorpus.Find(".")
	if err != nil {
		return out
	}
	rules, err := detectcorpus.Load(dir)
	if err != nil {
		panic(err)
	}
	for _, r := range rules {
		for _, form := range detectcorpus.Forms() {
			out = append(out, func() DetectionBase {
				f := detectcorpus.Render([]detectcorpus.Rule{r}, form, 1, 20260101)[0]
				return DetectionBase{Name: string(form) + " " + r.Key(), Payload: f.Payload, Known: map[string][]string{
					"host": {f.Host}, "user": {f.User}, "pid": {strconv.Itoa(f.PID)}, "addr": {f.SourceIP, f.DestIP},
				}}
			})
		}
	}
	return out
})

// DetectionChange is a detection and a change of only its host, user, pid,
// addresses, ports and timestamps (each an index of its pool; 0 keeps it).
type DetectionChange struct {
	Base                               int
	Host, User, PID, Addr, Port, Shift int
}

// Changes says whether the change touches anything.
func (c DetectionChange) Changes() bool {
	return c.Host+c.User+c.PID+c.Addr+c.Port+c.Shift > 0
}

// Detection returns the base detection.
func (c DetectionChange) Detection() DetectionBase {
	bs := DetectionBases()
	return bs[c.Base%len(bs)]()
}

// Changed returns the base payload with the change applied: every value the
// payload's host, user, pid, address and port keys hold (and the corpus
// firing's own) replaced wherever it stands as a whole token, and every
// timestamp (RFC 3339, syslog, clock, epoch seconds, milliseconds or
// nanoseconds under a time key) shifted.
func (c DetectionChange) Changed() []byte {
	d := c.Detection()
	found := map[string][]string{}
	var epochs []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(mapKeys(x)) {
				walk(strings.ToLower(strings.TrimPrefix(path+"."+k, ".")), x[k])
			}
		case []any:
			for _, e := range x {
				walk(path, e)
			}
		case string:
			if strings.HasPrefix(strings.TrimSpace(x), "{") {
				var inner any
				if json.Unmarshal([]byte(x), &inner) == nil {
					walk(path, inner)
					return
				}
			}
			if kind := keyKind(path, x); kind != "" {
				found[kind] = append(found[kind], x)
			}
		case json.Number:
			if kind := keyKind(path, x.String()); kind == "pid" || kind == "port" {
				found[kind] = append(found[kind], x.String())
			} else if kind == "epoch" {
				epochs = append(epochs, x.String())
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(d.Payload))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return d.Payload
	}
	walk("", tree)
	for k, vs := range d.Known {
		found[k] = append(found[k], vs...)
	}
	text := string(d.Payload)
	subst := map[string]string{}
	plan := func(kind string, pick func(i int) string) {
		vs := found[kind]
		sort.Strings(vs)
		vs = slices.Compact(vs)
		for i, v := range vs {
			if len(v) >= 2 && v != "" {
				if _, done := subst[v]; !done {
					subst[v] = pick(i)
				}
			}
		}
	}
	if c.Host > 0 {
		hs := DetectionHosts()
		plan("host", func(i int) string { return hs[1+(c.Host-1+i)%(len(hs)-1)] })
	}
	if c.User > 0 {
		us := DetectionUsers()
		plan("user", func(i int) string { return us[1+(c.User-1+i)%(len(us)-1)] })
	}
	if c.PID > 0 {
		ps := DetectionPIDs()
		plan("pid", func(i int) string { return strconv.Itoa(ps[1+(c.PID-1+i)%(len(ps)-1)]) })
	}
	if c.Addr > 0 {
		as := DetectionAddrs()
		plan("addr", func(i int) string { return as[1+(c.Addr-1+i)%(len(as)-1)] })
	}
	if c.Port > 0 {
		ps := DetectionPorts()
		plan("port", func(i int) string { return strconv.Itoa(ps[1+(c.Port-1+i)%(len(ps)-1)]) })
	}
	text = replaceTokens(text, subst)
	if shift := DetectionShifts()[c.Shift%len(DetectionShifts())]; shift != 0 {
		text = shiftTimes(text, epochs, shift)
	}
	return []byte(text)
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var (
	hostKeys = []string{"hostname", "host", "host.name", "host.hostname", "agent.name", "computer", "computer_name", "computername", "orig_host", "dest_host", "src_host", "dvc", "privatednsname", "publicdnsname"}
	userKeys = []string{"user", "user.name", "username", "user_name", "dstuser", "srcuser", "src_user", "dest_user", "target_user", "ka.user.name", "newtargetusername", "oldtargetusername", "targetusername", "subjectusername"}
	pidKeys  = []string{"pid", "ppid", "proc.pid", "proc.ppid", "process.pid", "process.parent.pid", "processid"}
	timeKeys = []string{"time", "evt.time", "timestamp", "timestampms", "eventtime", "_time"}
)

// keyKind classifies a JSON leaf by its key path and value: "host", "user",
// "pid", "port", "addr" (any value that is an IP address), "epoch" or "".
func keyKind(path, v string) string {
	if _, err := netip.ParseAddr(v); err == nil {
		return "addr"
	}
	if ap, err := netip.ParseAddrPort(v); err == nil && ap.IsValid() {
		return ""
	}
	last := path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		last = path[i+1:]
	}
	two := path
	if parts := strings.Split(path, "."); len(parts) >= 2 {
		two = strings.Join(parts[len(parts)-2:], ".")
	}
	in := func(keys []string) bool { return slices.Contains(keys, last) || slices.Contains(keys, two) }
	numeric := func() bool { _, err := strconv.ParseInt(v, 10, 64); return err == nil }
	switch {
	case strings.Contains(path, "http.") || strings.Contains(path, "url"):
		return ""
	case in(hostKeys) && !numeric():
		return "host"
	case in(userKeys) && !numeric():
		return "user"
	case in(pidKeys) && numeric():
		return "pid"
	case strings.Contains(last, "port") && !strings.Contains(last, "portname") && numeric():
		return "port"
	case in(timeKeys) && numeric():
		if n, _ := strconv.ParseInt(v, 10, 64); n > 1e9 {
			return "epoch"
		}
	}
	return ""
}

// replaceTokens replaces each key of subst where it stands as a whole
// token: not inside a longer word, number, address or path segment.
func replaceTokens(s string, subst map[string]string) string {
	if len(subst) == 0 {
		return s
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range subst {
			if !yield(k) {
				return
			}
		}
	})
	// Longest first, so that a host is replaced before its prefix.
	sort.SliceStable(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	var b strings.Builder
	for i := 0; i < len(s); {
		hit := false
		for _, k := range keys {
			if strings.HasPrefix(s[i:], k) && tokenStart(s, i) && tokenEnd(s, i+len(k)) {
				b.WriteString(subst[k])
				i += len(k)
				hit = true
				break
			}
		}
		if !hit {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

func wordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c >= 0x80
}

func tokenStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	return !wordByte(c) && c != '.' && c != '/' && c != '\\' && c != ':' && c != '@'
}

func tokenEnd(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	c := s[j]
	if wordByte(c) || c == '/' || c == '\\' || c == '@' {
		return false
	}
	if (c == '.' || c == ':') && j+1 < len(s) && wordByte(s[j+1]) {
		return false
	}
	return true
}

var stampRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}|\b\d{2}:\d{2}:\d{2}(\.\d+)?`)

// shiftTimes shifts every timestamp of s, and the epoch numbers given, by d.
func shiftTimes(s string, epochs []string, d time.Duration) string {
	s = stampRE.ReplaceAllStringFunc(s, func(m string) string {
		frac := ""
		if i := strings.IndexByte(m, '.'); i >= 0 {
			frac = m[i:]
			m = m[:i]
		}
		for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "Jan _2 15:04:05", "15:04:05"} {
			t, err := time.Parse(layout, m)
			if err != nil {
				continue
			}
			return t.Add(d).Format(layout) + frac
		}
		return m + frac
	})
	subst := map[string]string{}
	for _, e := range epochs {
		n, _ := strconv.ParseInt(e, 10, 64)
		switch {
		case n > 1e17:
			subst[e] = strconv.FormatInt(n+d.Nanoseconds(), 10)
		case n > 1e11:
			subst[e] = strconv.FormatInt(n+d.Milliseconds(), 10)
		default:
			subst[e] = strconv.FormatInt(n+int64(d/time.Second), 10)
		}
	}
	return replaceTokens(s, subst)
}

// DetectionChangeGen generates detections (half the security senders'
// fixtures, half corpus firings) and changes of their host, user, pid,
// addresses, ports and time; it shrinks toward the first fixture and no
// change.
func DetectionChangeGen() gopter.Gen {
	nf := len(SecurityFixtures())
	base := gopter.DeriveGen(
		func(corpus bool, f, r int) int {
			if corpus && len(DetectionBases()) > nf {
				return nf + r
			}
			return f
		},
		func(b int) (bool, int, int) {
			if b < nf {
				return false, b, 0
			}
			return true, 0, b - nf
		},
		gg.Bool(), Index(nf, 0), Index(max(1, len(DetectionBases())-nf), 0),
	)
	return gg.Struct(reflect.TypeOf(DetectionChange{}), map[string]gopter.Gen{
		"Base": base,
		"Host": Index(len(DetectionHosts()), 0.3), "User": Index(len(DetectionUsers()), 0.3), "PID": Index(len(DetectionPIDs()), 0.3),
		"Addr": Index(len(DetectionAddrs()), 0.3), "Port": Index(len(DetectionPorts()), 0.3), "Shift": Index(len(DetectionShifts()), 0.3),
	})
}

// ValidDetectionChange reports indexes out of range and a base intake
// cannot read.
func ValidDetectionChange(c DetectionChange) error {
	if err := indexesIn([]int{c.Base}, len(DetectionBases()), "base"); err != nil {
		return err
	}
	for _, x := range [][2]int{{c.Host, len(DetectionHosts())}, {c.User, len(DetectionUsers())}, {c.PID, len(DetectionPIDs())},
		{c.Addr, len(DetectionAddrs())}, {c.Port, len(DetectionPorts())}, {c.Shift, len(DetectionShifts())}} {
		if err := indexesIn(x[:1], x[1], "change"); err != nil {
			return err
		}
	}
	if _, err := intake.ParseBytes(c.Detection().Payload, intake.Options{}); err != nil {
		return err
	}
	return nil
}

// ---------------------------------------------------------- environment

// EnvLookalikes are paths and host names that hold dev, prod or staging
// without naming an environment.
func EnvLookalikes() []string {
	return []string{"/dev/tcp/1.2.3.4/80", "/dev/shm/x", "gke-prod-pool-1", "worker-3.prod.k8s.local", "dev-box.staging.internal", "stage_runner",
		"/dev/null", "dev/scripts/run.sh", "prod/config.yaml", "./staging/deploy.sh", `C:\dev\build\out.exe`, "https://staging.example.com/login",
		"s3://prod-backups/2026/", "api.dev.example.com:8443", "prod-db-01", "db.prod", "preprod-runner-7", "uat-gw-2", "sandbox-vm",
		"prod_api", "devbox", "production-eu-1", "staging-k8s-node-12", "dev@example.com", "/opt/production/bin/run", "~/dev/project",
		"prod.internal", "ip-10-0-0-1.staging.internal:22"}
}

// EnvWrappers are the texts a lookalike is written inside (%s is it).
func EnvWrappers() []string {
	return []string{"%s", "(%s)", "\"%s\"", "host=%s", "on %s now", "[%s]", "%s,", "from '%s'"}
}

// EnvPhrases are whole-word environment phrases with the environment they
// name: what free text may set the environment with.
func EnvPhrases() [][2]string {
	return [][2]string{{"deploy failed in prod", "prod"}, {"seen in production", "prod"}, {"checkout (staging)", "staging"},
		{"only on staging.", "staging"}, {"dev: build broken", "dev"}, {"[prod] latency", "prod"}, {"Production outage", "prod"}, {"running in dev", "dev"}}
}

// EnvInsert is a lookalike, written inside a wrapper, placed in a field.
type EnvInsert struct {
	Piece, Wrapper, Where int
}

// EnvFields are where a lookalike goes; none of them names an environment.
func EnvFields() []string {
	return []string{"title", "text", "label host", "label node", "label instance", "label path", "label image", "annotation summary", "annotation description"}
}

// EnvCase is a neutral alert, its environment source (none, an env label, a
// cluster label, a word in its text), lookalikes inserted, and the phrase of
// its liveness twin.
type EnvCase struct {
	Title, Source int
	Inserts       []EnvInsert
	Phrase        int
}

var envSources = []string{"none", "label env=production", "label cluster=gke-staging-eu", "text word", "label environment=dev"}

// EnvSource names the case's environment source.
func (c EnvCase) EnvSource() string { return envSources[c.Source%len(envSources)] }

// Alert returns the alert with the lookalikes (with=true) or without them,
// and with the liveness phrase appended to its text when phrase is set.
func (c EnvCase) Alert(with, phrase bool) openrecall.Alert {
	a := openrecall.Alert{Title: neutralTitles[c.Title%len(neutralTitles)], Text: "checks failing",
		Labels: map[string]string{"alertname": "EnvProbe"}, Annotations: map[string]string{}, Severity: openrecall.SeverityHigh}
	switch c.EnvSource() {
	case "label env=production":
		a.Labels["env"] = "production"
	case "label cluster=gke-staging-eu":
		a.Labels["cluster"] = "gke-staging-eu"
	case "label environment=dev":
		a.Labels["environment"] = "dev"
	case "text word":
		a.Text += " in prod"
	}
	if with {
		for _, in := range c.Inserts {
			piece := fmt.Sprintf(EnvWrappers()[in.Wrapper%len(EnvWrappers())], EnvLookalikes()[in.Piece%len(EnvLookalikes())])
			add := func(s string) string {
				if s == "" {
					return piece
				}
				return s + " " + piece
			}
			switch f := EnvFields()[in.Where%len(EnvFields())]; {
			case f == "title":
				a.Title = add(a.Title)
			case f == "text":
				a.Text = add(a.Text)
			case strings.HasPrefix(f, "label "):
				k := strings.TrimPrefix(f, "label ")
				a.Labels[k] = add(a.Labels[k])
			default:
				k := strings.TrimPrefix(f, "annotation ")
				a.Annotations[k] = add(a.Annotations[k])
			}
		}
	}
	if phrase {
		a.Text += " " + EnvPhrases()[c.Phrase%len(EnvPhrases())][0]
	}
	return a
}

// EnvCaseGen generates neutral alerts with one to six lookalikes, an
// environment source most often none, and a liveness phrase; it shrinks
// toward one /dev/tcp path in the title.
func EnvCaseGen() gopter.Gen {
	ins := gg.Struct(reflect.TypeOf(EnvInsert{}), map[string]gopter.Gen{
		"Piece": Index(len(EnvLookalikes()), 0), "Wrapper": Index(len(EnvWrappers()), 0.3), "Where": Index(len(EnvFields()), 0),
	})
	return gg.Struct(reflect.TypeOf(EnvCase{}), map[string]gopter.Gen{
		"Title": Index(len(neutralTitles), 0), "Source": Index(len(envSources), 0.6),
		"Inserts": nonEmptyUpTo[EnvInsert](6, ins), "Phrase": Index(len(EnvPhrases()), 0),
	})
}

// ValidEnvCase reports a case without a lookalike or indexes out of range.
func ValidEnvCase(c EnvCase) error {
	if len(c.Inserts) == 0 {
		return fmt.Errorf("no lookalike")
	}
	for _, in := range c.Inserts {
		if err := indexesIn([]int{in.Piece}, len(EnvLookalikes()), "piece"); err != nil {
			return err
		}
		if err := indexesIn([]int{in.Wrapper}, len(EnvWrappers()), "wrapper"); err != nil {
			return err
		}
		if err := indexesIn([]int{in.Where}, len(EnvFields()), "field"); err != nil {
			return err
		}
	}
	if err := indexesIn([]int{c.Source}, len(envSources), "source"); err != nil {
		return err
	}
	return indexesIn([]int{c.Title}, len(neutralTitles), "title")
}
