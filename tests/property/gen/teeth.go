package gen

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// The generators of issue 26 (P60–P71): each draws, by construction, the
// inputs that show a break of its rule — a pod hash without a digit, a
// comment after the first record, a new firing of one series, a memory
// created before its expiry and recalled after it, a price table where the
// cheap worst case does not fit, a 429 carrying insufficient_quota, a
// Retry-After written as a date, a plain value under a secret label name.

// PodAlphabet is the alphabet of Kubernetes' generated name suffixes
// (vowels and confusable digits left out); PodLetters is the same without
// its digits.
const (
	PodAlphabet = "bcdfghjklmnpqrstvwxz2456789"
	PodLetters  = "bcdfghjklmnpqrstvwxz"
)

// WorkloadOwners are the workloads IdentityLabelCase's pods belong to (it
// also draws Namespaces, WorkloadRules, ProbeRules, ProbeTargets and
// TargetLabels).
func WorkloadOwners() []string {
	return []string{"checkout", "payment-api", "cart", "web-frontend", "orders-worker", "api-v2"}
}

// Namespaces is a pool of Kubernetes namespaces.
func Namespaces() []string { return []string{"shop", "payments", "default"} }

// WorkloadRules are rules of the rules file's kubernetes_workload identity.
func WorkloadRules() []string {
	return []string{"KubePodCrashLooping", "KubePodNotReady", "ContainerOOMKilled", "KubeContainerWaiting"}
}

// ProbeRules are blackbox probe rules, matched by the identity rule's regex
// only (none is in a list).
func ProbeRules() []string {
	return []string{"BlackboxProbeFailed", "BlackboxSlowProbe", "BlackboxSslCertificateWillExpireSoon", "ProbeFailed", "ProbeHttpStatusCode"}
}

// ProbeTargets are probed targets: URLs, addresses with ports, host names.
func ProbeTargets() []string {
	return []string{"https://shop.example.com/health", "https://api.example.com", "10.0.0.7:443", "db-1.internal:5432",
		"tcp://mail.example.org:25", "icmp://10.0.0.8"}
}

// TargetLabels are the labels a setup names a probe's target in, in the
// identity rule's order of alternatives.
func TargetLabels() []string { return []string{"target", "probe_target", "instance"} }

// IdentityLabelKinds names IdentityLabelCase's kinds.
func IdentityLabelKinds() []string { return []string{"pod", "probe", "cronjob run", "node"} }

// CronJobs and Nodes are the CronJob and node names the cronjob run and node
// kinds draw.
func CronJobs() []string { return []string{"nightly-backup", "ledger-export", "report"} }

// Nodes is a pool of node names: cloud host names and ordinal names.
func Nodes() []string {
	return []string{"ip-10-0-1-23.ec2.internal", "worker-3", "worker-12", "gke-prod-pool-1-abcd", "node-a"}
}

// IdentityLabelCase is two alerts of one rule whose identity labels are set
// by the rules file's identity section: two pods of one workload, two
// probes of one rule, two runs of one CronJob or the alert on two nodes
// (Kind indexes IdentityLabelKinds).
type IdentityLabelCase struct {
	Kind int
	// Rule indexes WorkloadRules or ProbeRules.
	Rule int
	// Owner and Namespace index their pools (Owner also CronJobs and
	// Nodes, with HashA and HashB for the second node and the runs' times);
	// HashA, HashB, SuffixA and
	// SuffixB are spelled in the pod alphabet (Letters: without digits),
	// the hash HashLen+6 characters long.
	Owner, Namespace                   int
	Letters                            bool
	HashLen                            int
	HashA, HashB, SuffixA, SuffixB     int
	TargetA, TargetB, Label, Instances int
}

// spell writes n in base len(alphabet), width characters.
func spell(n, width int, alphabet string) string {
	b := make([]byte, width)
	for i := range b {
		b[i] = alphabet[n%len(alphabet)]
		n /= len(alphabet)
	}
	return string(b)
}

