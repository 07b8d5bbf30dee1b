package rulecorpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rule is one alert rule of the corpus, as flattened there.
type Rule struct {
	Service     string `json:"service"`
	Exporter    string `json:"exporter"`
	Group       string `json:"group"`
	Alert       string `json:"alert"`
	Expr        string `json:"expr"`
	For         string `json:"for"`
	Severity    string `json:"severity"`
	Summary     string `json:"summary"`
	Description string `json:"description"`
}

// ErrAbsent marks a corpus file that is not there (a test skips on it, or
// fails in CI: see internal/testenv).
var ErrAbsent = errors.New("rule corpus not found")

// File is where the corpus lives in the repository, relative to its root.
const File = "testdata/prometheus-rules/rules.jsonl"

// Path returns the corpus file found by walking up from dir to the folder
// that holds File (the repository's root), or an error wrapping ErrAbsent.
func Path(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, filepath.FromSlash(File))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s above %s: %w", File, abs, ErrAbsent)
		}
	}
}

// Load reads every rule of the corpus file at path, in file order.
func Load(path string) ([]Rule, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrAbsent)
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return Read(f)
}

// Read parses corpus lines (one JSON rule per line) from r.
func Read(r io.Reader) ([]Rule, error) {
	var out []Rule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var rule Rule
		if err := json.Unmarshal(b, &rule); err != nil {
			return nil, fmt.Errorf("rule corpus line %d: %w", line, err)
		}
		if rule.Alert == "" {
			return nil, fmt.Errorf("rule corpus line %d: no alert name", line)
		}
		out = append(out, rule)
	}
	return out, sc.Err()
}

// Firing says how one rendered alert differs from other firings of its rule.
type Firing struct {
	// N numbers the firing; it picks the instance and the value.
	N int
	// Service, when set, is written as the alert's service label (the
	// identity's service); otherwise the alert carries only job, as most
	// exporters' alerts do.
	Service string
	// Severity overrides the rule's severity label when set.
	Severity string
	// Extra labels are added (and override the defaults).
	Extra map[string]string
	// StartsAt is the firing's start; zero means a fixed time plus N minutes.
	StartsAt time.Time
}

// Instance returns the instance label of firing n: a distinct host and port.
func Instance(n int) string {
	return fmt.Sprintf("10.%d.%d.%d:%d", (n/65536)%256, (n/256)%256, n%256, 9100+n%900)
}

// Value returns the sample value of firing n, a distinct non-integer number.
func Value(n int) string {
	return strconv.FormatFloat(float64(n%997)*1.37+0.5, 'f', -1, 64)
}

// Labels returns the labels of firing f of rule r.
func Labels(r Rule, f Firing) map[string]string {
	sev := r.Severity
	if f.Severity != "" {
		sev = f.Severity
	}
	l := map[string]string{
		"alertname": r.Alert,
		"severity":  sev,
		"instance":  Instance(f.N),
		"job":       r.Exporter,
	}
	if f.Service != "" {
		l["service"] = f.Service
	}
	for k, v := range f.Extra {
		l[k] = v
	}
	return l
}

// Alert returns firing f of rule r as one element of an Alertmanager
// webhook's alerts[] (status firing).
func Alert(r Rule, f Firing) map[string]any {
	labels := Labels(r, f)
	value := Value(f.N)
	start := f.StartsAt
	if start.IsZero() {
		start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(f.N) * time.Minute)
	}
	return map[string]any{
		"status": "firing",
		"labels": labels,
		"annotations": map[string]string{
			"summary":     Expand(r.Summary, labels, value),
			"description": Expand(r.Description, labels, value),
		},
		"startsAt":     start.Format(time.RFC3339Nano),
		"endsAt":       "0001-01-01T00:00:00Z",
		"generatorURL": "http://prometheus.example:9090/graph?g0.expr=" + strings.ReplaceAll(r.Alert, " ", "+"),
		"fingerprint":  fingerprint(labels),
	}
}

// Webhook returns an Alertmanager webhook (version 4, status firing) holding
// the given alerts, as one JSON document.
func Webhook(alerts ...map[string]any) ([]byte, error) {
	common := map[string]string{}
	if len(alerts) == 1 {
		common = alerts[0]["labels"].(map[string]string)
	}
	return json.Marshal(map[string]any{
		"receiver":          "openrecall",
		"status":            "firing",
		"alerts":            alerts,
		"groupLabels":       map[string]string{},
		"commonLabels":      common,
		"commonAnnotations": map[string]string{},
		"externalURL":       "http://alertmanager.example:9093",
		"version":           "4",
		"groupKey":          "{}:{}",
		"truncatedAlerts":   0,
	})
}

