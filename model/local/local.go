package local

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	openrecall "github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
	"github.com/openrecall/openrecall/routing"
)

// Confidences the local analyst answers with.
const (
	ConfidenceAttack         = 0.9 // strong: an attack pattern is a real security case
	ConfidenceProdNoMemory   = 0.7 // strong: critical/high severity in prod without memory
	ConfidenceUnsure         = 0.5 // strong: escalated with hypotheses
	ConfidenceCheapBenign    = 0.7 // cheap: the triage benign decision
	ConfidenceCheapEscalated = 0.4 // cheap: anything else (below the default gate)
)

// Model is the local analyst for one tier. It holds no mutable state and is
// safe for concurrent use.
type Model struct {
	name   string
	priced string
	strong bool
}

// NewCheap returns the cheap-tier analyst, named "local-cheap" and priced as
// gpt-4o-mini.
func NewCheap() *Model { return &Model{name: "local-cheap", priced: "gpt-4o-mini"} }

// NewStrong returns the strong-tier analyst, named "local-strong" and priced
// as gpt-4o.
func NewStrong() *Model { return &Model{name: "local-strong", priced: "gpt-4o", strong: true} }

// Name returns the model's name, "local-cheap" or "local-strong".
func (m *Model) Name() string { return m.name }

// PricedAs returns the name of the model whose price the local model's calls
// are charged at.
func (m *Model) PricedAs() string { return m.priced }

// Complete answers one request written by routing.BuildPrompt with a JSON
// analysis of at most req.MaxTokens estimated tokens (0: no cap). Response.Live
// is always false. It fails when the prompt carries no case file or the cap
// is too small for even a bare answer.
func (m *Model) Complete(ctx context.Context, req routing.Request) (routing.Response, error) {
	if err := ctx.Err(); err != nil {
		return routing.Response{}, err
	}
	var c routing.CaseFile
	if req.Case != nil {
		// The case file the prompt carries, already decoded (P43).
		c = *req.Case
	} else {
		var err error
		if c, err = routing.ParseCaseFile(req.Prompt); err != nil {
			return routing.Response{}, fmt.Errorf("%s: %w", m.name, err)
		}
	}
	a := m.Analyse(c)
	text, err := fit(a, req.MaxTokens)
	if err != nil {
		return routing.Response{}, fmt.Errorf("%s: %w", m.name, err)
	}
	return routing.Response{
		Text:             text,
		PromptTokens:     routing.EstimatePromptTokens(req),
		CompletionTokens: routing.EstimateTokens(text),
		Live:             false,
		Model:            m.priced,
	}, nil
}

// Analyse returns the analysis of one case file, untrimmed. It is
// deterministic and reads no free text to decide.
func (m *Model) Analyse(c routing.CaseFile) openrecall.Analysis {
	fp := c.FingerprintOf()
	d, conf, why, fromMemory := m.decide(c, fp)
	tpl := plan(c, fp)
	a := openrecall.Analysis{
		Decision:   d,
		Confidence: conf,
		Summary:    why,
		Hypotheses: tpl.hypotheses,
		Verify:     tpl.verify,
		NextSteps:  append(decisionSteps(d, c, fromMemory), tpl.next...),
		SkipPaths:  routing.SkipPaths(c.Memories),
		Model:      m.name,
		Live:       false,
	}
	if len(a.SkipPaths) == 0 {
		a.SkipPaths = nil
	}
	a.CitedMemory = cited(c, fromMemory)
	return a
}

// decide picks the decision, its confidence and a one-line reason.
func (m *Model) decide(c routing.CaseFile, fp openrecall.Fingerprint) (openrecall.Decision, float64, string, bool) {
	var t routing.CaseTriage
	if c.Triage != nil {
		t = *c.Triage
	}
	proposed := openrecall.Decision(t.Decision)
	memoryVouches := t.StrongCount >= 1 && proposed.Retainable()
	severity := openrecall.Severity(c.Alert.Severity)
	env := fp.Environment
	if env == "" {
		env = c.Alert.Environment
	}
	if !m.strong {
		switch {
		case fp.HasAttack():
			return openrecall.DecisionEscalated, ConfidenceCheapEscalated,
				"Security signal (" + fp.AttackPattern + "): the cheap analyst does not judge security cases.", false
		case memoryVouches && proposed.Benign() && !criticalOrUnknown(severity):
			return proposed, ConfidenceCheapBenign,
				fmt.Sprintf("Memory says %s (%d of %d strong matches); nothing in the fingerprint contradicts it.", proposed, t.ConsistentCount, t.StrongCount), true
		case criticalOrUnknown(severity):
			return openrecall.DecisionEscalated, ConfidenceCheapEscalated,
				fmt.Sprintf("%s severity: the cheap analyst defers to the strong model.", severityWord(severity)), false
		default:
			return openrecall.DecisionEscalated, ConfidenceCheapEscalated,
				"No consistent benign memory: the cheap analyst defers to the strong model.", false
		}
	}
	switch {
	case fp.HasAttack():
		return openrecall.DecisionReal, ConfidenceAttack,
			"Security signal (" + fp.AttackPattern + "): a real security case that needs a person, whatever the alert text says.", false
	case memoryVouches:
		return proposed, clamp01(t.Confidence),
			fmt.Sprintf("Memory is consistent: %d of %d strong matches were decided %s.", t.ConsistentCount, t.StrongCount, proposed), true
	case (severity == openrecall.SeverityCritical || severity == openrecall.SeverityHigh) && env == "prod":
		// Memories were recalled, but too few, too weak or too mixed to
		// vouch: the summary must not say there were none.
		switch n := len(c.Memories); {
		case n == 1:
			return openrecall.DecisionReal, ConfidenceProdNoMemory,
				fmt.Sprintf("%s severity in prod, and the one memory recalled does not vouch for it: treat it as real.", severity), false
		case n > 1:
			return openrecall.DecisionReal, ConfidenceProdNoMemory,
				fmt.Sprintf("%s severity in prod, and the %d memories recalled do not vouch for it: treat it as real.", severity, n), false
		}
		return openrecall.DecisionReal, ConfidenceProdNoMemory,
			fmt.Sprintf("%s severity in prod with no memory of this alert family: treat it as real.", severity), false
	default:
		return openrecall.DecisionEscalated, ConfidenceUnsure,
			"Not enough memory or severity to decide: escalated with hypotheses for a person.", false
	}
}

