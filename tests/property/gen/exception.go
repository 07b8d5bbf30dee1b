package gen

import (
	"fmt"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
)

// Variant is how one firing of an ExceptionRun differs from the detection
// analysts called benign (DESIGN §6b): each names the one thing changed.
type Variant int

// The variants, in the order VariantNames lists them.
const (
	VariantSame             Variant = iota // the same detection again: matches
	VariantLowerSeverity                   // less severe than the ceiling: matches
	VariantExtraEntity                     // one more entity field: matches
	VariantOtherRule                       // another rule: another identity
	VariantOtherService                    // another service: another identity
	VariantMatchValue                      // one match field with another value
	VariantMatchMissing                    // one match field missing
	VariantMoreSevere                      // more severe than the ceiling
	VariantUnknownSeverity                 // unknown severity: counts as critical
	VariantOtherEnvironment                // another environment: other critical DNA
	variantCount
)

// VariantNames names the variants.
func VariantNames() []string {
	return []string{"same", "lower severity", "extra entity", "other rule", "other service", "match value",
		"match missing", "more severe", "unknown severity", "other environment"}
}

// String names the variant.
func (v Variant) String() string { return VariantNames()[v] }

// Matches reports whether DESIGN §6b says a firing of this variant matches
// an exception made for the base detection with ceiling ceiling: identity,
// critical DNA and every match field equal, not more severe than the
// ceiling (unknown counts as critical). Written from the design, apart from
// the product's matcher.
func (v Variant) Matches(base, ceiling openrecall.Severity) bool {
	switch v {
	case VariantSame, VariantExtraEntity:
		return true
	case VariantLowerSeverity:
		return true
	case VariantUnknownSeverity:
		return ceiling == openrecall.SeverityCritical
	}
	return false
}

// ExceptionRun is one scenario of the exceptions' lifecycle: Memories + 5
// analysts' benign decisions on a security detection (rule, service,
// environment, entity fields, severity), then a firing that makes a
// proposal; a person approves it unless Approve is false (memory alone),
// with an expiry of ExpiryDays; then Variants fire, after the expiry when
// Later is 1, after a revocation when Later is 2.
type ExceptionRun struct {
	Rule, Service, Env int
	// Severity indexes the known severities, info to critical: the
	// benign detection's, so the ceiling.
	Severity int
	// Shared are the entity values every benign firing shares (user,
	// process, image); Drift the entity field that drifts between them
	// (never a match field), 0 for none.
	User, Process, Image, Drift int
	Memories                    int
	Decision                    int
	// Approve is 0 for a run where no person approves (memory alone).
	Approve int
	// Expiry is the approval's expiry in days, less one.
	Expiry int
	Later  int
	// Variants index the variants that fire.
	Variants []int
	// Workers is the variants' workers, less one.
	Workers int
}

// Approved reports whether a person approves the proposal.
func (r ExceptionRun) Approved() bool { return r.Approve != 0 }

// ExpiryDays is the approval's expiry in days.
func (r ExceptionRun) ExpiryDays() int { return r.Expiry + 1 }

// VariantList returns the variants that fire.
func (r ExceptionRun) VariantList() []Variant {
	out := make([]Variant, len(r.Variants))
	for i, v := range r.Variants {
		out[i] = Variant(v)
	}
	return out
}

var (
	exceptionRules    = []string{"Terminal shell in container", "Read sensitive file untrusted", "5710", "ET SCAN Nmap Scripting Engine"}
	exceptionServices = []string{"ci-runner", "admin-bastion", "payments"}
	exceptionEnvs     = []string{"prod", "staging", ""}
	exceptionUsers    = []string{"root", "runner", "admin", "svc-backup"}
	exceptionProcs    = []string{"sh", "bash", "whoami", "nmap"}
	exceptionImages   = []string{"docker.io/library/alpine", "ghcr.io/actions/runner", "registry.local/ops/tools"}
	knownSeverities   = []openrecall.Severity{openrecall.SeverityInfo, openrecall.SeverityLow, openrecall.SeverityMedium, openrecall.SeverityHigh, openrecall.SeverityCritical}
)

// Ceiling is the base detection's severity: the proposal's ceiling.
func (r ExceptionRun) Ceiling() openrecall.Severity { return knownSeverities[r.Severity] }

// BenignDecision is the analysts' decision.
func (r ExceptionRun) BenignDecision() openrecall.Decision {
	return benignDecisions[r.Decision%len(benignDecisions)]
}

// Entities are the entity fields every benign firing shares.
func (r ExceptionRun) Entities() map[string]string {
	return map[string]string{"user": exceptionUsers[r.User], "process": exceptionProcs[r.Process], "image": exceptionImages[r.Image]}
}

// Firing returns the n-th benign firing: its entity fields the shared ones,
// plus, unless Drift is 0, a parent process that takes Drift+1 values in
// turn (never equal across five or more memories).
func (r ExceptionRun) Firing(n int) openrecall.Alert {
	ents := r.Entities()
	if r.Drift > 0 {
		// Every memory's value is shared with some others and the
		// proposing firing, never with all of them.
		ents["parent_process"] = fmt.Sprintf("parent-%d", n%(r.Drift+1))
	}
	return openrecall.Alert{
		ID: fmt.Sprintf("det-%d", n), Format: "json", Sender: "falcosidekick", Rule: exceptionRules[r.Rule], Security: true,
		Service: exceptionServices[r.Service], Environment: exceptionEnvs[r.Env], Severity: r.Ceiling(), Status: openrecall.StatusFiring,
		Title: "detection " + exceptionRules[r.Rule], Entities: ents, Timestamp: Times()[n%len(Times())],
	}
}

