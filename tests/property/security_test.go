package property

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
)

// securityProperties are the rules of security detections (DESIGN §4:
// "Security detections are attacks", "Environment", "Identity, refined")
// and the guard's promise for them (§6).
func securityProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P52_attack_technique_never_bypassed",
			"An alert carrying any ATT&CK technique (sub-techniques too) or tactic of the embedded table, written in any form (T1059, T1059.001, attack.t1059.001, T1562-impair-defenses, TA0002, attack.execution, attack.privilege-escalation, mitre_execution, a tactic-name field \"Execution\") in any field (title, text, a label or annotation value, a tags label, the rule), has the attack_pattern of the first tactic in DESIGN §4's order among those declared (a tag, a tactic name, any form under a key that says it holds ATT&CK), else among those referenced, and is never bypassed nor sent to the cheap tier through the whole workflow, even when SQLite memory holds 5 to 12 unanimous benign strong memories of its identity and fingerprint.",
			"AttackAlertGen", gen.AttackAlertGen(), func(c gen.AttackAlert) error {
				a := c.Alert()
				want := c.WantPattern()
				if got := ex.Extract(a).AttackPattern; got != want {
					return fmt.Errorf("pattern: attack_pattern %q, want %q, for title %q, text %q, rule %q, labels %q, annotations %q", got, want, a.Title, a.Text, a.Rule, a.Labels, a.Annotations)
				}
				return neverBypassed(ex, c.Memory, []openrecall.Alert{a}, nil)
			},
			pbt.Pin("a tactic name in a tactic label", gen.AttackAlert{Refs: []gen.AttackRef{{Item: 3, Form: 4}}}),
			pbt.Pin("a technique in a tags label", gen.AttackAlert{Refs: []gen.AttackRef{{Item: 20, Field: 4}}}),
			pbt.Classify(func(c gen.AttackAlert) []string {
				var l []string
				for _, r := range c.Refs {
					_, form := r.Written()
					l = append(l, "form "+form, "field "+r.FieldName())
					if it := gen.AttackItems()[r.Item]; !it.Tactic() && strings.Contains(it.ID, ".") {
						l = append(l, "sub-technique")
					}
				}
				if len(c.Refs) > 1 {
					l = append(l, "several references")
				}
				return l
			}),
			pbt.Cover("form technique id", 5), pbt.Cover("form sigma tag", 5), pbt.Cover("form tactic id", 3), pbt.Cover("form falco tag", 3), pbt.Cover("form sigma tactic tag with hyphens", 3),
			pbt.Cover("form tactic name field", 3), pbt.Cover("field label value", 5), pbt.Cover("field tags label", 5), pbt.Cover("field rule", 5),
			pbt.Cover("field annotation value", 5), pbt.Cover("sub-technique", 10), pbt.Cover("several references", 20),
			pbt.Expensive(2),
		),
		pbt.ForAll("P53_security_sender_never_bypassed",
			"An alert of a security detection sender (each security sender's fixtures, or labels source/sender/tool/... naming falco, wazuh, suricata, ...) is never bypassed and never sent to the cheap tier, whatever memory holds (5 to 12 unanimous benign strong memories of its identity and fingerprint); liveness: the same alert with Security false and no attack evidence is bypassed under the same memory.",
			"SecurityAlertGen", gen.SecurityAlertGen(), func(s gen.SecurityAlert) error {
				sec, plain, err := securityPair(ex, s)
				if err != nil {
					return err
				}
				for _, a := range sec {
					if !a.Security {
						return fmt.Errorf("intake: alert %q of %s is not read as a security detection", a.Title, origin(s))
					}
				}
				return neverBypassed(ex, s.Memory, sec, plain)
			},
			pbt.PinFunc("every security sender's fixtures", func() error {
				n := len(gen.SecurityTools())
				for i := range gen.SecurityFixtures() {
					if err := func() error {
						s := gen.SecurityAlert{Origin: n + i}
						sec, plain, err := securityPair(ex, s)
						if err != nil {
							return err
						}
						return neverBypassed(ex, s.Memory, sec, plain)
					}(); err != nil {
						return err
					}
				}
				return nil
			}),
			pbt.Classify(func(s gen.SecurityAlert) []string {
				var l []string
				if _, plain, _ := securityPair(ex, s); plain != nil {
					l = append(l, "liveness checked")
				}
				if fx, ok := s.Fixture(); ok {
					return append(l, "fixture", "fixture "+fx.Sender)
				}
				return append(l, "tool label", "tool label "+gen.SecurityToolLabels()[s.Label])
			}),
			pbt.Cover("fixture", 30), pbt.Cover("tool label", 30), pbt.Cover("liveness checked", 55),
			pbt.Expensive(3),
		),
		pbt.ForAll("P54_detection_invariant_under_host_user_pid_address_time",
			"Changing only the host, user, pid, addresses (IPv4 or IPv6, ports) or timestamps of a security detection (a security sender's fixture, or a detection corpus rule rendered as falcosidekick, Elastic Security or Alertmanager delivers it) changes neither its identity nor its Alert DNA.",
			"DetectionChangeGen", gen.DetectionChangeGen(), func(c gen.DetectionChange) error {
				d := c.Detection()
				before, err := intake.ParseBytes(d.Payload, intake.Options{})
				if err != nil {
					return fmt.Errorf("setup: %s: %v", d.Name, err)
				}
				changed := c.Changed()
				after, err := intake.ParseBytes(changed, intake.Options{})
				if err != nil {
					return fmt.Errorf("intake: the changed %s is refused: %v\n%s", d.Name, err, changed)
				}
				if len(before) != len(after) {
					return fmt.Errorf("intake: %s gave %d records, changed %d", d.Name, len(before), len(after))
				}
				for i := range before {
					a, b := before[i].Alert, after[i].Alert
					if (before[i].Err == nil) != (after[i].Err == nil) {
						return fmt.Errorf("intake: record %d of %s: %v, changed %v", i, d.Name, before[i].Err, after[i].Err)
					}
					if ia, ib := ex.Identify(a), ex.Identify(b); ia != ib {
						return fmt.Errorf("identity: %s: %s became %s when only its host, user, pid, addresses or time changed (title %q → %q)", d.Name, ia, ib, a.Title, b.Title)
					}
					if fa, fb := ex.Extract(a), ex.Extract(b); fa != fb {
						return fmt.Errorf("dna: %s: %s became %s when only its host, user, pid, addresses or time changed (text %q → %q)", d.Name, fa, fb, a.Text, b.Text)
					}
				}
				return nil
			},
			pbt.Classify(func(c gen.DetectionChange) []string {
				d := c.Detection()
				kind := "corpus firing"
				if c.Base < len(gen.SecurityFixtures()) {
					kind = "fixture"
				}
				l := []string{kind}
				if string(c.Changed()) != string(d.Payload) {
					l = append(l, "payload changed")
				}
				return l
			}),
			pbt.Found("a Splunk ES notable fired for user postgres took dependency_pattern=database from its title, rule_title with the event's $user$ expanded (fixed: the title is the rule, rule_title opens the evidence text)",
				gen.DetectionChange{Base: 18, User: 1}),
			pbt.Cover("payload changed", 60), pbt.Cover("fixture", 30), pbt.Cover("corpus firing", 30),
		),
		pbt.ForAll("P55_environment_invariant_under_paths_and_hostnames",
			"Environment is invariant under paths and host names that hold dev, prod or staging (/dev/tcp/1.2.3.4/80, /dev/shm/x, gke-prod-pool-1, worker-3.prod.k8s.local, dev-box.staging.internal, stage_runner, …) inserted into the title, text, annotations and labels that do not name an environment; liveness: a whole word (\"in prod\", \"production\", \"(staging)\") in the text of an alert without another environment source still sets it.",
			"EnvCaseGen", gen.EnvCaseGen(), func(c gen.EnvCase) error {
				without, with := readOne(c.Alert(false, false)), readOne(c.Alert(true, false))
				if got, want := ex.Extract(with).Environment, ex.Extract(without).Environment; got != want {
					return fmt.Errorf("environment: %q with the paths and host names, %q without, for title %q, text %q, labels %q, annotations %q", got, want, with.Title, with.Text, with.Labels, with.Annotations)
				}
				if c.EnvSource() != "none" {
					return nil
				}
				live := readOne(c.Alert(true, true))
				if got, want := ex.Extract(live).Environment, gen.EnvPhrases()[c.Phrase][1]; got != want {
					return fmt.Errorf("liveness: environment %q, want %q from the whole word in text %q", got, want, live.Text)
				}
				return nil
			},
			pbt.Pin("a /dev/tcp reverse shell", gen.EnvCase{Inserts: []gen.EnvInsert{{Where: 1}}}),
			pbt.Classify(func(c gen.EnvCase) []string {
				l := []string{"source " + c.EnvSource()}
				for _, in := range c.Inserts {
					l = append(l, "in "+gen.EnvFields()[in.Where])
				}
				return l
			}),
			pbt.Cover("source none", 40), pbt.Cover("in text", 15), pbt.Cover("in title", 15), pbt.Cover("in annotation description", 10),
		),
	}
}

