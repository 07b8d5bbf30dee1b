package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// The corpus mix Generate draws, as shares of the alerts; benign repeats
// take what the others leave.
const (
	shareOneOff    = 0.05
	shareNovel     = 0.08
	shareAmbiguous = 0.10
	shareAttack    = 0.08
	shareDisguised = 0.05
	shareInjection = 0.04
	shareCrossRule = 0.04
	shareEscalated = 0.005
	// shareStorm is the alerts of storms: bursts of stormSize consecutive
	// firings of one benign family, every other one with a firing at
	// critical inside (a real incident: triaged on its own).
	shareStorm = 0.10
)

// stormSize is the firings of one storm burst.
const stormSize = 20

// MinSize is the smallest corpus Generate writes: enough for every kind.
const MinSize = 60

// MaxSize is the largest corpus Generate writes: one-off and novel alerts
// draw distinct (error, service role, environment) triples from a finite
// pool, and a larger corpus would have to repeat them.
const MaxSize = 20000

// format is an intake format Generate renders alerts in.
type format int

const (
	formatJSON format = iota
	formatAlertmanager
	formatPagerDuty
	// formatFalco is a Falco event as falcosidekick posts it: the security
	// detections, with their entity fields.
	formatFalco
)

// spec is one alert before rendering.
type spec struct {
	truth     Truth
	alertname string
	service   string
	env       string
	severity  string
	title     string
	text      string
	extra     [][2]string
	formats   []format
	// falco, when set, is the Falco event the spec renders as.
	falco *falcoSpec
}

// family is a template for the alerts of one family.
type family struct {
	name      string
	decision  openrecall.Decision
	class     string
	alertname string
	service   string
	env       string
	severity  string
	formats   []format
	weight    int
	note      string
	deadEnds  []string
	render    func(r *rand.Rand, pod string) (title, text string)
	// sibling is another rule of the same service and error: the rule of
	// the family's cross-rule near misses.
	sibling string
}

// Generate writes a labelled corpus of size alerts from seed: the same seed
// and size give the same bytes. The mix (see README.md): benign repeats of
// twelve families, one-off false positives, novel real incidents, three
// ambiguous families, attacks, attacks dressed like a benign family and
// alerts whose text tries to instruct the model, in JSON Lines objects,
// Alertmanager webhooks (one to three alerts each) and PagerDuty events.
func Generate(seed uint64, size int) (Corpus, error) {
	if size < MinSize || size > MaxSize {
		return Corpus{}, fmt.Errorf("eval: corpus size %d: want %d to %d alerts: %w", size, MinSize, MaxSize, openrecall.ErrInvalid)
	}
	r := rand.New(rand.NewPCG(seed, 0x6f70656e7265636c))
	g := &generator{r: r, used: map[string]bool{}}
	for _, f := range benignFamilies() {
		g.used[comboKey(f.class, f.service, f.env)] = true
	}
	for _, f := range ambiguousFamilies() {
		g.used[comboKey(f.class, f.service, f.env)] = true
	}

	n := func(share float64) int { return int(share*float64(size) + 0.5) }
	var specs []spec
	specs = append(specs, g.pooled(n(shareOneOff), KindOneOffFP)...)
	specs = append(specs, g.pooled(n(shareNovel), KindNovelReal)...)
	specs = append(specs, g.ambiguous(n(shareAmbiguous))...)
	specs = append(specs, g.attacks(n(shareAttack))...)
	specs = append(specs, g.disguised(n(shareDisguised))...)
	specs = append(specs, g.injections(n(shareInjection))...)
	specs = append(specs, g.crossRule(n(shareCrossRule))...)
	specs = append(specs, g.escalations(n(shareEscalated))...)
	storms := g.storms(n(shareStorm))
	storms = append(storms, g.detectionStorms(n(shareDetectionStorm))...)
	sequences := g.detections(n(shareDetection), n(shareNearMiss))
	held := 0
	for _, b := range append(append([][]spec(nil), storms...), sequences...) {
		held += len(b)
	}
	specs = append(specs, g.benign(size-len(specs)-held)...)
	g.r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
	for _, seq := range sequences {
		specs = g.insertOrdered(specs, seq)
	}
	specs = g.insertBursts(specs, storms)
	assignAmbiguous(g.r, specs)

	alerts, truth, err := g.render(specs)
	if err != nil {
		return Corpus{}, err
	}
	return Corpus{Name: fmt.Sprintf("generated seed=%d size=%d", seed, size), Alerts: alerts, Truth: truth}, nil
}

type generator struct {
	r    *rand.Rand
	used map[string]bool
}

