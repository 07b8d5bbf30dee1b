package eval

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/openrecall/openrecall"
)

// The security detections of the corpus (DESIGN §6a, §6b): Falco events
// (falcosidekick's webhook JSON) whose entity fields — process, parent
// process, command, user, image, namespace — the exceptions and the alert
// groups read.
const (
	// shareDetection is the alerts of benign detections that recur: the
	// analyst's decisions make memory propose an exception, which the
	// analyst approves.
	shareDetection = 0.04
	// shareNearMiss is the attacks that differ from an approved
	// exception in one match field, in severity or in critical DNA.
	shareNearMiss = 0.01
	// shareDetectionStorm is the alerts of detection storms: bursts of
	// detectionStormSize identical firings with one intruder's firing
	// inside.
	shareDetectionStorm = 0.0125
	// detectionStormSize is the firings of one detection storm, the
	// intruder's included.
	detectionStormSize = 15
	// nearMissAfter is how many benign firings of a detection come before
	// its first near miss: enough for five analyst decisions, the
	// proposal and its approval.
	nearMissAfter = 8
)

// falcoSpec is a Falco event before rendering.
type falcoSpec struct {
	rule     string
	priority string
	output   string
	tags     []string
	// fields are the event's output_fields, in order.
	fields [][2]string
}

// detection is a template for the firings of one Falco detection in one
// workload: the same rule, process, parent, user, image and namespace
// every time, and a command that changes from one firing to the next
// (command(r) draws it), unless the detection storms.
type detection struct {
	name     string
	rule     string
	priority string
	tags     []string
	ns       string
	owner    string
	image    string
	user     string
	process  string
	parent   string
	env      string
	note     string
	command  func(r *rand.Rand) string
	// intruderUser and intruderProcess are the entity values a near miss
	// or an intruder takes instead of the detection's.
	intruderUser    string
	intruderProcess string
	// otherEnv is the environment of the near miss that differs in
	// critical Alert DNA.
	otherEnv string
}

// benignDetections are the detections that recur benignly and earn an
// exception.
func benignDetections() []detection {
	return []detection{
		{
			name: "ci-runner-shell", rule: "Terminal shell in container", priority: "Notice",
			tags: []string{"maturity_stable", "container", "shell", "mitre_execution", "T1059"},
			ns:   "ci", owner: "gitlab-runner", image: "registry.gitlab.com/gitlab-org/gitlab-runner-helper",
			user: "runner", process: "sh", parent: "gitlab-runner-helper", env: "ci",
			note:         "the CI runner opens a shell in its build container for every job",
			command:      func(r *rand.Rand) string { return fmt.Sprintf("sh -c make test SHARD=%d", r.IntN(100000)) },
			intruderUser: "www-data", intruderProcess: "bash", otherEnv: "prod",
		},
		{
			name: "backup-reads-shadow", rule: "Read sensitive file untrusted", priority: "Warning",
			tags: []string{"maturity_stable", "host", "container", "filesystem", "mitre_credential_access", "T1555"},
			ns:   "ops", owner: "nightly-backup", image: "registry.local/ops/restic",
			user: "svc-backup", process: "restic", parent: "crond", env: "prod",
			note:         "the nightly backup reads /etc/shadow with the rest of /etc",
			command:      func(r *rand.Rand) string { return fmt.Sprintf("restic backup /etc --tag nightly-%d", r.IntN(100000)) },
			intruderUser: "root", intruderProcess: "cat", otherEnv: "staging",
		},
		{
			name: "vuln-scanner-nmap", rule: "Launch Suspicious Network Tool in Container", priority: "Notice",
			tags: []string{"maturity_incubating", "container", "network", "process", "mitre_discovery", "T1046"},
			ns:   "security", owner: "vuln-scanner", image: "registry.local/sec/scanner",
			user: "scanner", process: "nmap", parent: "python3", env: "prod",
			note: "the vulnerability scanner sweeps the internal ranges every hour",
			command: func(r *rand.Rand) string {
				return fmt.Sprintf("nmap -sV -T3 10.%d.%d.0/24", r.IntN(250), r.IntN(250))
			},
			intruderUser: "www-data", intruderProcess: "ncat", otherEnv: "staging",
		},
	}
}

// stormDetection is the detection that storms: the image builder
// installing its packages, the same command from the same user on every
// firing.
func stormDetection() detection {
	return detection{
		name: "image-builder-apk", rule: "Launch Package Management Process in Container", priority: "Error",
		tags: []string{"maturity_incubating", "container", "process", "software_mgmt", "mitre_persistence", "T1505"},
		ns:   "build", owner: "image-builder", image: "docker.io/library/alpine",
		user: "root", process: "apk", parent: "sh", env: "ci",
		note:         "the image builder installs its packages on every build",
		command:      func(*rand.Rand) string { return "apk add --no-cache git make" },
		intruderUser: "nobody", intruderProcess: "apt-get",
	}
}

// nearMiss is how a near miss differs from its approved exception.
type nearMiss int

const (
	missUser nearMiss = iota
	missProcess
	missSeverity
	missDNA
	nearMisses
)

func (m nearMiss) String() string {
	return [...]string{"another user", "another process", "more severe than the ceiling", "another environment (critical DNA)"}[m]
}