// Pod returns the name of pod a (first) or b of the case.
func (c IdentityLabelCase) Pod(second bool) string {
	alpha := PodAlphabet
	if c.Letters {
		alpha = PodLetters
	}
	h, s := c.HashA, c.SuffixA
	if second {
		h, s = c.HashB, c.SuffixB
	}
	return WorkloadOwners()[c.Owner] + "-" + spell(h, c.HashLen+6, alpha) + "-" + spell(s, 5, alpha)
}

// PodHashHasDigit reports whether either pod's generated suffixes hold a digit.
func (c IdentityLabelCase) PodHashHasDigit() bool {
	return strings.ContainsAny(c.Pod(false)[len(WorkloadOwners()[c.Owner]):]+c.Pod(true)[len(WorkloadOwners()[c.Owner]):], "0123456789")
}

// Alert returns the first or second alert of the case.
func (c IdentityLabelCase) Alert(second bool) openrecall.Alert {
	switch IdentityLabelKinds()[c.Kind] {
	case "cronjob run":
		run := 29212038 + c.HashA%1000
		if second {
			run = 29212038 + c.HashB%1000
		}
		return openrecall.Alert{Format: "alertmanager", Title: "KubeJobFailed", Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring,
			Labels: map[string]string{"alertname": "KubeJobFailed", "job": "kube-state-metrics", "namespace": Namespaces()[c.Namespace],
				"job_name": fmt.Sprintf("%s-%d", CronJobs()[c.Owner%len(CronJobs())], run)}}
	case "node":
		return openrecall.Alert{Format: "alertmanager", Title: "KubeNodeNotReady", Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring,
			Labels: map[string]string{"alertname": "KubeNodeNotReady", "job": "kube-state-metrics", "node": c.Node(second)}}
	}
	if IdentityLabelKinds()[c.Kind] == "pod" {
		rule := WorkloadRules()[c.Rule%len(WorkloadRules())]
		return openrecall.Alert{Format: "alertmanager", Title: rule, Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring,
			Labels: map[string]string{"alertname": rule, "job": "kube-state-metrics", "namespace": Namespaces()[c.Namespace],
				"pod": c.Pod(second), "container": "", "instance": "10.1.2." + fmt.Sprint(3+c.HashA%200) + ":8080"}}
	}
	rule := ProbeRules()[c.Rule%len(ProbeRules())]
	labels := map[string]string{"alertname": rule, "job": "blackbox", TargetLabels()[c.Label]: c.Target(second)}
	if TargetLabels()[c.Label] != "instance" && c.Instances > 0 {
		// A later alternative present too: the first present one counts.
		labels["instance"] = fmt.Sprintf("blackbox-exporter-%d:9115", c.Instances+boolInt(second))
	}
	return openrecall.Alert{Format: "alertmanager", Title: rule, Severity: openrecall.SeverityHigh, Status: openrecall.StatusFiring, Labels: labels}
}

// Target returns the first or second probe's target: the second is the
// first when TargetB is 0, else TargetB targets further in the pool.
func (c IdentityLabelCase) Target(second bool) string {
	t := c.TargetA
	if second {
		t = (c.TargetA + c.TargetB) % len(ProbeTargets())
	}
	return ProbeTargets()[t]
}