// origin names where a security alert comes from.
func origin(s gen.SecurityAlert) string {
	if fx, ok := s.Fixture(); ok {
		return fx.Sender + "/" + fx.Name
	}
	return fmt.Sprintf("label %s=%q", gen.SecurityToolLabels()[s.Label], s.Tool())
}

// securityPair reads a security alert through intake and returns its alerts
// and its plain twin: the generated alert with its tool label naming
// prometheus, or a fixture's first alert with Security false, no text, no
// annotations, and only the labels that carry no attack evidence (nil when
// its title or rule still names an attack).
func securityPair(ex *fingerprint.Extractor, s gen.SecurityAlert) ([]openrecall.Alert, *openrecall.Alert, error) {
	var body []byte
	fx, isFixture := s.Fixture()
	if isFixture {
		body = fx.Payload
	} else {
		body = s.Record(s.Tool())
	}
	recs, err := intake.ParseBytes(body, intake.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("setup: %s: %v", origin(s), err)
	}
	var sec []openrecall.Alert
	for _, r := range recs {
		if r.Err == nil && openrecall.Triaged(r.Alert.Status) {
			sec = append(sec, r.Alert)
		}
	}
	if len(sec) == 0 {
		return nil, nil, nil
	}
	var plain openrecall.Alert
	if !isFixture {
		recs, err := intake.ParseBytes(s.Record("prometheus"), intake.Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			return nil, nil, fmt.Errorf("setup: plain twin of %s: %v", origin(s), err)
		}
		plain = recs[0].Alert
	} else {
		plain = sec[0]
		plain.Security, plain.Text, plain.Annotations, plain.ID = false, "", nil, plain.ID+"-plain"
		labels := map[string]string{}
		for k, v := range plain.Labels {
			probe := openrecall.Alert{Title: "x", Labels: map[string]string{k: v}}
			if !ex.Extract(probe).HasAttack() && !strings.Contains(strings.ToLower(k), "tactic") {
				labels[k] = v
			}
		}
		plain.Labels = labels
		if ex.Extract(plain).HasAttack() || plain.Security {
			return sec, nil, nil
		}
	}
	return sec, &plain, nil
}

