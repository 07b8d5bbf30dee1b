package gen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
)

// StormRule is one check a generated storm fires: a Prometheus-style rule
// sent as the product's own alert object, a Falco detection (an attack
// whose firings differ in the process that acted), or an alert without
// identity.
type StormRule struct {
	Name      string
	Service   string
	Title     string
	Attack    bool
	Anonymous bool
}

// StormRules are the checks of StormRunGen: two of one service (so only
// identity tells them apart), one of another, a Falco detection and an
// alert with no identity.
func StormRules() []StormRule {
	return []StormRule{
		{Name: "NodeFilesystemAlmostOutOfSpace", Service: "node-exporter", Title: "Filesystem on {host} has less than 5% space left"},
		{Name: "NodeFilesystemFilesFillingUp", Service: "node-exporter", Title: "Filesystem on {host} is predicted to run out of inodes"},
		{Name: "KubePodCrashLooping", Service: "checkout-api", Title: "Pod checkout-api on {host} is crash looping"},
		{Name: "Terminal shell in container", Service: "docker.io/library/ci-runner", Attack: true},
		{Name: "", Anonymous: true},
	}
}

// StormSeverities are the severities firings carry, the common one first;
// "" is none (unknown).
func StormSeverities() []string { return []string{"warning", "critical", "info", ""} }

// StormProcesses are the processes a Falco firing names: the CI runners'
// shells, and an intruder's.
func StormProcesses() []string { return []string{"sh", "bash", "nc"} }

// StormGaps are the minutes between a firing and the one before it: most
// within the 1 h window, some past it (a late firing), one earlier (out of
// order), and a day and an hour either way (a firing out of order by more
// than the 24 windows after which a group expires, and a day's silence).
func StormGaps() []int { return []int{1, 0, 5, 20, 59, 61, 90, -3, -1500, 1500} }

// StormFiring is one firing of a generated storm.
type StormFiring struct {
	Rule    int // StormRules index
	Sev     int // StormSeverities index
	Gap     int // StormGaps index: the minutes after the previous firing
	Host    int
	Process int // StormProcesses index, for the Falco detection
}

// StormRun is a queue of firings of a few rules, with a memory that may
// vouch for one of them, an optional run budget and a worker count.
type StormRun struct {
	Firings []StormFiring
	// Vouch, when positive, seeds six unanimous known_benign memories of
	// StormRules()[Vouch−1] at warning, so memory bypasses its heads.
	Vouch   int
	Budget  openrecall.NanoUSD
	Workers int
}

// StormStart is the time of a storm's first firing.
func StormStart() time.Time { return time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC) }

// Times returns each firing's own time, in queue order.
func (s StormRun) Times() []time.Time {
	t := StormStart()
	out := make([]time.Time, len(s.Firings))
	for i, f := range s.Firings {
		if i > 0 {
			t = t.Add(time.Duration(StormGaps()[f.Gap%len(StormGaps())]) * time.Minute)
		}
		out[i] = t
	}
	return out
}

// Queue renders the storm as JSON Lines.
func (s StormRun) Queue() string {
	var b strings.Builder
	for i, t := range s.Times() {
		b.WriteString(s.Firings[i].Line(i, t))
		b.WriteByte('\n')
	}
	return b.String()
}

// Line renders firing i at time t.
func (f StormFiring) Line(i int, t time.Time) string {
	r := StormRules()[f.Rule%len(StormRules())]
	sev := StormSeverities()[f.Sev%len(StormSeverities())]
	host := fmt.Sprintf("node-%d", f.Host)
	var obj map[string]any
	switch {
	case r.Attack:
		priority := map[string]string{"warning": "Warning", "critical": "Critical", "info": "Informational", "": "Notice"}[sev]
		proc := StormProcesses()[f.Process%len(StormProcesses())]
		obj = map[string]any{
			"uuid": fmt.Sprintf("storm-%04d-5d0b-4f4e-9c3b-7a0f62c1d8e4", i), "priority": priority, "rule": r.Name,
			"output": fmt.Sprintf("Notice A shell was spawned in a container with an attached terminal (user=root process=%s container_image=docker.io/library/ci-runner)", proc),
			"time":   t.Format(time.RFC3339Nano), "source": "syscall", "hostname": host,
			"tags": []string{"T1059", "container", "mitre_execution", "shell"},
			"output_fields": map[string]any{
				"container.image.repository": "docker.io/library/ci-runner", "proc.name": proc, "user.name": "root",
				"container.id": fmt.Sprintf("%012x", f.Host+1),
			},
		}
	case r.Anonymous:
		obj = map[string]any{"id": fmt.Sprintf("storm-%d", i), "text": fmt.Sprintf("%d %d", f.Host, i), "timestamp": t.Format(time.RFC3339)}
	default:
		obj = map[string]any{
			"id": fmt.Sprintf("storm-%d", i), "title": strings.ReplaceAll(r.Title, "{host}", host), "severity": sev,
			"text":      "threshold crossed on " + host,
			"labels":    map[string]string{"alertname": r.Name, "service": r.Service, "instance": host + ":9100"},
			"timestamp": t.Format(time.RFC3339),
		}
		if sev == "" {
			delete(obj, "severity")
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("gen: marshal storm firing: %v", err))
	}
	return string(b)
}

// SeedLine is a firing of StormRules()[Vouch−1] at warning, whose identity
// and fingerprint the vouching memories carry.
func (s StormRun) SeedLine() string {
	return StormFiring{Rule: s.Vouch - 1}.Line(-1, StormStart())
}

// StormRunGen generates storms: up to 40 firings, most of one rule at its
// usual severity, with severity rises, other rules and the Falco detection
// interleaved, gaps past the window and out of order; memory vouching for
// a plain rule one time in two; a run budget sometimes; 1 to 4 workers.
func StormRunGen() gopter.Gen {
	firing := gg.Struct(reflect.TypeOf(StormFiring{}), map[string]gopter.Gen{
		"Rule":    Index(len(StormRules()), 0.5),
		"Sev":     Index(len(StormSeverities()), 0.7),
		"Gap":     Index(len(StormGaps()), 0.5),
		"Host":    IntUpTo(30),
		"Process": Index(len(StormProcesses()), 0.6),
	})
	return gg.Struct(reflect.TypeOf(StormRun{}), map[string]gopter.Gen{
		"Firings": SliceUpTo(40, firing, reflect.TypeOf(StormFiring{})),
		"Vouch":   Index(4, 0.5),
		"Budget":  Of(Budgets(), 0.7),
		"Workers": gg.IntRange(1, 4),
	})
}