// Node returns the first or second alert's node.
func (c IdentityLabelCase) Node(second bool) string {
	if second {
		return Nodes()[(c.Owner+c.HashB%2)%len(Nodes())]
	}
	return Nodes()[c.Owner%len(Nodes())]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// IdentityLabelCaseGen draws pods and probes most often, runs and nodes
// too; a third of the pod hashes are spelled without digits, and the two
// probes share a target in about a third of the cases.
func IdentityLabelCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(IdentityLabelCase{}), map[string]gopter.Gen{
		"Kind":      Index(len(IdentityLabelKinds()), 0),
		"Rule":      IntUpTo(4),
		"Owner":     Index(len(WorkloadOwners()), 0),
		"Namespace": Index(len(Namespaces()), 0),
		"Letters":   gg.Weighted([]gg.WeightedGen{{Weight: 1, Gen: gg.Const(true)}, {Weight: 2, Gen: gg.Const(false)}}),
		"HashLen":   IntUpTo(4),
		"HashA":     IntUpTo(1 << 30),
		"HashB":     IntUpTo(1 << 30),
		"SuffixA":   IntUpTo(1 << 24),
		"SuffixB":   IntUpTo(1 << 24),
		"TargetA":   Index(len(ProbeTargets()), 0),
		"TargetB":   Index(len(ProbeTargets()), 0.35),
		"Label":     Index(len(TargetLabels()), 0),
		"Instances": IntUpTo(3),
	})
}

// ValidIdentityLabelCase checks the ranges of IdentityLabelCaseGen.
func ValidIdentityLabelCase(c IdentityLabelCase) error {
	switch {
	case c.Kind < 0 || c.Kind >= len(IdentityLabelKinds()):
		return fmt.Errorf("kind out of range: %+v", c)
	case c.Rule < 0 || c.Owner < 0 || c.Owner >= len(WorkloadOwners()) || c.Namespace < 0 || c.Namespace >= len(Namespaces()):
		return fmt.Errorf("pool index out of range: %+v", c)
	case c.HashLen < 0 || c.HashLen > 4 || c.HashA < 0 || c.HashB < 0 || c.SuffixA < 0 || c.SuffixB < 0:
		return fmt.Errorf("hash out of range: %+v", c)
	case c.TargetA < 0 || c.TargetA >= len(ProbeTargets()) || c.TargetB < 0 || c.TargetB >= len(ProbeTargets()):
		return fmt.Errorf("target out of range: %+v", c)
	case c.Label < 0 || c.Label >= len(TargetLabels()) || c.Instances < 0:
		return fmt.Errorf("label out of range: %+v", c)
	}
	return nil
}

// TitleWords is the pool text-alert lines are built of.
func TitleWords() []string {
	return []string{"disk", "full", "on", "db-7", "checkout", "latency", "high", "5xx", "errors", "rising", "node", "down", "replica", "lag"}
}

// TextAlertCase is a free-text alert of several lines, written as a JSON
// string line or as the product's object with a text and no title.
type TextAlertCase struct {
	// Words holds one word-choice number per line; the alert has 2+More
	// lines (More in [0, 3]). Blank blank lines come first; Indent pads
	// every line.
	Words  [5]int
	More   int
	Blank  int
	Indent bool
	CRLF   bool
	Object bool
}

// LineCount returns the number of non-blank lines.
func (c TextAlertCase) LineCount() int { return 2 + c.More }

// LineText returns line i of the case (without padding).
func (c TextAlertCase) LineText(i int) string {
	w := TitleWords()
	n := c.Words[i]
	return fmt.Sprintf("%s %s %s line%d", w[n%len(w)], w[(n/len(w))%len(w)], w[(n/len(w)/len(w))%len(w)], i+1)
}

// Text returns the alert's whole text.
func (c TextAlertCase) Text() string {
	nl := "\n"
	if c.CRLF {
		nl = "\r\n"
	}
	var lines []string
	for i := 0; i < c.Blank; i++ {
		lines = append(lines, "  ")
	}
	for i := 0; i < c.LineCount(); i++ {
		l := c.LineText(i)
		if c.Indent {
			l = "  " + l + " "
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, nl)
}

// TextAlertCaseGen draws 2 to 5 lines, two thirds as a JSON string.
func TextAlertCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(TextAlertCase{}), map[string]gopter.Gen{
		"Words":  gopter.DeriveGen(func(a, b, c, d, e int) [5]int { return [5]int{a, b, c, d, e} }, func(w [5]int) (int, int, int, int, int) { return w[0], w[1], w[2], w[3], w[4] }, IntUpTo(3000), IntUpTo(3000), IntUpTo(3000), IntUpTo(3000), IntUpTo(3000)),
		"More":   IntUpTo(3),
		"Blank":  IntUpTo(2),
		"Indent": gg.Bool(),
		"CRLF":   gg.Bool(),
		"Object": gg.Weighted([]gg.WeightedGen{{Weight: 1, Gen: gg.Const(true)}, {Weight: 2, Gen: gg.Const(false)}}),
	})
}

