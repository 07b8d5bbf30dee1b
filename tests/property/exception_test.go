package property

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// exceptionProperties are the rules of exceptions (DESIGN §6b, issue 22):
// memory proposes, a person approves.
func exceptionProperties() []pbt.Property {
	ex := newExtractor()
	run := func(check func(r gen.ExceptionRun, out exceptionOut) error) func(gen.ExceptionRun) error {
		return func(r gen.ExceptionRun) error {
			out, err := runExceptions(ex, r)
			if err != nil {
				return err
			}
			return check(r, out)
		}
	}
	opts := []pbt.Option{pbt.Expensive(4), pbt.Classify(classifyExceptionRun),
		pbt.Cover("an approved, active exception", 40), pbt.Cover("an expired or revoked exception", 10), pbt.Cover("memory alone", 10)}
	never := func(id, statement string, variants ...gen.Variant) pbt.Property {
		return pbt.ForAll(id, statement, "ExceptionRunGen", gen.ExceptionRunGen(), run(func(_ gen.ExceptionRun, out exceptionOut) error {
			for i, r := range out.results {
				for _, v := range variants {
					if out.variants[i] == v && r.Exception != nil {
						return fmt.Errorf("matched: a firing of variant %q (%s, severity %q, entities %v) matched exception %s (ceiling %s, match %v)",
							v, r.Identity, r.Alert.Severity, r.Alert.Entities, r.Exception.ID, out.exc.MaxSeverity, out.exc.Match)
					}
				}
			}
			return nil
		}), opts...)
	}
	return []pbt.Property{
		pbt.ForAll("P90_no_exception_without_a_person",
			"No exception exists without a person's action: memory, however unanimous, and the runs that propose exceptions store none and close no alert through one; an approval without an analyst is refused; every stored exception names the analyst who approved it and has its approval entry in the audit trail (DESIGN §6b).",
			"ExceptionRunGen", gen.ExceptionRunGen(), run(func(r gen.ExceptionRun, out exceptionOut) error {
				switch {
				case out.before != 0:
					return fmt.Errorf("memory: %d exceptions stored before any person acted", out.before)
				case out.anonymous == nil:
					return fmt.Errorf("approval: an approval without an analyst was accepted")
				case !r.Approved() && out.after != 0:
					return fmt.Errorf("memory: %d exceptions stored though no person approved", out.after)
				case r.Approved() && (out.exc == nil || out.exc.Analyst != "alice" || out.approvals != 1):
					return fmt.Errorf("approval: exception %+v, %d approval entries in the trail", out.exc, out.approvals)
				}
				for _, res := range out.results {
					if res.Exception != nil && !r.Approved() {
						return fmt.Errorf("memory: %s closed by exception %s that no person approved", res.Position, res.Exception.ID)
					}
				}
				return nil
			}), opts...),
		never("P91_exception_never_matches_another_identity",
			"An alert never matches an exception of another identity: a firing of another rule, or of the same rule for another service, is never closed by the exception made for the detection (DESIGN §6b).",
			gen.VariantOtherRule, gen.VariantOtherService),
		never("P92_exception_never_matches_a_differing_match_field",
			"An alert never matches an exception when one of its match fields differs or is missing: another user, or no process field, and the firing goes to the model (DESIGN §6b).",
			gen.VariantMatchValue, gen.VariantMatchMissing),
		never("P93_exception_never_matches_other_critical_dna",
			"An alert never matches an exception made for other critical Alert DNA: the same detection in another environment is analysed (DESIGN §6b).",
			gen.VariantOtherEnvironment),
		pbt.ForAll("P94_exception_never_above_its_ceiling",
			"An exception never matches an alert more severe than its ceiling (an alert of unknown severity counts as critical): every excepted result is within the ceiling, and a firing more severe than the detection the exception was made for (its ceiling) is analysed (DESIGN §6b).",
			"ExceptionRunGen", gen.ExceptionRunGen(), run(func(_ gen.ExceptionRun, out exceptionOut) error {
				for i, r := range out.results {
					if r.Exception == nil {
						continue
					}
					if designRank(r.Alert.Severity, "x") > designRank(out.exc.MaxSeverity, "x") {
						return fmt.Errorf("ceiling: %s of severity %q matched exception %s of ceiling %s", r.Position, r.Alert.Severity, r.Exception.ID, out.exc.MaxSeverity)
					}
					if v := out.variants[i]; v == gen.VariantMoreSevere || (v == gen.VariantUnknownSeverity && out.exc.MaxSeverity != openrecall.SeverityCritical) {
						return fmt.Errorf("ceiling: variant %q (severity %q) matched exception %s of ceiling %s", v, r.Alert.Severity, r.Exception.ID, out.exc.MaxSeverity)
					}
				}
				return nil
			}), opts...),
		pbt.ForAll("P95_exception_inactive_after_expiry_or_revocation",
			"An exception matches nothing after its expiry or its revocation; the next writing command records the expiry in the audit trail once, with actor system, and the revocation names who revoked it (DESIGN §6b).",
			"ExceptionRunGen", gen.ExceptionRunGen(), run(func(r gen.ExceptionRun, out exceptionOut) error {
				if !r.Approved() || r.Later == 0 {
					return nil
				}
				for _, res := range out.results {
					if res.Exception != nil {
						return fmt.Errorf("inactive: %s matched exception %s after its %s", res.Position, res.Exception.ID, map[int]string{1: "expiry", 2: "revocation"}[r.Later])
					}
				}
				switch {
				case r.Later == 1 && (out.expiries != 1 || !out.expiryBySystem):
					return fmt.Errorf("expiry: %d expiry entries (by system %v), want exactly 1", out.expiries, out.expiryBySystem)
				case r.Later == 2 && out.revocations != 1:
					return fmt.Errorf("revocation: %d revocation entries naming carol, want 1", out.revocations)
				}
				return nil
			}), opts...),
		pbt.ForAll("P96_exception_matches_every_equal_firing",
			"Liveness: while an approved exception is active, a firing matches it if and only if a reference matcher written from DESIGN §6b says so (identity, critical DNA and every match field equal, not more severe than the ceiling, unknown severity as critical; extra entity fields do not matter), and a match takes exactly one exception route step with the exception's decision, naming the exception, its approver and its expiry.",
			"ExceptionRunGen", gen.ExceptionRunGen(), run(func(r gen.ExceptionRun, out exceptionOut) error {
				if !r.Approved() || r.Later != 0 {
					return nil
				}
				for i, res := range out.results {
					v := out.variants[i]
					want := v.Matches(r.Ceiling(), out.exc.MaxSeverity)
					if got := res.Exception != nil; got != want {
						return fmt.Errorf("match: variant %q (severity %q) matched=%v, want %v (exception ceiling %s, match %v; steps %v)",
							v, res.Alert.Severity, got, want, out.exc.MaxSeverity, out.exc.Match, stepNames(res.Steps))
					}
					if !want {
						continue
					}
					names := strings.Join(stepNames(res.Steps), ",")
					step := res.Steps[len(res.Steps)-1]
					if names != "intake,fingerprint,exception" || res.Decision != out.exc.Decision || res.Exception.ID != out.exc.ID ||
						res.Exception.Analyst != "alice" || !res.Exception.ExpiresAt.Equal(out.exc.ExpiresAt) || !strings.Contains(step.Reason, out.exc.ID) ||
						!strings.Contains(step.Reason, "alice") || res.Group != nil {
						return fmt.Errorf("step: %s took %s, decision %s, exception %+v (want %s by alice), reason %q, group %+v",
							res.Position, names, res.Decision, res.Exception, out.exc.ID, step.Reason, res.Group)
					}
				}
				return nil
			}), opts...),
		pbt.ForAll("P97_no_proposal_unless_refused_only_by_clause_d",
			"A proposal is made if and only if the guard refuses the bypass only by clause (d) — an attack — while (a) a strong match, (b) every strong match agreeing on a benign decision, (c) confidence ≥ 0.85 and (e) the alert not more severe than its memories hold; never for an alert refused by (a)–(c) or (e) (reference with DESIGN's literal thresholds and formula, triage and guard the product's).",
			"ProposalCaseGen", gen.ProposalCaseGen(), func(c gen.ProposalCase) error {
				fp := openrecall.Fingerprint{AttackPattern: "security_detection", Environment: "prod"}
				id := openrecall.Identity{Rule: "detection", Service: "svc"}
				ents := map[string]string{"user": "root"}
				alertSev, memSev := gen.AllSeverities()[c.AlertSeverity], gen.AllSeverities()[c.MemorySeverity]
				score := gen.ProposalScores()[c.Score]
				var matches []openrecall.Match
				for i, d := range c.Decisions() {
					matches = append(matches, openrecall.Match{Score: score, Incident: openrecall.Incident{
						ID: fmt.Sprintf("inc_%d", i), Identity: id, Fingerprint: fp, Decision: d, Severity: memSev, Entities: ents,
						CreatedAt: gen.Times()[i%len(gen.Times())]}})
				}
				tr := triage.Triage(fp, alertSev, matches, triage.DefaultConfig())
				var support []openrecall.Incident
				for _, m := range matches {
					if slices.Contains(tr.Supporting, m.Incident.ID) {
						support = append(support, m.Incident)
					}
				}
				a := openrecall.Alert{ID: "a", Severity: alertSev, Entities: ents}
				p := openrecall.Propose(a, id, fp, tr, triage.Guard(fp, tr, triage.DefaultConfig()), support)
				n := c.N
				strong := n > 0 && score >= 0.85
				memRef := memSev
				if memRef == "" {
					memRef = openrecall.SeverityUnknown // stored memories are normalized: empty is unknown
				}
				want := strong && c.Dissent == 0 && float64(n+1)/float64(n+2) >= 0.85 && !refMoreSevere(alertSev, memRef)
				if (p != nil) != want {
					return fmt.Errorf("proposal: made=%v, want %v (%d memories scored %v, %d dissenting; alert %q, memories %q; triage %s confidence %v)",
						p != nil, want, n, score, c.Dissent, alertSev, memSev, tr.Decision, tr.Confidence)
				}
				return nil
			}, pbt.Classify(func(c gen.ProposalCase) []string {
				if c.N >= 5 && c.Dissent == 0 && gen.ProposalScores()[c.Score] >= 0.85 {
					return []string{"unanimous benign memory"}
				}
				return nil
			}), pbt.Cover("unanimous benign memory", 10)),
		pbt.ForAll("P98_exception_match_costs_zero_saves_baseline",
			"An exception match makes no model call and costs 0, and its baseline is exactly the strong analysis of its own prompt at the expected completion (hand-priced), all of it saved; the summary counts the matches and their savings apart from bypasses and group members, and the cost curve puts them on the exception tier.",
			"ExceptionRunGen", gen.ExceptionRunGen(), run(func(_ gen.ExceptionRun, out exceptionOut) error {
				n := 0
				var saved openrecall.NanoUSD
				for _, r := range out.results {
					if r.Exception == nil {
						continue
					}
					n++
					prompt := openrecall.NanoUSD(routing.EstimatePromptTokens(routing.BuildPrompt(routing.Input{
						Alert: r.Alert, Fingerprint: r.Fingerprint, Matches: r.Matches, Triage: r.Triage, Guard: r.Guard})))
					want := prompt*perToken["gpt-4o"][0] + expectedCompletion*perToken["gpt-4o"][1]
					for _, st := range r.Steps {
						if st.Step == openrecall.StepAnalysis || st.Live {
							return fmt.Errorf("cost: %s matched an exception and still called a model (%s)", r.Position, st.Step)
						}
					}
					if r.Cost != 0 || r.Baseline != want || r.Bypassed {
						return fmt.Errorf("cost: %s cost %d baseline %d bypassed %v, want 0, %d, false", r.Position, r.Cost, r.Baseline, r.Bypassed, want)
					}
					saved += r.Baseline
				}
				if out.summary.Excepted != n || out.summary.ExceptedSaved != saved || out.curveExcepted != n {
					return fmt.Errorf("summary: %d excepted saving %d, cost curve %d, want %d saving %d", out.summary.Excepted, out.summary.ExceptedSaved, out.curveExcepted, n, saved)
				}
				return nil
			}), opts...),
		pbt.ForAll("P99_proposal_names_shared_entity_fields",
			"A proposal names the identity, the critical Alert DNA, the benign decision, the alert's severity as ceiling and exactly the entity fields equal in the alert and every supporting memory (a field that drifts between them is never one); the same proposal made twice is stored once (DESIGN §6b).",
			"ExceptionRunGen", gen.ExceptionRunGen(), run(func(r gen.ExceptionRun, out exceptionOut) error {
				p := out.proposal
				if p == nil {
					return fmt.Errorf("proposal: none for %d unanimous %s memories of the detection (guard: %s)", 5+r.Memories, r.BenignDecision(), out.proposing.Guard.Reason)
				}
				want := r.Entities()
				if openrecall.MatchString(p.Match) != openrecall.MatchString(want) {
					return fmt.Errorf("fields: proposal matches %v, want %v", p.Match, want)
				}
				if p.Identity != out.proposing.Identity || p.DNA != openrecall.CriticalDNA(out.proposing.Fingerprint) || p.Decision != r.BenignDecision() ||
					p.MaxSeverity != r.Ceiling() || len(p.Supporting) != 5+r.Memories {
					return fmt.Errorf("content: proposal %+v for %s %s, decision %s, ceiling %s", p, out.proposing.Identity, out.proposing.Fingerprint, r.BenignDecision(), r.Ceiling())
				}
				if out.stored != 1 {
					return fmt.Errorf("dedupe: the proposal made twice is stored %d times", out.stored)
				}
				return nil
			}), opts...),
	}
}

