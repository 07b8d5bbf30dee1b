package property

import (
	"fmt"
	"maps"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// securitySenderProperties are the laws of issue 32's security senders:
// severity follows the vendor's scale, a closed detection is never a
// firing, and falcosidekick's event reads the same on both of its paths.
func securitySenderProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P110_security_sender_severity_monotonic",
			"A security sender's severity follows the vendor's documented scale (DESIGN §3: a value the sender documents is never left unknown): for two values of the scale — Wazuh's rule levels 0–16, Security Hub's labels and normalized scores, Sentinel's, Defender XDR's, CrowdStrike's names and 1–5, SentinelOne's confidence, Datadog's signal statuses, SecOps' rule severities, each written in the test from the vendor's documentation in the vendor's order — neither maps to unknown and the later is never less severe than the earlier.",
			"ScalePairGen", gen.ScalePairGen(), checkScalePair,
			pbt.PinFunc("every pair of every vendor scale, and no scale flat", func() error {
				for si, s := range gen.VendorScales() {
					for a := range s.Values {
						for b := range s.Values {
							if err := checkScalePair(gen.ScalePair{Scale: si, A: a, B: b}); err != nil {
								return err
							}
						}
					}
					sd, ok := sender.Lookup(s.Sender)
					if !ok {
						return fmt.Errorf("no sender %s", s.Sender)
					}
					if lo, hi := severityRank(sd.Severity(s.Values[0])), severityRank(sd.Severity(s.Values[len(s.Values)-1])); hi <= lo {
						return fmt.Errorf("%s: the scale %v maps flat (%d to %d)", s.Sender, s.Values, lo, hi)
					}
				}
				return nil
			}),
			pbt.Classify(func(p gen.ScalePair) []string {
				s, a, b := p.Of()
				labels := []string{s.Sender}
				if a != b {
					labels = append(labels, "two values")
				}
				return labels
			}),
			pbt.Cover("two values", 50),
		),
		pbt.ForAll("P111_security_sender_closed_never_firing",
			"A security detection the vendor says is closed is never a firing (DESIGN §3: a recovery is a notice): any fixture of Security Hub, Sentinel, Defender XDR, SentinelOne or Datadog Security Signals with its status field set to a closing value the vendor documents (RESOLVED, SUPPRESSED, ARCHIVED; Closed, Resolved, Dismissed; resolved; archived) reads as resolved, not triaged; liveness: the same fixture with the vendor's open value (NEW, ACTIVE, New, new, unresolved, open) reads as firing.",
			"StatusCaseGen", gen.StatusCaseGen(), checkStatusCase,
			pbt.PinFunc("every fixture with every closing and the open value", func() error {
				for ri, r := range gen.StatusRules() {
					for fi := range 8 {
						for vi := range len(r.Closed) {
							for _, open := range []bool{false, true} {
								if err := checkStatusCase(gen.StatusCase{Rule: ri, Fixture: fi, Value: vi, Open: open}); err != nil {
									return err
								}
							}
						}
					}
				}
				return nil
			}),
			pbt.Classify(func(c gen.StatusCase) []string {
				if c.Open {
					return []string{"open"}
				}
				return []string{"closed"}
			}),
			pbt.Cover("closed", 30), pbt.Cover("open", 30),
		),
		pbt.ForAll("P112_falco_entities_same_on_alertmanager_path",
			"falcosidekick's event reads the same on both of its paths (DESIGN §3, §6b: exceptions match on entities): a firing of any public corpus rule (Falco's and Sigma's) delivered by falcosidekick's webhook and by its Alertmanager output — as Alertmanager's webhook or as the alerts posted to /api/v2/alerts, output fields as labels with falcosidekick's label names — has the same entity fields, service and severity on both, and both are security detections.",
			"FalcoPathGen", gen.FalcoPathGen(), checkFalcoPath,
			pbt.PinFunc("a firing of the first and last rules through both forwarded forms", func() error {
				n := len(gen.CorpusRules())
				if n == 0 {
					return fmt.Errorf("the detection corpus is absent")
				}
				for _, p := range []gen.FalcoPath{{Rule: 0}, {Rule: n - 1, Postable: true}, {Rule: n / 2, Firing: 3}} {
					if err := checkFalcoPath(p); err != nil {
						return err
					}
				}
				return nil
			}),
			pbt.Classify(func(p gen.FalcoPath) []string {
				if p.Postable {
					return []string{"postable alerts"}
				}
				return []string{"alertmanager webhook"}
			}),
			pbt.Cover("postable alerts", 25), pbt.Cover("alertmanager webhook", 25),
		),
	}
}