// CommentLines are comment lines a queue may hold: plain, indented, and
// comments that would be a record without their '#'.
func CommentLines() []string {
	return []string{"# reviewed by the on-call", "   # indented note", `#{"title":"not an alert","severity":"critical"}`, "# [FIRING:1] disk full", "#", "\t# tab first", `#"a JSON string"`}
}

// CommentQueueCase is a queue of records with comment lines between them:
// comment line k is written before record k when bit k of Comments is set,
// and after the last record when bit Records is.
type CommentQueueCase struct {
	// Kinds holds each record's kind (0 JSON object, 1 plain text, 2 JSON
	// string); the queue has 1+More records.
	Kinds    [6]int
	More     int
	Comments int
	Text     int
}

// RecordCount returns the number of records.
func (c CommentQueueCase) RecordCount() int { return 1 + c.More }

// Record returns line k of the queue without comments.
func (c CommentQueueCase) Record(k int) string {
	title := fmt.Sprintf("%s %s on node-%d", TitleWords()[(k+c.Text)%len(TitleWords())], TitleWords()[(3*k+1)%len(TitleWords())], k)
	switch c.Kinds[k] {
	case 0:
		return fmt.Sprintf(`{"title":%q,"severity":"high","labels":{"team":"t%d"}}`, title, k)
	case 1:
		return title
	default:
		return fmt.Sprintf("%q", title)
	}
}

// Queue returns the queue with its comment lines, and without them.
func (c CommentQueueCase) Queue() (with, without string) {
	var w, wo strings.Builder
	for k := 0; k <= c.RecordCount(); k++ {
		if c.Comments&(1<<k) != 0 {
			w.WriteString(CommentLines()[(k+c.Text)%len(CommentLines())] + "\n")
		}
		if k < c.RecordCount() {
			w.WriteString(c.Record(k) + "\n")
			wo.WriteString(c.Record(k) + "\n")
		}
	}
	return w.String(), wo.String()
}

// CommentAfterFirst reports whether a comment line follows the first record.
func (c CommentQueueCase) CommentAfterFirst() bool {
	return c.Comments&((1<<(c.RecordCount()+1))-1)&^1 != 0
}

// CommentQueueCaseGen draws 1 to 6 records of mixed kinds and any set of
// comment places (so comments after the first record are the common case).
func CommentQueueCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(CommentQueueCase{}), map[string]gopter.Gen{
		"Kinds": gopter.DeriveGen(func(a, b, c, d, e, f int) [6]int { return [6]int{a, b, c, d, e, f} },
			func(k [6]int) (int, int, int, int, int, int) { return k[0], k[1], k[2], k[3], k[4], k[5] },
			IntUpTo(2), IntUpTo(2), IntUpTo(2), IntUpTo(2), IntUpTo(2), IntUpTo(2)),
		"More":     IntUpTo(5),
		"Comments": IntUpTo(127),
		"Text":     IntUpTo(20),
	})
}

// EpisodeStarts are the startsAt offsets (seconds after a fixed time) two
// firings are drawn from.
func EpisodeStarts() []int64 { return []int64{0, 1, 60, 3600, 86400} }

// EpisodeCase is two Alertmanager webhook items: the same series or two
// (Same), firing at StartA and StartB, the second firing or resolved; the
// fingerprint is sent (Sent) or left for intake to compute from the labels.
type EpisodeCase struct {
	Same, Sent, Resolved bool
	Series               int
	StartA, StartB       int
}