// refMoreSevere is DESIGN §6 clause (e) written out: an alert of unknown
// severity counts as critical (unless every supporting memory is unknown
// too), a memory of unknown severity as medium.
func refMoreSevere(alert, mem openrecall.Severity) bool {
	rank := map[openrecall.Severity]int{openrecall.SeverityInfo: 1, openrecall.SeverityLow: 2, openrecall.SeverityMedium: 3,
		openrecall.SeverityHigh: 4, openrecall.SeverityCritical: 5}
	a, aok := rank[alert]
	m, mok := rank[mem]
	if !aok && mem == openrecall.SeverityUnknown {
		return false
	}
	if !aok {
		a = 5
	}
	if !mok {
		m = 3
	}
	return a > m
}

func classifyExceptionRun(r gen.ExceptionRun) []string {
	switch {
	case !r.Approved():
		return []string{"memory alone"}
	case r.Later == 0:
		return []string{"an approved, active exception"}
	}
	return []string{"an expired or revoked exception"}
}

type exceptionOut struct {
	proposing openrecall.Result
	proposal  *openrecall.Proposal
	// stored counts the proposals stored after the proposing firing ran twice.
	stored int
	// before and after count the exceptions stored before and after a
	// person's approval; anonymous is the error of an approval without
	// an analyst.
	before, after int
	anonymous     error
	exc           *openrecall.Exception
	results       []openrecall.Result
	variants      []gen.Variant
	summary       workflow.Summary
	curveExcepted int
	// Audit entries: approvals by alice, expiries, revocations by carol.
	approvals, expiries, revocations int
	expiryBySystem                   bool
}