// fingerprint is Alertmanager's: FNV-1a-64 over the sorted label names and
// values, each followed by a 0xFF byte, as 16 hex digits.
func fingerprint(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	sort.Strings(names)
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= prime
		}
		h ^= 0xff
		h *= prime
	}
	for _, k := range names {
		add(k)
		add(labels[k])
	}
	return fmt.Sprintf("%016x", h)
}

var (
	action    = regexp.MustCompile(`\{\{-?\s*(.*?)\s*-?\}\}`)
	labelRef  = regexp.MustCompile(`\$labels\.([A-Za-z_][A-Za-z0-9_]*)`)
	allLabels = regexp.MustCompile(`^\$labels\s*$`)
)

// Expand renders a Prometheus annotation template with the given labels and
// value: {{ $value }} with any pipe gives the value, {{ $labels.X }} the
// label (or "<no value>"), {{ $labels }} the map text; other actions vanish.
func Expand(tmpl string, labels map[string]string, value string) string {
	return action.ReplaceAllStringFunc(tmpl, func(m string) string {
		body := action.FindStringSubmatch(m)[1]
		switch {
		case allLabels.MatchString(body):
			return mapText(labels)
		case labelRef.MatchString(body):
			name := labelRef.FindStringSubmatch(body)[1]
			if v, ok := labels[name]; ok {
				return v
			}
			return "<no value>"
		case strings.Contains(body, "$value"):
			return value
		}
		return ""
	})
}

// mapText prints labels as Go prints a map[string]string.
func mapText(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("map[")
	for i, k := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + ":" + labels[k])
	}
	b.WriteByte(']')
	return b.String()
}

// WriteQueue writes a queue of n Alertmanager webhooks to w, one JSON line
// each holding one alert: firing i of rule i mod len(rules), so every rule
// fires in turn and every firing has its own instance and value (the fixed
// corpus queue of make bench-analyze).
func WriteQueue(w io.Writer, rules []Rule, n int) error {
	if len(rules) == 0 {
		return errors.New("rule corpus queue: no rules")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for i := range n {
		line, err := Webhook(Alert(rules[i%len(rules)], Firing{N: i}))
		if err != nil {
			return fmt.Errorf("rule corpus queue: firing %d: %w", i, err)
		}
		if _, err := bw.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// LoadNear finds the corpus above dir (Path) and reads it (Load); an error
// wraps ErrAbsent when there is none.
func LoadNear(dir string) ([]Rule, error) {
	path, err := Path(dir)
	if err != nil {
		return nil, err
	}
	return Load(path)
}

// StormOptions shapes a storm queue (DESIGN §6a).
type StormOptions struct {
	// Firings is how many times each rule fires (about 30).
	Firings int
	// Span is the time the firings of one rule spread over (30 minutes).
	Span time.Duration
	// RiseEvery makes one firing of every RiseEvery-th rule that is not
	// critical (in the middle of its storm) fire at critical. 0 means none.
	RiseEvery int
	// Seed draws each firing's time within the span.
	Seed uint64
}

// StormFiring is one alert of a storm queue: the rule, the firing and
// whether its severity rose above the rule's.
type StormFiring struct {
	Rule   int
	Firing Firing
	Rise   bool
}

// Storm returns the firings of a storm queue: every rule fires
// opts.Firings times on distinct instances, at times drawn within
// opts.Span of one start, and the firings of all rules interleave in time
// order (ties in rule order).
func Storm(rules []Rule, opts StormOptions) []StormFiring {
	r := rand.New(rand.NewPCG(opts.Seed, 0x73746f726d))
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var out []StormFiring
	n := 0
	for i, rule := range rules {
		for k := range opts.Firings {
			n++
			f := StormFiring{Rule: i, Firing: Firing{N: n, StartsAt: start.Add(time.Duration(r.Int64N(int64(opts.Span))))}}
			if opts.RiseEvery > 0 && i%opts.RiseEvery == 0 && k == opts.Firings/2 && !strings.EqualFold(rule.Severity, "critical") {
				f.Rise = true
				f.Firing.Severity = "critical"
			}
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Firing.StartsAt.Before(out[b].Firing.StartsAt) })
	return out
}

// WriteStormQueue writes the storm queue of rules to w: one Alertmanager
// webhook per JSON line holding one alert, in time order.
func WriteStormQueue(w io.Writer, rules []Rule, opts StormOptions) error {
	if len(rules) == 0 {
		return errors.New("rule corpus storm queue: no rules")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, f := range Storm(rules, opts) {
		line, err := Webhook(Alert(rules[f.Rule], f.Firing))
		if err != nil {
			return fmt.Errorf("rule corpus storm queue: firing %d: %w", f.Firing.N, err)
		}
		if _, err := bw.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return bw.Flush()
}