// EpisodeStart returns the startsAt of the first or second item.
func (c EpisodeCase) EpisodeStart(second bool) time.Time {
	i := c.StartA
	if second {
		i = c.StartB
	}
	return time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC).Add(time.Duration(EpisodeStarts()[i]) * time.Second)
}

// Webhook returns the Alertmanager webhook of item one or two.
func (c EpisodeCase) Webhook(second bool) string {
	series := c.Series
	if second && !c.Same {
		series++
	}
	status := "firing"
	if second && c.Resolved {
		status = "resolved"
	}
	fp := ""
	if c.Sent {
		fp = fmt.Sprintf(`,"fingerprint":"%016x"`, 0xa1b2c3d4e5f60000+uint64(series))
	}
	start := c.EpisodeStart(second)
	ends := "0001-01-01T00:00:00Z"
	if status == "resolved" {
		ends = start.Add(time.Minute).Format(time.RFC3339)
	}
	return fmt.Sprintf(`{"version":"4","groupKey":"{}:{alertname=\"DiskFull\"}","status":%q,"receiver":"openrecall","groupLabels":{},"commonLabels":{},"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":%q,"labels":{"alertname":"DiskFull","instance":"db-%d:9100","severity":"warning"},"annotations":{"summary":"disk full on db-%d"},"startsAt":%q,"endsAt":%q,"generatorURL":"http://prom:9090/graph"%s}]}`,
		status, status, series, series, start.Format(time.RFC3339), ends, fp)
}

// EpisodeCaseGen draws one series in two thirds of the cases and one start
// time in about half.
func EpisodeCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(EpisodeCase{}), map[string]gopter.Gen{
		"Same":     gg.Weighted([]gg.WeightedGen{{Weight: 2, Gen: gg.Const(true)}, {Weight: 1, Gen: gg.Const(false)}}),
		"Sent":     gg.Bool(),
		"Resolved": gg.Bool(),
		"Series":   IntUpTo(9),
		"StartA":   Index(len(EpisodeStarts()), 0.5),
		"StartB":   Index(len(EpisodeStarts()), 0.5),
	})
}

// ExpiryOffsets are expiry times relative to the recall time: none (0 is
// "no expiry"), at the recall time exactly, just before and after it, and
// far on either side.
func ExpiryOffsets() []time.Duration {
	return []time.Duration{0, -time.Hour, -time.Nanosecond, time.Nanosecond, time.Second, -30 * 24 * time.Hour, 30 * 24 * time.Hour, -time.Second}
}

// ExpiryCase is memories of one alert, each created before its expiry,
// recalled at a fixed time after some expiries and before others.
type ExpiryCase struct {
	// Expiry indexes ExpiryOffsets per memory, AtNow (when set) makes
	// memory AtNow-1 expire exactly at the recall time; Age is how long
	// before its expiry (or the recall time) each memory was created, in
	// hours beyond the first.
	Expiry []int
	AtNow  int
	Age    int
}

// ExpiryCaseGen draws 1 to 8 memories; most cases hold an expired one.
func ExpiryCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ExpiryCase{}), map[string]gopter.Gen{
		"Expiry": SliceUpTo(8, Index(len(ExpiryOffsets()), 0.2), reflect.TypeOf(0)),
		"AtNow":  IntUpTo(8),
		"Age":    IntUpTo(1000),
	})
}

// CacheWrites names the writes of this process the recall cache must see.
func CacheWrites() []string { return []string{"retain", "forget", "supersede", "import"} }

// CacheWriteCase is a warm recall cache, then one write of this store, then
// the same recall again.
type CacheWriteCase struct {
	// Base memories of the alert's family are retained first (1+Base);
	// Write indexes CacheWrites; Target picks the memory forgotten or
	// superseded; Decision the new memory's decision; Limit the recall's.
	Base, Write, Target, Decision, Limit int
}

// CacheWriteCaseGen draws every write kind alike.
func CacheWriteCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(CacheWriteCase{}), map[string]gopter.Gen{
		"Base":     IntUpTo(4),
		"Write":    Index(len(CacheWrites()), 0),
		"Target":   IntUpTo(4),
		"Decision": Index(4, 0),
		"Limit":    IntUpTo(6),
	})
}