// alertSource is a queue of alerts.
type alertSource struct{ alerts []openrecall.Alert }

func (s *alertSource) Next(context.Context) (intake.Record, error) {
	if len(s.alerts) == 0 {
		return intake.Record{}, io.EOF
	}
	a := s.alerts[0]
	s.alerts = s.alerts[1:]
	return intake.Record{Alert: a}, nil
}

// runExceptions plays r over a fresh store with the product's use cases,
// workflow and sink: analysts' decisions, the proposing firing (twice), a
// person's approval (or none), the expiry or revocation, then the variants.
func runExceptions(ex workflow.Fingerprinter, r gen.ExceptionRun) (exceptionOut, error) {
	var out exceptionOut
	err := withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		st := ss[0]
		now := fixedClock()
		clock := func() time.Time { return now }
		root, err := productRoot(st, ex, clock)
		if err != nil {
			return err
		}
		uc := root.UseCases
		sink, err := root.Sink(ctx)
		if err != nil {
			return fmt.Errorf("setup: sink: %v", err)
		}
		for i := range 5 + r.Memories {
			if _, err := uc.Retain(ctx, usecase.RetainRequest{
				Decision: usecase.Decision{Decision: r.BenignDecision(), Note: "expected activity", Analyst: "bob"},
				Subject:  usecase.Subject{Alerts: []openrecall.Alert{r.Firing(i)}},
			}); err != nil {
				return fmt.Errorf("setup: retain: %v", err)
			}
		}
		router, err := routing.New(routing.Config{Cheap: local.NewCheap(), Strong: local.NewStrong(), Vet: triage.Vet, Now: fixedClock})
		if err != nil {
			return fmt.Errorf("setup: router: %v", err)
		}
		analyze := func(batch string, workers int, alerts []openrecall.Alert) ([]openrecall.Result, workflow.Summary, error) {
			br, err := productRoot(st, ex, clock, compose.Batch(batch))
			if err != nil {
				return nil, workflow.Summary{}, err
			}
			wf, err := br.Pipeline(router, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
			if err != nil {
				return nil, workflow.Summary{}, fmt.Errorf("setup: workflow: %v", err)
			}
			var results []openrecall.Result
			sum, err := wf.AnalyzeQueue(ctx, &alertSource{alerts: alerts}, workflow.QueueOptions{Workers: workers}, func(res openrecall.Result) error {
				results = append(results, res)
				return nil
			})
			return results, sum, err
		}
		first := r.Firing(50)
		again := first
		again.ID = "det-again"
		props, _, err := analyze("propose", 1, []openrecall.Alert{first, again})
		if err != nil {
			return fmt.Errorf("analyze: %v", err)
		}
		out.proposing, out.proposal = props[0], props[0].Proposal
		stored, err := st.Proposals(ctx, false)
		if err != nil {
			return err
		}
		out.stored = len(stored)
		list, err := st.Exceptions(ctx)
		if err != nil {
			return err
		}
		out.before = len(list)
		if out.proposal != nil {
			_, out.anonymous = uc.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: out.proposal.ID})
			if r.Approved() {
				ch, err := uc.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: out.proposal.ID, Analyst: "alice",
					Expiry: time.Duration(r.ExpiryDays()) * 24 * time.Hour, Note: "expected activity"})
				if err != nil {
					return fmt.Errorf("approve: %v", err)
				}
				out.exc = &ch.Exception
				switch r.Later {
				case 1:
					now = out.exc.ExpiresAt.Add(time.Hour)
					if err := uc.RecordExpiries(ctx); err != nil {
						return fmt.Errorf("expiry: %v", err)
					}
					if err := uc.RecordExpiries(ctx); err != nil { // a second writing command records nothing more
						return fmt.Errorf("expiry: %v", err)
					}
				case 2:
					if _, err := uc.RevokeException(ctx, out.exc.ID, "carol", "retired"); err != nil {
						return fmt.Errorf("revoke: %v", err)
					}
				}
			}
		} else {
			out.anonymous = fmt.Errorf("no proposal to approve")
		}
		if list, err = st.Exceptions(ctx); err != nil {
			return err
		}
		out.after = len(list)
		if out.exc == nil {
			out.exc = &openrecall.Exception{MaxSeverity: r.Ceiling()}
		}
		var alerts []openrecall.Alert
		for i, v := range r.VariantList() {
			out.variants = append(out.variants, v)
			alerts = append(alerts, r.VariantFiring(60+i, v))
		}
		if out.results, out.summary, err = analyze("variants", r.Workers+1, alerts); err != nil {
			return fmt.Errorf("analyze variants: %v", err)
		}
		points, err := st.CostPoints(ctx, "variants")
		if err != nil {
			return err
		}
		for _, p := range points {
			if p.Tier == "exception" {
				out.curveExcepted++
			}
		}
		return st.WalkAudit(ctx, func(e openrecall.AuditEntry) error {
			switch e.Step {
			case openrecall.StepExceptionApprove:
				if strings.Contains(e.Reason, "by alice") {
					out.approvals++
				}
			case openrecall.StepExceptionExpire:
				out.expiries++
				out.expiryBySystem = strings.Contains(e.Reason, "by system")
			case openrecall.StepExceptionRevoke:
				if strings.Contains(e.Reason, "by carol") {
					out.revocations++
				}
			}
			return nil
		})
	})
	return out, err
}