// comboKey names an Alert DNA by what decides a strong match: error class,
// service role and environment.
func comboKey(class, service, env string) string {
	return class + "|" + serviceRoles()[service] + "|" + env
}

func (g *generator) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *generator) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *generator) pod(service string) string {
	const chars = "bcdfghjklmnpqrstvwxz2456789"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = chars[g.r.IntN(len(chars))]
		}
		return string(b)
	}
	return service + "-" + word(9+g.r.IntN(2)) + "-" + word(5)
}

// benign draws n benign repeats from the families by weight.
func (g *generator) benign(n int) []spec {
	fams := benignFamilies()
	total := 0
	for _, f := range fams {
		total += f.weight
	}
	out := make([]spec, 0, n)
	for i := 0; i < n; i++ {
		k := g.r.IntN(total)
		f := fams[0]
		for _, x := range fams {
			if k < x.weight {
				f = x
				break
			}
			k -= x.weight
		}
		out = append(out, g.fromFamily(f, KindBenignRepeat))
	}
	return out
}

func (g *generator) fromFamily(f family, kind Kind) spec {
	pod := g.pod(f.service)
	title, text := f.render(g.r, pod)
	return spec{
		truth:     Truth{Family: f.name, Kind: kind, Decision: f.decision, Note: f.note, DeadEnds: f.deadEnds},
		alertname: f.alertname, service: f.service, env: f.env, severity: f.severity,
		title: title, text: text, formats: f.formats,
		extra: [][2]string{{"pod", pod}},
	}
}

// pooled draws n alerts from unused (issue, service role, environment)
// triples: each is the only alert of its kind with that Alert DNA.
func (g *generator) pooled(n int, kind Kind) []spec {
	var out []spec
	issues, services, envs := issueTemplates(), poolServices(), []string{"prod", "staging", "dev"}
	for attempts := 0; len(out) < n && attempts < 50*n+1000; attempts++ {
		is := issues[g.r.IntN(len(issues))]
		svc := services[g.r.IntN(len(services))]
		env := envs[g.r.IntN(len(envs))]
		key := comboKey(is.class, svc, env)
		if g.used[key] {
			continue
		}
		g.used[key] = true
		pod := g.pod(svc)
		title, text := is.render(g.r, svc, pod)
		s := spec{
			alertname: is.alertname, service: svc, env: env, title: title, text: text,
			formats: []format{formatJSON, formatAlertmanager, formatPagerDuty},
			extra:   [][2]string{{"pod", pod}},
		}
		if kind == KindOneOffFP {
			why := g.pick(oneOffReasons())
			s.text += " " + why
			s.severity = g.pick([]string{"warning", "info", "high"})
			s.truth = Truth{Family: "one-off:" + is.name + "@" + svc + "/" + env, Kind: kind,
				Decision: openrecall.DecisionFalsePositive, Note: "one-off: " + why,
				DeadEnds: []string{"paging the service owner"}}
		} else {
			s.severity = g.pick([]string{"critical", "high"})
			s.truth = Truth{Family: "novel:" + is.name + "@" + svc + "/" + env, Kind: kind,
				Decision: openrecall.DecisionReal, Note: "novel incident: " + is.name + " on " + svc,
				DeadEnds: []string{"restarting the pods", "waiting for it to clear"}}
		}
		out = append(out, s)
	}
	return out
}

// ambiguous draws n alerts of the ambiguous families; their decisions are
// assigned in corpus order by assignAmbiguous.
func (g *generator) ambiguous(n int) []spec {
	fams := ambiguousFamilies()
	out := make([]spec, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, g.fromFamily(fams[i%len(fams)], KindAmbiguous))
	}
	return out
}

// assignAmbiguous gives each ambiguous alert its truth in corpus order:
// analysts split on these families, about half real, and never call more
// than three in a row benign (a family they call benign five times running
// is a benign family, not an ambiguous one).
func assignAmbiguous(r *rand.Rand, specs []spec) {
	run := map[string]int{}
	for i := range specs {
		t := &specs[i].truth
		if t.Kind != KindAmbiguous {
			continue
		}
		real := run[t.Family] >= 3 || r.IntN(2) == 0
		if real {
			t.Decision = openrecall.DecisionReal
			t.Note = "ambiguous family " + t.Family + ": this time a real incident"
			run[t.Family] = 0
			continue
		}
		t.Decision = openrecall.DecisionKnownBenign
		t.Note = "ambiguous family " + t.Family + ": this time benign"
		run[t.Family]++
	}
}

func (g *generator) attacks(n int) []spec {
	ats := attackTemplates()
	out := make([]spec, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, g.attack(ats[g.r.IntN(len(ats))], KindAttack))
	}
	return out
}