// DedupeComponents names what a change of DedupeCase touches: each
// fingerprint field, the decision, the note's content, the source alert id,
// and the boundary between the note and the id.
func DedupeComponents() []string {
	return []string{"error_class", "service_role", "dependency_pattern", "signal_shape", "attack_pattern", "environment", "decision", "note", "source alert id", "note and id boundary"}
}

// DedupeCase is a memory and the same memory with one component of its
// dedupe key changed.
type DedupeCase struct {
	Family, Decision, Note, Source int
	Component, Change              int
}

// Retainable returns the decisions a memory may hold.
func Retainable() []openrecall.Decision {
	return []openrecall.Decision{openrecall.DecisionFalsePositive, openrecall.DecisionDuplicate, openrecall.DecisionKnownBenign, openrecall.DecisionReal}
}

// Pair returns the memory and its changed twin.
func (c DedupeCase) Pair() (a, b openrecall.Incident) {
	a = openrecall.Incident{Fingerprint: Families()[c.Family], Decision: Retainable()[c.Decision], Note: Notes()[c.Note],
		SourceAlertID: SourceAlertIDs()[c.Source], Identity: openrecall.Identity{Rule: "KubePodCrashLooping", Service: "checkout"},
		Severity: openrecall.SeverityHigh, CreatedAt: Epoch()}
	b = a
	switch comp := DedupeComponents()[c.Component]; comp {
	case "decision":
		b.Decision = Retainable()[(c.Decision+1+c.Change%3)%4]
	case "note":
		b.Note = a.Note + " " + TitleWords()[c.Change%len(TitleWords())]
	case "source alert id":
		ids := SourceAlertIDs()
		b.SourceAlertID = ids[(c.Source+1+c.Change%(len(ids)-1))%len(ids)]
	case "note and id boundary":
		// The same characters, the id's moved into the note: the key's
		// components are separated, not concatenated.
		if a.SourceAlertID == "" {
			a.SourceAlertID = SourceAlertIDs()[1+c.Change%(len(SourceAlertIDs())-1)]
		}
		a.Note = strings.TrimSpace(a.Note)
		b = a
		b.Note, b.SourceAlertID = a.Note+a.SourceAlertID, ""
	default:
		v, _ := a.Fingerprint.Get(comp)
		nv := []string{"x", v + "_x", "custom_value"}[c.Change%3]
		if nv == v {
			nv = v + "_y"
		}
		b.Fingerprint, _ = a.Fingerprint.With(comp, nv)
	}
	return a, b
}

// DedupeCaseGen draws every component alike.
func DedupeCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(DedupeCase{}), map[string]gopter.Gen{
		"Family":    Index(len(Families()), 0),
		"Decision":  Index(4, 0),
		"Note":      Index(len(Notes()), 0),
		"Source":    Index(len(SourceAlertIDs()), 0),
		"Component": Index(len(DedupeComponents()), 0),
		"Change":    IntUpTo(5),
	})
}

// PerTokenPrices are prices in whole nano-dollars per token (so a call's
// cost is exact, no rounding), drawn for P67's price tables.
func PerTokenPrices() []int64 { return []int64{0, 1, 2, 3, 5, 8, 10, 15, 25, 60, 100} }

// ExpectedCompletions are the strong model's expected completions P67 draws:
// below, at and above the cheap cap of 400 tokens.
func ExpectedCompletions() []int { return []int{1, 50, 220, 399, 400, 401, 800} }

// PriceCase is a price table and an expected strong completion. The cheap
// output price is derived from the strong one (OutShift: below, equal or
// above it) so that tables where the cheap call at the expected completion
// fits under the baseline but its worst case does not are common.
type PriceCase struct {
	StrongIn, StrongOut, InDelta, OutShift, Expected, Memories int
}