// firing returns one firing of d: benign, or changed as variant says
// (negative: unchanged).
func (g *generator) firing(d detection, kind Kind, variant nearMiss, command string) spec {
	user, process, env, priority := d.user, d.process, d.env, d.priority
	t := Truth{Family: d.name, Kind: kind, Decision: openrecall.DecisionKnownBenign, Note: d.note,
		DeadEnds: []string{"tuning the Falco rule by hand"}}
	switch kind {
	case KindExceptionNearMiss:
		switch variant {
		case missUser:
			user = d.intruderUser
		case missProcess:
			process = d.intruderProcess
		case missSeverity:
			priority = "Critical"
		case missDNA:
			env = d.otherEnv
		}
		t = Truth{Family: "near-miss:" + d.name, Kind: kind, Decision: openrecall.DecisionReal,
			Note:     "looks like " + d.name + " but " + variant.String() + ": an intrusion",
			DeadEnds: []string{"closing it with the approved exception for " + d.name}}
	case KindStormIntruder:
		if variant == missProcess {
			process = d.intruderProcess
		} else {
			user = d.intruderUser
		}
		t = Truth{Family: "intruder:" + d.name, Kind: kind, Decision: openrecall.DecisionReal,
			Note:     "an intruder inside the " + d.name + " storm: " + variant.String(),
			DeadEnds: []string{"closing it with the rest of the storm"}}
	}
	pod := g.pod(d.owner)
	output := fmt.Sprintf("%s (user=%s process=%s parent=%s command=%s container_id=%s image=%s)",
		d.rule, user, process, d.parent, command, g.hex(12), d.image)
	return spec{
		truth:   t,
		formats: []format{formatFalco},
		falco: &falcoSpec{rule: d.rule, priority: priority, output: output, tags: d.tags, fields: [][2]string{
			{"proc.name", process}, {"proc.pname", d.parent}, {"proc.cmdline", command}, {"user.name", user},
			{"container.image.repository", d.image}, {"k8s.ns.name", d.ns}, {"k8s.pod.name", pod},
			{"container.id", g.hex(12)}, {"environment", env},
		}},
	}
}

// detections draws n firings of the benign detections and m near misses,
// one ordered sequence per detection: its first nearMissAfter firings are
// benign (five analyst decisions, then memory's proposal), and its near
// misses come after, each variant in turn.
func (g *generator) detections(n, m int) [][]spec {
	ds := benignDetections()
	out := make([][]spec, len(ds))
	benign := make([][]spec, len(ds))
	for i := 0; i < n; i++ {
		d := ds[i%len(ds)]
		benign[i%len(ds)] = append(benign[i%len(ds)], g.firing(d, KindBenignDetection, -1, d.command(g.r)))
	}
	misses := make([][]spec, len(ds))
	for i := 0; i < m; i++ {
		d := ds[i%len(ds)]
		misses[i%len(ds)] = append(misses[i%len(ds)], g.firing(d, KindExceptionNearMiss, nearMiss((i/len(ds))%int(nearMisses)), d.command(g.r)))
	}
	for k := range ds {
		head := min(nearMissAfter, len(benign[k]))
		seq := append([]spec(nil), benign[k][:head]...)
		out[k] = append(seq, g.interleave(benign[k][head:], misses[k])...)
	}
	return out
}

// interleave merges b into a at random points, keeping the order of each.
func (g *generator) interleave(a, b []spec) []spec {
	out := make([]spec, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || (len(a) > 0 && g.r.IntN(len(a)+len(b)) < len(a)) {
			out, a = append(out, a[0]), a[1:]
			continue
		}
		out, b = append(out, b[0]), b[1:]
	}
	return out
}

// detectionStorms draws bursts of detectionStormSize firings of the
// storming detection, n alerts in all: identical but for the container,
// and one intruder's firing in the middle with another user (or, every
// other burst, another process).
func (g *generator) detectionStorms(n int) [][]spec {
	d := stormDetection()
	var out [][]spec
	for k := 0; n >= detectionStormSize; k++ {
		burst := make([]spec, detectionStormSize)
		for i := range burst {
			burst[i] = g.firing(d, KindDetectionStorm, -1, d.command(g.r))
		}
		v := missUser
		if k%2 == 1 {
			v = missProcess
		}
		burst[detectionStormSize/2] = g.firing(d, KindStormIntruder, v, d.command(g.r))
		out = append(out, burst)
		n -= detectionStormSize
	}
	return out
}

// insertOrdered places the specs of seq at random points of specs, in
// their order.
func (g *generator) insertOrdered(specs, seq []spec) []spec {
	return g.interleave(specs, seq)
}

// falcoEvent renders s as falcosidekick posts a Falco event.
func (g *generator) falcoEvent(s spec, uuid string, ts time.Time) ordered {
	f := s.falco
	fields := ordered{}
	for _, kv := range f.fields {
		fields = append(fields, pair{kv[0], kv[1]})
	}
	g.r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	return ordered{
		{"uuid", uuid},
		{"output", ts.Format("15:04:05.000000000") + ": " + f.priority + " " + f.output},
		{"priority", f.priority},
		{"rule", f.rule},
		{"time", ts.Format(time.RFC3339Nano)},
		{"source", "syscall"},
		{"hostname", "node-" + g.hex(4)},
		{"tags", f.tags},
		{"output_fields", fields},
	}
}

// uuid returns a random UUID-shaped id.
func (g *generator) uuid() string {
	return g.hex(8) + "-" + g.hex(4) + "-4" + g.hex(3) + "-8" + g.hex(3) + "-" + g.hex(12)
}