func (g *generator) attack(a attackTemplate, kind Kind) spec {
	src := fmt.Sprintf("%d.%d.%d.%d", 198, 51, 100, g.r.IntN(250)+1)
	title, text := a.render(g.r, src)
	return spec{
		truth:     Truth{Family: a.name, Kind: kind, Decision: openrecall.DecisionReal, Note: "security incident: " + a.name, DeadEnds: []string{"treating it as a load spike"}},
		alertname: a.alertname, service: a.service, env: "prod", severity: g.pick([]string{"critical", "high"}),
		title: title, text: text, formats: []format{formatJSON, formatAlertmanager, formatPagerDuty},
		extra: [][2]string{{"category", "security"}, {"source_ip", src}},
	}
}

// disguised draws attacks dressed like a benign family: the family's
// service, error and wording, plus one explicit security signal.
func (g *generator) disguised(n int) []spec {
	fams := benignFamilies()
	out := make([]spec, 0, n)
	for i := 0; i < n; i++ {
		f := fams[g.r.IntN(len(fams))]
		s := g.fromFamily(f, KindDisguisedAttack)
		signal := g.pick(securitySignals())
		s.text += " " + fmt.Sprintf(signal, fmt.Sprintf("203.0.113.%d", g.r.IntN(250)+1))
		s.title += g.pick([]string{"", " (security review requested)", " - unusual traffic"})
		s.truth.Decision = openrecall.DecisionReal
		s.truth.Note = "attack dressed as " + f.name + ": the security signal makes it a security incident"
		s.truth.DeadEnds = []string{"closing it as the usual " + f.name}
		out = append(out, s)
	}
	return out
}

// crossRule draws near misses: alerts of another rule (the family's
// sibling) with a benign family's service, wording and so its Alert DNA,
// that are real incidents.
func (g *generator) crossRule(n int) []spec {
	fams := benignFamilies()
	out := make([]spec, 0, n)
	for i := 0; i < n; i++ {
		f := fams[g.r.IntN(len(fams))]
		s := g.fromFamily(f, KindCrossRule)
		s.alertname = f.sibling
		s.severity = g.pick([]string{"critical", "high", "medium"})
		s.truth.Family = "cross-rule:" + f.sibling + "@" + f.service
		s.truth.Decision = openrecall.DecisionReal
		s.truth.Note = "another rule (" + f.sibling + ") with the DNA of " + f.name + ": a real incident"
		s.truth.DeadEnds = []string{"closing it as the usual " + f.name}
		out = append(out, s)
	}
	return out
}

// escalations draws alerts of the benign families taught at medium or
// below, firing at critical, that are real incidents this time.
func (g *generator) escalations(n int) []spec {
	var fams []family
	for _, f := range benignFamilies() {
		if f.severity == "medium" || f.severity == "low" || f.severity == "info" {
			fams = append(fams, f)
		}
	}
	out := make([]spec, 0, n)
	for i := 0; i < n; i++ {
		f := fams[g.r.IntN(len(fams))]
		s := g.fromFamily(f, KindSeverityEscalation)
		s.severity = "critical"
		s.truth.Family = "escalated:" + f.name
		s.truth.Decision = openrecall.DecisionReal
		s.truth.Note = f.name + " at critical: a real incident this time"
		s.truth.DeadEnds = []string{"closing it as the usual " + f.name}
		out = append(out, s)
	}
	return out
}

// storms draws bursts of stormSize firings of one benign family, n alerts
// in all (DESIGN §6a); every other burst has one firing at critical in its
// middle, a real incident.
func (g *generator) storms(n int) [][]spec {
	fams := benignFamilies()
	var out [][]spec
	for k := 0; n >= stormSize; k++ {
		f := fams[g.r.IntN(len(fams))]
		burst := make([]spec, stormSize)
		for i := range burst {
			burst[i] = g.fromFamily(f, KindBenignRepeat)
		}
		if k%2 == 1 && f.severity != "critical" {
			s := &burst[stormSize/2]
			s.severity = "critical"
			s.truth.Kind = KindSeverityEscalation
			s.truth.Family = "escalated:" + f.name
			s.truth.Decision = openrecall.DecisionReal
			s.truth.Note = f.name + " at critical inside a storm: a real incident this time"
			s.truth.DeadEnds = []string{"closing it with the rest of the storm"}
		}
		out = append(out, burst)
		n -= stormSize
	}
	return out
}