// Table returns the per-token prices (cheap in, cheap out, strong in,
// strong out) and the expected completion.
func (c PriceCase) Table() (ci, co, si, so int64, expected int) {
	p := PerTokenPrices()
	// The strong model has a price (a free strong model is refused: the
	// baseline would be zero).
	si, so = p[1+c.StrongIn], p[1+c.StrongOut]
	ci = si + int64(c.InDelta)
	co = so + int64(c.OutShift) - 2
	if co < 0 {
		co = 0
	}
	return ci, co, si, so, ExpectedCompletions()[c.Expected]
}

// PriceCaseGen draws equal input prices in most cases, so that the
// completions decide.
func PriceCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(PriceCase{}), map[string]gopter.Gen{
		"StrongIn":  Index(len(PerTokenPrices())-1, 0),
		"StrongOut": Index(len(PerTokenPrices())-1, 0),
		"InDelta":   Index(3, 0.7),
		"OutShift":  IntUpTo(5),
		"Expected":  Index(len(ExpectedCompletions()), 0),
		"Memories":  IntUpTo(4),
	})
}

// CompletionModels are the model names strong steps are recorded under: the
// strong model, its dated snapshot, a model that shares its prefix, that
// one's snapshot, and another.
func CompletionModels() []string {
	return []string{"gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", "o3"}
}

// CompletionStep is one route step of a recorded run.
type CompletionStep struct {
	Model, Step              int
	Cheap, Skipped           bool
	PromptTokens, Completion int
	Result                   int
}

// CompletionSteps returns the step names a CompletionStep's Step indexes.
func CompletionSteps() []string {
	return []string{openrecall.StepAnalysis, openrecall.StepAnalysis, openrecall.StepFingerprint, openrecall.StepMemoryBypass}
}

// CompletionCase is the steps of two runs recorded one after the other
// (the first Split steps, then the rest).
type CompletionCase struct {
	Steps []CompletionStep
	Split int
}

// CompletionCaseGen draws up to 12 steps whose prompt and completion are
// drawn apart (so they differ), a third of them cheap.
func CompletionCaseGen() gopter.Gen {
	step := gg.Struct(reflect.TypeOf(CompletionStep{}), map[string]gopter.Gen{
		"Model":        Index(len(CompletionModels()), 0.4),
		"Step":         Index(len(CompletionSteps()), 0),
		"Cheap":        gg.Weighted([]gg.WeightedGen{{Weight: 1, Gen: gg.Const(true)}, {Weight: 2, Gen: gg.Const(false)}}),
		"Skipped":      gg.Weighted([]gg.WeightedGen{{Weight: 1, Gen: gg.Const(true)}, {Weight: 5, Gen: gg.Const(false)}}),
		"PromptTokens": IntUpTo(2000),
		"Completion":   Index(900, 0.1),
		"Result":       IntUpTo(3),
	})
	return gg.Struct(reflect.TypeOf(CompletionCase{}), map[string]gopter.Gen{
		"Steps": SliceUpTo(12, step, reflect.TypeOf(CompletionStep{})),
		"Split": IntUpTo(12),
	})
}

// RetryStatuses are the statuses of RetryCase's scripted failures (their
// bodies, codes and Retry-After values come from RetryBodies, RetryCodes and
// RetryAfters).
func RetryStatuses() []int {
	return []int{429, 500, 502, 503, 504, 408, 409, 400, 401, 403, 404, 422, 418}
}

// RetryBodies names the bodies of scripted failures: the error object with
// the code in "code", in "type", or a body that is not JSON.
func RetryBodies() []string { return []string{"code", "type", "text"} }

// RetryCodes are the error codes a JSON error body carries.
func RetryCodes() []string {
	return []string{"", "insufficient_quota", "rate_limit_exceeded", "server_error"}
}

// RetryAfters are Retry-After header values; "+Ns" and "-Ns" stand for an
// HTTP date N seconds after or before the client's clock.
func RetryAfters() []string {
	return []string{"", "0", "2", "7", "1.5", "+3s", "+11s", "-60s", "3600", "soon", "-1", "+7200s"}
}