// severityRank orders severities, info 0 … critical 4; unknown -1.
func severityRank(s openrecall.Severity) int {
	switch s {
	case openrecall.SeverityCritical:
		return 4
	case openrecall.SeverityHigh:
		return 3
	case openrecall.SeverityMedium:
		return 2
	case openrecall.SeverityLow:
		return 1
	case openrecall.SeverityInfo:
		return 0
	}
	return -1
}

func checkScalePair(p gen.ScalePair) error {
	s, a, b := p.Of()
	if a > b {
		a, b = b, a
	}
	sd, ok := sender.Lookup(s.Sender)
	if !ok || sd.Severity == nil {
		return fmt.Errorf("sender %s has no severity mapping", s.Sender)
	}
	lo, hi := sd.Severity(s.Values[a]), sd.Severity(s.Values[b])
	switch {
	case severityRank(lo) < 0 || severityRank(hi) < 0:
		return fmt.Errorf("%s: documented values %q → %s, %q → %s: unknown", s.Sender, s.Values[a], lo, s.Values[b], hi)
	case severityRank(hi) < severityRank(lo):
		return fmt.Errorf("%s: %q (%s) is later in the vendor's scale than %q (%s) but less severe", s.Sender, s.Values[b], hi, s.Values[a], lo)
	}
	return nil
}

func checkStatusCase(c gen.StatusCase) error {
	r, name, payload, value, err := c.Of()
	if err != nil {
		return err
	}
	recs, err := intake.ParseBytes(payload, intake.Options{})
	if err != nil {
		return fmt.Errorf("%s/%s: %v", r.Sender, name, err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s/%s: no record", r.Sender, name)
	}
	for _, rec := range recs {
		if rec.Err != nil {
			return fmt.Errorf("%s/%s: rejected: %v", r.Sender, name, rec.Err)
		}
		a := rec.Alert
		if a.Sender != r.Sender {
			return fmt.Errorf("%s/%s with status %q: read by %q", r.Sender, name, value, a.Sender)
		}
		if c.Open {
			if a.Status != openrecall.StatusFiring {
				return fmt.Errorf("liveness: %s/%s with the open status %q reads as %s, want firing", r.Sender, name, value, a.Status)
			}
			continue
		}
		if a.Status == openrecall.StatusFiring || openrecall.Triaged(a.Status) {
			return fmt.Errorf("%s/%s closed (%q) reads as %s: a firing", r.Sender, name, value, a.Status)
		}
	}
	return nil
}

func checkFalcoPath(p gen.FalcoPath) error {
	key, webhook, forwarded, err := p.Of()
	if err != nil {
		return err
	}
	read := func(b []byte) (openrecall.Alert, error) {
		recs, err := intake.ParseBytes(b, intake.Options{})
		if err != nil {
			return openrecall.Alert{}, err
		}
		if len(recs) != 1 || recs[0].Err != nil {
			return openrecall.Alert{}, fmt.Errorf("%d records: %+v", len(recs), recs)
		}
		return recs[0].Alert, nil
	}
	a, err := read(webhook)
	if err != nil {
		return fmt.Errorf("%s webhook: %v", key, err)
	}
	b, err := read(forwarded)
	if err != nil {
		return fmt.Errorf("%s forwarded: %v", key, err)
	}
	switch {
	case !maps.Equal(a.Entities, b.Entities):
		return fmt.Errorf("%s: entities %v on the webhook, %v through Alertmanager (%s)", key, a.Entities, b.Entities, b.Format)
	case a.Service != b.Service:
		return fmt.Errorf("%s: service %q on the webhook, %q through Alertmanager (%s)", key, a.Service, b.Service, b.Format)
	case a.Severity != b.Severity:
		return fmt.Errorf("%s: severity %s on the webhook, %s through Alertmanager (%s)", key, a.Severity, b.Severity, b.Format)
	case !a.Security || !b.Security:
		return fmt.Errorf("%s: security %v on the webhook, %v through Alertmanager", key, a.Security, b.Security)
	}
	return nil
}