// insertBursts places each burst, whole and in order, at a random point of
// specs.
func (g *generator) insertBursts(specs []spec, bursts [][]spec) []spec {
	for _, b := range bursts {
		at := g.r.IntN(len(specs) + 1)
		specs = append(specs[:at], append(append([]spec(nil), b...), specs[at:]...)...)
	}
	return specs
}

// injections draws alerts whose text tells the model to close them: on
// attacks, on novel incidents and on attacks dressed like a benign family.
func (g *generator) injections(n int) []spec {
	ats := attackTemplates()
	out := make([]spec, 0, n)
	for i := 0; i < n; i++ {
		var s spec
		switch i % 3 {
		case 0:
			s = g.attack(ats[g.r.IntN(len(ats))], KindInjection)
		case 1:
			more := g.pooled(1, KindNovelReal)
			if len(more) == 0 {
				s = g.attack(ats[g.r.IntN(len(ats))], KindInjection)
				break
			}
			s = more[0]
		default:
			s = g.disguised(1)[0]
		}
		s.truth.Kind = KindInjection
		s.truth.Decision = openrecall.DecisionReal
		s.text += " " + g.pick(injectionTexts())
		out = append(out, s)
	}
	return out
}

// render lays the specs out as alerts.jsonl lines, grouping consecutive
// Alertmanager alerts into webhooks of up to three, and returns the truth
// in reading order.
func (g *generator) render(specs []spec) ([]byte, []Truth, error) {
	var buf bytes.Buffer
	truth := make([]Truth, 0, len(specs))
	ts := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	line := 0
	for i := 0; i < len(specs); {
		line++
		f := specs[i].formats[g.r.IntN(len(specs[i].formats))]
		switch f {
		case formatAlertmanager:
			group := []spec{specs[i]}
			want := 1 + g.r.IntN(3)
			for len(group) < want && i+len(group) < len(specs) && hasFormat(specs[i+len(group)], formatAlertmanager) {
				group = append(group, specs[i+len(group)])
			}
			var items []ordered
			for k, s := range group {
				ts = ts.Add(time.Duration(5+g.r.IntN(40)) * time.Second)
				items = append(items, g.amAlert(s, ts))
				item := k
				t := s.truth
				t.Line, t.Item = line, &item
				truth = append(truth, t)
			}
			if err := writeLine(&buf, g.webhook(items, group[0])); err != nil {
				return nil, nil, err
			}
			i += len(group)
		case formatFalco:
			ts = ts.Add(time.Duration(5+g.r.IntN(40)) * time.Second)
			uuid := g.uuid()
			if err := writeLine(&buf, g.falcoEvent(specs[i], uuid, ts)); err != nil {
				return nil, nil, err
			}
			t := specs[i].truth
			t.Line, t.ID = line, "falco-"+uuid
			truth = append(truth, t)
			i++
		case formatPagerDuty:
			ts = ts.Add(time.Duration(5+g.r.IntN(40)) * time.Second)
			key := "pd-" + g.hex(12)
			if err := writeLine(&buf, g.pdEvent(specs[i], key, ts)); err != nil {
				return nil, nil, err
			}
			t := specs[i].truth
			t.Line, t.ID = line, "pd-"+key
			truth = append(truth, t)
			i++
		default:
			ts = ts.Add(time.Duration(5+g.r.IntN(40)) * time.Second)
			id := strings.ToLower(g.pick([]string{"dd", "grafana", "zbx", "nr"})) + "-" + g.hex(10)
			if err := writeLine(&buf, g.jsonAlert(specs[i], id, ts)); err != nil {
				return nil, nil, err
			}
			t := specs[i].truth
			t.Line, t.ID = line, id
			truth = append(truth, t)
			i++
		}
	}
	return buf.Bytes(), truth, nil
}

func hasFormat(s spec, f format) bool {
	for _, x := range s.formats {
		if x == f {
			return true
		}
	}
	return false
}

func writeLine(buf *bytes.Buffer, v ordered) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("eval: marshal generated alert: %w", err)
	}
	buf.Write(b)
	buf.WriteByte('\n')
	return nil
}

// namespace is the Kubernetes namespace the spec's service runs in. Every
// format carries it: the identity rules of Kubernetes workload alerts make
// it part of the identity, and one alert must have one identity whatever
// format it arrives in.
func (s spec) namespace() string { return strings.SplitN(s.service, "-", 2)[0] }

// labels returns the spec's labels in a random order, as senders differ.
func (g *generator) labels(s spec, withEnv bool) ordered {
	kv := ordered{{"alertname", s.alertname}, {"service", s.service}, {"namespace", s.namespace()}}
	if withEnv {
		kv = append(kv, pair{g.pick([]string{"env", "environment"}), s.env})
	}
	for _, e := range s.extra {
		kv = append(kv, pair{e[0], e[1]})
	}
	g.r.Shuffle(len(kv), func(i, j int) { kv[i], kv[j] = kv[j], kv[i] })
	return kv
}