// ScriptedFailure is one failed answer.
type ScriptedFailure struct {
	Status, Body, Code, RetryAfter int
}

// RetryCase is the failures a server answers in turn before it answers
// 200.
type RetryCase struct {
	Failures []ScriptedFailure
}

// RetryAfterHeader returns the Retry-After header of failure f at clock now.
func RetryAfterHeader(f ScriptedFailure, now time.Time) string {
	v := RetryAfters()[f.RetryAfter]
	if len(v) > 1 && (v[0] == '+' || v[0] == '-') && strings.HasSuffix(v, "s") {
		d, err := time.ParseDuration(v)
		if err == nil {
			return now.Add(d).UTC().Format(http.TimeFormat)
		}
	}
	return v
}

// RetryCaseGen draws 1 to 4 failures; 429 and insufficient_quota are common,
// and so are dates.
func RetryCaseGen() gopter.Gen {
	f := gg.Struct(reflect.TypeOf(ScriptedFailure{}), map[string]gopter.Gen{
		"Status":     Index(len(RetryStatuses()), 0.3),
		"Body":       Index(len(RetryBodies()), 0),
		"Code":       Index(len(RetryCodes()), 0),
		"RetryAfter": Index(len(RetryAfters()), 0),
	})
	return gg.Struct(reflect.TypeOf(RetryCase{}), map[string]gopter.Gen{
		"Failures": SliceUpTo(4, f, reflect.TypeOf(ScriptedFailure{})),
	})
}

// SecretLabelNames are label names that say secret, in the spellings
// configurations use.
func SecretLabelNames() []string {
	return []string{"dsn", "db_password", "api_token", "DB_DSN", "mysql-dsn", "Password", "x-api-key", "session_id", "connection_string",
		"github_token", "secret", "private_key", "access-key", "authorization", "cookie", "pwd", "app.dsn", "SMTP_PASSWORD"}
}

// PlainValues are values that look like nothing secret: words, numbers,
// addresses, a connection URL without a password.
func PlainValues() []string {
	return []string{"orchid", "31337042", "postgres://orders-db.internal:5432/orders", "alpha beta", "db-7.prod", "yes-indeed", "marmalade-kiwi", "file:/var/lib/app.db"}
}

// SecretLabelCase is an alert holding one value under a secret label name
// (as a label or an annotation) and a plain label beside it.
type SecretLabelCase struct {
	Name, Value, Mark int
	Annotation        bool
}

// SecretValue returns the value held under the secret name: a plain value
// with a marker that makes it unique in the request.
func (c SecretLabelCase) SecretValue() string {
	return fmt.Sprintf("%s%s", PlainValues()[c.Value], []string{"", "q", "zq", "9"}[c.Mark%4])
}

// SecretLabelCaseGen draws every name and value alike.
func SecretLabelCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(SecretLabelCase{}), map[string]gopter.Gen{
		"Name":       Index(len(SecretLabelNames()), 0),
		"Value":      Index(len(PlainValues()), 0),
		"Mark":       IntUpTo(3),
		"Annotation": gg.Bool(),
	})
}

// AuditFieldCase is a sealed trail (2+MoreEntries entries, the first Legacy
// of them written before keying, and 2+MoreCosts cost points) and the entry
// and cost point whose every field is edited in turn.
type AuditFieldCase struct {
	MoreEntries, MoreCosts, Legacy, Entry, Cost int
}

// AuditFieldCaseGen draws small trails; the edited entry is as often keyed
// as not.
func AuditFieldCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(AuditFieldCase{}), map[string]gopter.Gen{
		"MoreEntries": IntUpTo(10),
		"MoreCosts":   IntUpTo(6),
		"Legacy":      IntUpTo(12),
		"Entry":       IntUpTo(11),
		"Cost":        IntUpTo(7),
	})
}