// VariantFiring returns firing n changed as v says.
func (r ExceptionRun) VariantFiring(n int, v Variant) openrecall.Alert {
	a := r.Firing(n)
	a.ID = fmt.Sprintf("var-%d-%d", n, v)
	switch v {
	case VariantLowerSeverity:
		a.Severity = knownSeverities[max(r.Severity-1, 0)]
	case VariantExtraEntity:
		a.Entities["command"] = "extra"
	case VariantOtherRule:
		a.Rule = exceptionRules[(r.Rule+1)%len(exceptionRules)]
		a.Title = "detection " + a.Rule
	case VariantOtherService:
		a.Service = exceptionServices[(r.Service+1)%len(exceptionServices)]
	case VariantMatchValue:
		a.Entities["user"] = exceptionUsers[(r.User+1)%len(exceptionUsers)]
	case VariantMatchMissing:
		delete(a.Entities, "process")
	case VariantMoreSevere:
		if r.Severity+1 < len(knownSeverities) {
			a.Severity = knownSeverities[r.Severity+1]
		} else {
			a.Entities["image"] = "evil/other" // nothing is more severe than critical: change a match field instead
		}
	case VariantUnknownSeverity:
		a.Severity = openrecall.SeverityUnknown
	case VariantOtherEnvironment:
		a.Environment = exceptionEnvs[(r.Env+1)%len(exceptionEnvs)]
	}
	return a
}

// ExceptionRunGen generates exception scenarios: every variant is reached
// by construction, a person approves three times in four, and one run in
// four fires after the expiry or after a revocation.
func ExceptionRunGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ExceptionRun{}), map[string]gopter.Gen{
		"Rule": Index(len(exceptionRules), 0), "Service": Index(len(exceptionServices), 0), "Env": Index(len(exceptionEnvs), 0),
		"Severity": Index(len(knownSeverities), 0), "User": Index(len(exceptionUsers), 0), "Process": Index(len(exceptionProcs), 0),
		"Image": Index(len(exceptionImages), 0), "Drift": IntUpTo(2), "Memories": IntUpTo(3), "Decision": Index(len(benignDecisions), 0),
		"Approve": Index(4, 0), "Expiry": Index(60, 0), "Later": Index(3, 0.75),
		"Variants": gg.SliceOfN(6, Index(int(variantCount), 0)),
		"Workers":  Index(3, 0),
	})
}

// ValidExceptionRun reports whether r is a value ExceptionRunGen may give.
func ValidExceptionRun(r ExceptionRun) error {
	switch {
	case r.Rule < 0 || r.Rule >= len(exceptionRules), r.Service < 0 || r.Service >= len(exceptionServices), r.Env < 0 || r.Env >= len(exceptionEnvs):
		return fmt.Errorf("identity index out of range: %+v", r)
	case r.Severity < 0 || r.Severity >= len(knownSeverities):
		return fmt.Errorf("severity %d out of range", r.Severity)
	case r.User < 0 || r.User >= len(exceptionUsers), r.Process < 0 || r.Process >= len(exceptionProcs), r.Image < 0 || r.Image >= len(exceptionImages):
		return fmt.Errorf("entity index out of range: %+v", r)
	case r.Expiry < 0 || r.Expiry >= 60, r.Later < 0 || r.Later > 2, r.Workers < 0 || r.Workers > 2, r.Approve < 0 || r.Approve > 3:
		return fmt.Errorf("run parameter out of range: %+v", r)
	}
	for _, v := range r.Variants {
		if v < 0 || v >= int(variantCount) {
			return fmt.Errorf("variant %d out of range", v)
		}
	}
	return nil
}

// ProposalCase is memory for a security detection: N memories of its
// identity scored Score (below, at or above the strong threshold), Dissent
// of them deciding real, the rest Decision; the alert's and the memories'
// severities drawn from every severity, unknown included.
type ProposalCase struct {
	N, Dissent, Decision, Score, AlertSeverity, MemorySeverity int
}

// ProposalScores are the scores a ProposalCase draws from.
func ProposalScores() []float64 { return []float64{0.84, 0.85, 0.93, 1} }

// AllSeverities lists every severity, unknown and empty included.
func AllSeverities() []openrecall.Severity {
	return append(append([]openrecall.Severity{}, openrecall.Severities...), "")
}

// Decisions returns the case's memory decisions, in order.
func (c ProposalCase) Decisions() []openrecall.Decision {
	out := make([]openrecall.Decision, c.N)
	for i := range out {
		out[i] = benignDecisions[c.Decision%len(benignDecisions)]
		if i < c.Dissent {
			out[i] = openrecall.DecisionReal
		}
	}
	return out
}

// ProposalCaseGen generates proposal cases around the bypass threshold:
// 0 to 12 memories, dissent of 0 to 2 (none half the time).
func ProposalCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ProposalCase{}), map[string]gopter.Gen{
		"N": IntUpTo(12), "Dissent": Index(3, 0.5), "Decision": Index(len(benignDecisions), 0),
		"Score": Index(len(ProposalScores()), 0), "AlertSeverity": Index(len(AllSeverities()), 0),
		"MemorySeverity": Index(len(AllSeverities()), 0),
	})
}