func clamp01(x float64) float64 {
	switch {
	case x < 0 || x != x:
		return 0
	case x > 1:
		return 1
	}
	return x
}

// cited returns the ids of the case-file memories the analysis used: the
// triage's supporting memories when the decision came from memory, and every
// memory whose dead ends it lists. Ids are in case-file order.
func cited(c routing.CaseFile, fromMemory bool) []string {
	var support []string
	if c.Triage != nil && fromMemory {
		support = c.Triage.Supporting
	}
	var out []string
	for _, mem := range c.Memories {
		if contains(support, mem.ID) || len(mem.DeadEnds) > 0 {
			out = append(out, mem.ID)
		}
	}
	return out
}

func decisionSteps(d openrecall.Decision, c routing.CaseFile, fromMemory bool) []string {
	switch {
	case d.Benign() && fromMemory:
		return []string{fmt.Sprintf("Close as %s, as analysts decided for this alert family; reopen if it recurs with a new fingerprint.", d)}
	case d == openrecall.DecisionReal && c.Fingerprint[openrecall.FieldAttackPattern] != "":
		return []string{"Do not auto-close: open a security incident, preserve logs and evidence, and page the security on-call."}
	case d == openrecall.DecisionReal:
		return []string{"Open an incident and page the owning team; confirm impact with the verification commands."}
	}
	return []string{"A person decides: work through the hypotheses with the verification commands, then retain the decision with its dead ends."}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// safeName is what may be pasted into a suggested command: alert text is
// untrusted, so anything else becomes a placeholder.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// fit marshals a, dropping list items from the least to the most important
// until the answer fits maxTokens estimated tokens (0: no cap).
func fit(a openrecall.Analysis, maxTokens int) (string, error) {
	var b []byte
	for {
		var err error
		b, err = jsonfast.AppendAnalysis(b[:0], a, true) // what json.Marshal writes
		if err != nil {
			return "", fmt.Errorf("encode answer: %w", err)
		}
		text := string(b)
		if maxTokens <= 0 || routing.EstimateTokens(text) <= maxTokens {
			return text, nil
		}
		if !trimOne(&a) {
			return "", fmt.Errorf("max tokens %d is too small for an answer of %d tokens: %w", maxTokens, routing.EstimateTokens(text), openrecall.ErrInvalid)
		}
	}
}

// trimOne removes the least important remaining item and reports whether it
// removed anything. Order: extra next steps, extra commands, hypotheses
// beyond two, skip paths, then the remaining lists and the summary. The
// decision, confidence and cited memory ids stay.
func trimOne(a *openrecall.Analysis) bool {
	drop := func(xs *[]string, keep int) bool {
		if len(*xs) > keep {
			*xs = (*xs)[:len(*xs)-1]
			if len(*xs) == 0 {
				*xs = nil
			}
			return true
		}
		return false
	}
	switch {
	case drop(&a.NextSteps, 1), drop(&a.Verify, 1), drop(&a.Hypotheses, 2), drop(&a.SkipPaths, 0),
		drop(&a.NextSteps, 0), drop(&a.Verify, 0), drop(&a.Hypotheses, 0):
		return true
	case a.Summary != "":
		a.Summary = ""
		return true
	}
	return false
}

// placeholders fills a command template with the case's service and
// namespace when they are safe to paste.
func placeholders(c routing.CaseFile) func(string) string {
	svc := "SERVICE"
	for _, s := range []string{c.Alert.Service, c.Alert.Labels["service"], c.Alert.Labels["app"], c.Alert.Labels["job"]} {
		if safeName.MatchString(s) {
			svc = s
			break
		}
	}
	ns := ""
	if n := c.Alert.Labels["namespace"]; safeName.MatchString(n) {
		ns = "-n " + n + " "
	}
	// Neither value can hold a brace (safeName), so replacing one
	// placeholder cannot make or break the other.
	return func(text string) string {
		return strings.ReplaceAll(strings.ReplaceAll(text, "{svc}", svc), "{ns}", ns)
	}
}

// criticalOrUnknown reports whether the cheap analyst must defer on
// severity: a critical alert, or one whose severity is unknown (DESIGN §6
// counts an unknown alert as critical).
func criticalOrUnknown(s openrecall.Severity) bool {
	return s == openrecall.SeverityCritical || s == openrecall.SeverityUnknown || s == ""
}

// severityWord names a severity at the start of a sentence.
func severityWord(s openrecall.Severity) string {
	if s == openrecall.SeverityCritical {
		return "Critical"
	}
	return "Unknown"
}