// readOne reads an alert as a JSON Lines record through intake.
func readOne(a openrecall.Alert) openrecall.Alert {
	if a.Title == "" && a.Text == "" && len(a.Labels) == 0 {
		return a
	}
	recs, err := intake.ParseBytes([]byte(gen.JSONLine(a, "")+"\n"), intake.Options{})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		panic(fmt.Sprintf("readOne: %v %+v", err, recs))
	}
	return recs[0].Alert
}

// neverBypassed retains mem's unanimous benign memories for every alert
// (and for the plain twin) in one SQLite store, runs each through the real
// workflow, and checks that memory vouched (a benign proposal of every
// strong match), that no security alert is bypassed or sent to the cheap
// tier, and that the plain twin, when there is one, is bypassed.
func neverBypassed(ex *fingerprint.Extractor, mem gen.BenignMemory, alerts []openrecall.Alert, plain *openrecall.Alert) error {
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		all := append([]openrecall.Alert(nil), alerts...)
		if plain != nil {
			all = append(all, *plain)
		}
		for i, a := range all {
			for _, inc := range mem.Incidents(fmt.Sprintf("alert-%d", i), ex.Identify(a), ex.Extract(a)) {
				if _, _, err := ss[0].Retain(ctx, inc); err != nil {
					return fmt.Errorf("setup: retain: %v", err)
				}
			}
		}
		wf, _, err := newWorkflow(ex, ss[0], nil)
		if err != nil {
			return err
		}
		for i, a := range all {
			r := wf.Analyze(ctx, a)
			isPlain := plain != nil && i == len(all)-1
			if r.Triage.StrongCount < min(mem.N(), triage.DefaultConfig().RecallLimit) || r.Triage.ConsistentCount != r.Triage.StrongCount || r.Triage.Decision != mem.BenignDecision() {
				return fmt.Errorf("setup: memory did not vouch for %q (%s, %s): %d strong, %d consistent, proposal %q", a.Title, r.Identity, r.Fingerprint, r.Triage.StrongCount, r.Triage.ConsistentCount, r.Triage.Decision)
			}
			if isPlain {
				if !r.Bypassed {
					return fmt.Errorf("liveness: the plain twin %q (%s) with %d unanimous %s memories is not bypassed: %s", a.Title, r.Fingerprint, mem.N(), mem.BenignDecision(), r.Guard.Reason)
				}
				continue
			}
			if r.Bypassed || r.Guard.Bypass {
				return fmt.Errorf("bypass: %q (security %v, %s) bypassed on %d unanimous %s memories: %s", a.Title, a.Security, r.Fingerprint, mem.N(), mem.BenignDecision(), r.Guard.Reason)
			}
			if !r.Fingerprint.HasAttack() {
				return fmt.Errorf("attack: %q (security %v) has no attack_pattern: %s", a.Title, a.Security, r.Fingerprint)
			}
			for _, s := range r.Steps {
				if s.Tier == openrecall.TierCheap {
					return fmt.Errorf("cheap tier: %q (%s) was sent to the cheap tier: %s", a.Title, r.Fingerprint, s.Reason)
				}
			}
			if !r.Triage.RequiresHumanApproval {
				return fmt.Errorf("approval: a benign proposal on %q (%s) does not require a person", a.Title, r.Fingerprint)
			}
		}
		return nil
	})
}