func (g *generator) jsonAlert(s spec, id string, ts time.Time) ordered {
	o := ordered{
		{"id", id},
		{"title", s.title},
		{"text", s.text},
		{"labels", g.labels(s, false)},
		{"severity", s.severity},
		{"service", s.service},
		{g.pick([]string{"environment", "env"}), s.env},
		{"source", g.pick([]string{"datadog", "grafana", "zabbix", "newrelic"})},
		{"timestamp", ts.Format(time.RFC3339)},
	}
	// Field order varies by sender; the id stays first for readability.
	rest := o[1:]
	g.r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return o
}

func (g *generator) amAlert(s spec, ts time.Time) ordered {
	labels := g.labels(s, true)
	labels = append(labels, pair{"severity", amSeverity(s.severity)})
	return ordered{
		{"status", "firing"},
		{"labels", labels},
		{"annotations", ordered{{"summary", s.title}, {"description", s.text}}},
		{"startsAt", ts.Format(time.RFC3339Nano)},
		{"endsAt", "0001-01-01T00:00:00Z"},
		{"generatorURL", "http://prometheus." + s.env + ".example:9090/graph?g0.expr=" + s.alertname},
		{"fingerprint", g.hex(16)},
	}
}

func (g *generator) webhook(items []ordered, first spec) ordered {
	anyItems := make([]any, len(items))
	for i, it := range items {
		anyItems[i] = it
	}
	return ordered{
		{"receiver", "openrecall"},
		{"status", "firing"},
		{"alerts", anyItems},
		{"groupLabels", ordered{{"alertname", first.alertname}}},
		{"commonLabels", ordered{{"alertname", first.alertname}}},
		{"commonAnnotations", ordered{}},
		{"externalURL", "http://alertmanager." + first.env + ".example:9093"},
		{"version", "4"},
		{"groupKey", "{}:{alertname=\"" + first.alertname + "\"}"},
		{"truncatedAlerts", 0},
	}
}

func (g *generator) pdEvent(s spec, key string, ts time.Time) ordered {
	// The service rides in custom_details too: the fingerprint rules read
	// a service role from labels (not from payload.component) before the
	// alertname, so without it an exporter alertname such as
	// PostgresReplicationLag would give a PagerDuty event another role than
	// the same alert in JSON or from Alertmanager.
	details := ordered{{"alertname", s.alertname}, {"service", s.service}, {"env", s.env}, {"namespace", s.namespace()}, {"details", s.text}}
	for _, e := range s.extra {
		details = append(details, pair{e[0], e[1]})
	}
	g.r.Shuffle(len(details), func(i, j int) { details[i], details[j] = details[j], details[i] })
	return ordered{
		{"routing_key", "R0" + g.hex(30)},
		{"event_action", "trigger"},
		{"dedup_key", key},
		{"payload", ordered{
			{"summary", s.title + ": " + s.text},
			{"source", s.service},
			{"severity", pdSeverity(s.severity)},
			{"component", s.service},
			{"group", strings.SplitN(s.service, "-", 2)[0]},
			{"class", s.alertname},
			{"timestamp", ts.Format(time.RFC3339)},
			{"custom_details", details},
		}},
	}
}

// amSeverity is the severity label an Alertmanager rule gives: the same
// normalized severity as the JSON and PagerDuty renderings of the alert, so
// one rule has one severity whatever the format (the guard's severity
// clause compares them).
func amSeverity(s string) string {
	switch s {
	case "high":
		return "high"
	case "info":
		return "info"
	case "critical":
		return "critical"
	}
	return "warning"
}

func pdSeverity(s string) string {
	switch s {
	case "critical":
		return "critical"
	case "high":
		return "error"
	case "info":
		return "info"
	}
	return "warning"
}

// pair is one key and value of an ordered JSON object.
type pair struct {
	k string
	v any
}

// ordered is a JSON object that keeps its keys in order, so generated
// alerts vary their label and field order as real senders do.
type ordered []pair

// MarshalJSON writes the object with its keys in order.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// sortedFamilies returns the names of every family Generate can write, for
// tests and documentation.
func sortedFamilies() []string {
	var out []string
	for _, f := range benignFamilies() {
		out = append(out, f.name)
	}
	for _, f := range ambiguousFamilies() {
		out = append(out, f.name)
	}
	sort.Strings(out)
	return out
}
