package gen

import (
	"fmt"
	"math"
	"strings"

	"github.com/leanovate/gopter"
	"github.com/openrecall/openrecall"
)

// Named is a generator with its name and the predicate its values satisfy.
type Named struct {
	Name string
	Gen  gopter.Gen
	// Valid returns nil when v is a value the generator may produce.
	Valid func(v any) error
}

// All lists every named generator of the suite with its validity predicate.
func All() []Named {
	return []Named{
		{"AlertFingerprintGen", AlertFingerprintGen(), validAs(ValidFingerprint)},
		{"FingerprintMutationGen", FingerprintMutationGen(), validAs(func(m FingerprintMutation) error {
			if err := ValidFingerprint(m.Fingerprint); err != nil {
				return err
			}
			if m.Mutation < 0 || m.Mutation >= len(Mutations()) {
				return fmt.Errorf("mutation %d out of range", m.Mutation)
			}
			return nil
		})},
		{"FingerprintPairGen", FingerprintPairGen(), validAs(func(p FingerprintPair) error {
			if err := ValidFingerprint(p.A); err != nil {
				return err
			}
			return ValidFingerprint(p.Second())
		})},
		{"FamilyIncidentGen", FamilyIncidentGen(), validAs(func(inc openrecall.Incident) error { return inc.Validate() })},
		{"RetainPlanGen", RetainPlanGen(), validAs(func(p RetainPlan) error {
			for _, inc := range p.Incidents {
				if err := inc.Validate(); err != nil {
					return err
				}
			}
			if len(p.Permuted()) != len(p.Listed()) {
				return fmt.Errorf("permutation lost incidents")
			}
			return nil
		})},
		{"ConcurrentRetainGen", ConcurrentRetainGen(), validAs(func(c ConcurrentRetain) error {
			if err := c.Incident.Validate(); err != nil {
				return err
			}
			return ValidNoteVariant(c.Note)
		})},
		{"DNAAlertGen", DNAAlertGen(), validAs(func(d DNAAlert) error {
			for _, idx := range [][]int{d.Title, d.Text, d.Summary, d.Description} {
				if err := indexesIn(idx, len(DNAPieces()), "piece"); err != nil {
					return err
				}
			}
			if d.Kind < 0 || d.Kind >= DNAKinds {
				return fmt.Errorf("kind %d out of range", d.Kind)
			}
			return indexesIn(append(append([]int{}, d.Labels...), d.Service, d.Environment, d.Rule), len(DNALabelValues()), "label value")
		})},
		{"TemplateCaseGen", TemplateCaseGen(), validAs(func(c TemplateCase) error { return ValidTemplateIndexes(c.Shape) })},
		{"ContrastCaseGen", ContrastCaseGen(), validAs(func(c ContrastCase) error {
			if c.Contrast < 0 || c.Contrast >= len(TemplateContrasts()) {
				return fmt.Errorf("contrast %d out of range", c.Contrast)
			}
			return ValidTemplateIndexes(c.Shape)
		})},
		{"DNALinesGen", DNALinesGen(), validAs(func(d DNALines) error { return indexesIn(d.Indexes(), len(DNALinePieces()), "piece") })},
		{"SecretTextGen", SecretTextGen(), validAs(func(t SecretText) error { return indexesIn(t.Pieces, len(SecretPieces()), "piece") })},
		{"CaseInputGen", CaseInputGen(), validAs(func(c CaseInput) error {
			idx := append([]int{c.ID, c.Severity, c.Decision}, c.Supporting...)
			nums := []int{c.Confidence, c.Consistency}
			for _, m := range c.Matches {
				idx = append(idx, m.ID, m.Decision)
				nums = append(nums, m.Score)
			}
			if err := indexesIn(idx, len(CaseWords()), "word"); err != nil {
				return err
			}
			return indexesIn(nums, len(CaseFloats()), "number")
		})},
		{"AnswerTextGen", AnswerTextGen(), validAs(func(a AnswerText) error {
			var keys, values []int
			for _, m := range a.Members {
				keys, values = append(keys, m.Key), append(values, m.Value)
			}
			if err := indexesIn(keys, len(AnswerKeys()), "key"); err != nil {
				return err
			}
			return indexesIn(values, len(AnswerValues()), "value")
		})},
		{"TextGen", TextGen(), validAs(func(t Text) error { return indexesIn(t.Atoms, len(TextAtoms()), "atom") })},
		{"WebhookItemsGen", WebhookItemsGen(), validAs(ValidWebhookItems)},
		{"GrafanaWebhookGen", GrafanaWebhookGen(), validAs(ValidGrafanaWebhook)},
		{"SenderReadingGen", SenderReadingGen(), validAs(ValidSenderReading)},
		{"RuleDigitsGen", RuleDigitsGen(), validAs(ValidRuleDigits)},
		{"EvidenceChangeGen", EvidenceChangeGen(), validAs(ValidEvidenceChange)},
		{"WrongTypeGen", WrongTypeGen(), validAs(ValidWrongType)},
		{"IDChangeGen", IDChangeGen(), validAs(ValidIDChange)},
		{"AMPairGen", AMPairGen(), validAs(ValidAMPair)},
		{"LevelSpellingGen", LevelSpellingGen(), validAs(ValidLevelSpelling)},
		{"ScalePairGen", ScalePairGen(), validAs(ValidScalePair)},
		{"StatusCaseGen", StatusCaseGen(), validAs(ValidStatusCase)},
		{"FalcoPathGen", FalcoPathGen(), validAs(ValidFalcoPath)},
		{"IdentityCaseGen", IdentityCaseGen(), validAs(ValidIdentityCase)},
		{"ForeignDBGen", ForeignDBGen(), validAs(ValidForeignDB)},
		{"SeveritySpellingGen", SeveritySpellingGen(), validAs(func(s SeveritySpelling) error { return ValidSpelling(s.Spelling) })},
		{"EnvironmentSpellingGen", EnvironmentSpellingGen(), validAs(func(s EnvironmentSpelling) error { return ValidSpelling(s.Spelling) })},
		{"NoteVariantGen", NoteVariantGen(), validAs(ValidNoteVariant)},
		{"IncidentGen", IncidentGen(), validAs(func(inc openrecall.Incident) error { return inc.Validate() })},
		{"MemoryMatchGen", MemoryMatchGen(), validAs(ValidMatch)},
		{"StrongMatchSetGen", StrongMatchSetGen(), validAs(func(ms []openrecall.Match) error {
			for _, m := range ms {
				if err := ValidMatch(m); err != nil {
					return err
				}
				if m.Score < 0.85 {
					return fmt.Errorf("score %v below the strong threshold", m.Score)
				}
			}
			return nil
		})},
		{"TriageCaseGen", TriageCaseGen(), validAs(ValidTriageCase)},
		{"SeparationCaseGen", SeparationCaseGen(), validAs(func(c SeparationCase) error {
			if c.Identity.IsZero() {
				return fmt.Errorf("an identity case needs an alert identity")
			}
			for _, inc := range c.Others {
				if inc.Identity == c.Identity {
					return fmt.Errorf("memory of the alert's own identity among the others")
				}
				if !openrecall.SameCritical(inc.Fingerprint, c.Fingerprint) {
					return fmt.Errorf("other memory %s does not collide with %s", inc.Fingerprint, c.Fingerprint)
				}
				if err := inc.Validate(); err != nil {
					return err
				}
			}
			return ValidFingerprint(c.Fingerprint)
		})},
		{"EscalationGen", EscalationGen(), validAs(func(e Escalation) error {
			if SeverityRank(e.Higher) < SeverityRank(e.Case.Severity) {
				return fmt.Errorf("severity %q is below the case's %q", e.Higher, e.Case.Severity)
			}
			return ValidTriageCase(e.Case)
		})},
		{"TriageResultGen", TriageResultGen(), validAs(ValidTriageResult)},
		{"GuardCaseGen", GuardCaseGen(), validAs(func(c GuardCase) error {
			if err := ValidFingerprint(c.Fingerprint); err != nil {
				return err
			}
			return ValidTriageResult(c.Triage)
		})},
		{"DecisionCaseGen", DecisionCaseGen(), validAs(func(c DecisionCase) error { return ValidTriageCase(c.Case) })},
		{"NearBypassGuardCaseGen", NearBypassGuardCaseGen(), validAs(func(c GuardCase) error {
			if err := ValidFingerprint(c.Fingerprint); err != nil {
				return err
			}
			return ValidTriageResult(c.Triage)
		})},
		{"WeakeningGen", WeakeningGen(), validAs(func(w Weakening) error {
			if err := ValidTriageResult(w.Case.Triage); err != nil {
				return err
			}
			return ValidTriageResult(w.Weaker())
		})},
		{"LivenessCaseGen", LivenessCaseGen(), validAs(func(c LivenessCase) error {
			if c.Fingerprint.HasAttack() || c.Fingerprint.ErrorClass == "" || !c.Decision.Benign() || c.N < 5 {
				return fmt.Errorf("not a liveness case: %+v", c)
			}
			for _, m := range c.Matches() {
				if err := ValidMatch(m); err != nil {
					return err
				}
			}
			return ValidFingerprint(c.Fingerprint)
		})},
		{"GateCaseGen", GateCaseGen(), validAs(ValidGateCase)},
		{"AuditSpliceGen", AuditSpliceGen(), validAs(func(a AuditSplice) error {
			if a.N < 2 || a.From < 0 || a.I < 0 {
				return fmt.Errorf("splice %+v", a)
			}
			return nil
		})},
		{"ThresholdCaseGen", ThresholdCaseGen(), validAs(func(c ThresholdCase) error {
			if c.N < 0 || c.N > 20 || c.Dissent < 0 || c.Score < 0 || c.Score >= len(ThresholdScores()) ||
				c.AlertSeverity < 0 || c.AlertSeverity >= len(ThresholdSeverities()) || c.MemorySeverity < 0 || c.MemorySeverity >= len(ThresholdSeverities()) {
				return fmt.Errorf("threshold case %+v", c)
			}
			return nil
		})},
		{"RawAlertGen", RawAlertGen(), validAs(func(r RawAlert) error {
			if r.Family < 0 || r.Family >= len(AlertFamilies()) {
				return fmt.Errorf("family %d out of range", r.Family)
			}
			return nil
		})},
		{"LiveRunGen", LiveRunGen(), validAs(func(r LiveRun) error {
			for _, s := range r.Script {
				if err := indexesIn([]int{s.Kind}, len(ReplyKinds()), "reply kind"); err != nil {
					return err
				}
				if err := indexesIn([]int{s.Decision}, len(AnswerDecisions()), "decision"); err != nil {
					return err
				}
				if err := indexesIn([]int{s.Cite}, len(Citations()), "citation"); err != nil {
					return err
				}
			}
			return nil
		})},
		{"ExceptionRunGen", ExceptionRunGen(), validAs(ValidExceptionRun)},
		{"ProposalCaseGen", ProposalCaseGen(), validAs(func(c ProposalCase) error {
			if c.N < 0 || c.N > 12 || c.Dissent < 0 || c.Dissent > 2 || c.Score < 0 || c.Score >= len(ProposalScores()) ||
				c.AlertSeverity < 0 || c.AlertSeverity >= len(AllSeverities()) || c.MemorySeverity < 0 || c.MemorySeverity >= len(AllSeverities()) {
				return fmt.Errorf("proposal case out of range: %+v", c)
			}
			return nil
		})},
		{"RunsPlanGen", RunsPlanGen(), validAs(ValidRunsPlan)},
		{"StormRunGen", StormRunGen(), validAs(func(s StormRun) error {
			if s.Workers < 1 || s.Workers > 4 || s.Budget < 0 || s.Vouch < 0 || s.Vouch > 3 || len(s.Firings) > 40 {
				return fmt.Errorf("storm run workers %d budget %d vouch %d firings %d", s.Workers, s.Budget, s.Vouch, len(s.Firings))
			}
			for _, f := range s.Firings {
				if f.Rule < 0 || f.Rule >= len(StormRules()) || f.Sev < 0 || f.Sev >= len(StormSeverities()) || f.Gap < 0 || f.Gap >= len(StormGaps()) ||
					f.Host < 0 || f.Process < 0 || f.Process >= len(StormProcesses()) {
					return fmt.Errorf("storm firing %+v", f)
				}
			}
			return nil
		})},
		{"WorkflowInputGen", WorkflowInputGen(), validAs(func(in WorkflowInput) error {
			if in.Workers < 2 || in.Budget < 0 {
				return fmt.Errorf("workers %d budget %d", in.Workers, in.Budget)
			}
			for _, s := range in.Seeds {
				if s.N < 0 || s.Dissent < 0 {
					return fmt.Errorf("seed %+v", s)
				}
			}
			if strings.Count(in.Queue(), "\n") != len(in.AllRecords()) {
				return fmt.Errorf("queue has another line count than records")
			}
			return nil
		})},
		{"DeliveryPlanGen", DeliveryPlanGen(), validAs(ValidDeliveryPlan)},
		{"InboxPressureGen", InboxPressureGen(), validAs(ValidInboxPressure)},
		{"RoutingKeyEventGen", RoutingKeyEventGen(), validAs(ValidRoutingKeyEvent)},
		{"CircuitRunGen", CircuitRunGen(), validAs(ValidCircuitRun)},
		{"ModelProposalGen", ModelProposalGen(), validAs(func(p ModelProposal) error { return ValidFingerprint(p.Fingerprint) })},
		{"TrailCaseGen", TrailCaseGen(), validAs(ValidTrailCase)},
		{"AttackAlertGen", AttackAlertGen(), validAs(ValidAttackAlert)},
		{"SecurityAlertGen", SecurityAlertGen(), validAs(ValidSecurityAlert)},
		{"EncodedRefGen", EncodedRefGen(), validAs(ValidEncodedRef)},
		{"ProductCaseGen", ProductCaseGen(), validAs(ValidProductCase)},
		{"DeclaredCaseGen", DeclaredCaseGen(), validAs(ValidDeclaredCase)},
		{"DetectionChangeGen", DetectionChangeGen(), validAs(ValidDetectionChange)},
		{"EnvCaseGen", EnvCaseGen(), validAs(ValidEnvCase)},
		{"IdentityLabelCaseGen", IdentityLabelCaseGen(), validAs(ValidIdentityLabelCase)},
		{"TextAlertCaseGen", TextAlertCaseGen(), validAs(func(c TextAlertCase) error {
			if c.More < 0 || c.More > 3 || c.Blank < 0 || c.Blank > 2 {
				return fmt.Errorf("line counts out of range: %+v", c)
			}
			return indexesIn(c.Words[:], 3001, "word choice")
		})},
		{"CommentQueueCaseGen", CommentQueueCaseGen(), validAs(func(c CommentQueueCase) error {
			if c.More < 0 || c.More > 5 || c.Comments < 0 || c.Comments > 127 || c.Text < 0 {
				return fmt.Errorf("out of range: %+v", c)
			}
			return indexesIn(c.Kinds[:], 3, "record kind")
		})},
		{"EpisodeCaseGen", EpisodeCaseGen(), validAs(func(c EpisodeCase) error {
			return indexesIn([]int{c.StartA, c.StartB}, len(EpisodeStarts()), "start")
		})},
		{"ExpiryCaseGen", ExpiryCaseGen(), validAs(func(c ExpiryCase) error { return indexesIn(c.Expiry, len(ExpiryOffsets()), "expiry") })},
		{"CacheWriteCaseGen", CacheWriteCaseGen(), validAs(func(c CacheWriteCase) error {
			if err := indexesIn([]int{c.Write}, len(CacheWrites()), "write"); err != nil {
				return err
			}
			return indexesIn([]int{c.Decision}, len(Retainable()), "decision")
		})},
		{"DedupeCaseGen", DedupeCaseGen(), validAs(func(c DedupeCase) error {
			a, b := c.Pair()
			if err := a.Validate(); err != nil {
				return err
			}
			return b.Validate()
		})},
		{"PriceCaseGen", PriceCaseGen(), validAs(func(c PriceCase) error {
			ci, co, si, so, _ := c.Table()
			if ci < 0 || co < 0 || si <= 0 || so <= 0 {
				return fmt.Errorf("price out of range: %+v", c)
			}
			return nil
		})},
		{"CompletionCaseGen", CompletionCaseGen(), validAs(func(c CompletionCase) error {
			for _, s := range c.Steps {
				if s.Model < 0 || s.Model >= len(CompletionModels()) || s.Step < 0 || s.Step >= len(CompletionSteps()) || s.PromptTokens < 0 || s.Completion < 0 {
					return fmt.Errorf("step out of range: %+v", s)
				}
			}
			return nil
		})},
		{"RetryCaseGen", RetryCaseGen(), validAs(func(c RetryCase) error {
			for _, f := range c.Failures {
				if f.Status < 0 || f.Status >= len(RetryStatuses()) || f.Body < 0 || f.Body >= len(RetryBodies()) ||
					f.Code < 0 || f.Code >= len(RetryCodes()) || f.RetryAfter < 0 || f.RetryAfter >= len(RetryAfters()) {
					return fmt.Errorf("failure out of range: %+v", f)
				}
			}
			return nil
		})},
		{"SecretLabelCaseGen", SecretLabelCaseGen(), validAs(func(c SecretLabelCase) error {
			if err := indexesIn([]int{c.Name}, len(SecretLabelNames()), "name"); err != nil {
				return err
			}
			return indexesIn([]int{c.Value}, len(PlainValues()), "value")
		})},
		{"AuditFieldCaseGen", AuditFieldCaseGen(), validAs(func(c AuditFieldCase) error {
			if c.MoreEntries < 0 || c.MoreCosts < 0 || c.Legacy < 0 || c.Entry < 0 || c.Cost < 0 {
				return fmt.Errorf("negative choice: %+v", c)
			}
			return nil
		})},
		{"GenericObjectGen", GenericObjectGen(), validAs(validGenericObject)},
		{"GenericNamedGen", GenericNamedGen(), validAs(func(o GenericObject) error {
			if o.Named().Name <= 0 {
				return fmt.Errorf("no name of the check")
			}
			return validGenericObject(o.Named())
		})},
		{"GenericNoticeGen", GenericNoticeGen(), validAs(func(n GenericNotice) error { return validGenericObject(n.Object) })},
		{"BudgetPlanGen", BudgetPlanGen(), validAs(ValidBudgetPlan)},
		{"BudgetRaceGen", BudgetRaceGen(), validAs(ValidBudgetRace)},
		{"CreationGen", CreationGen(), validAs(ValidCreation)},
		{"RouteCaseGen", RouteCaseGen(), validAs(ValidRouteCase)},
		{"CostCurveGen", CostCurveGen(), validAs(func(steps []CostStep) error {
			for i, s := range steps {
				if s.Cost < 0 || s.Extra < 0 {
					return fmt.Errorf("step %d: negative amount %+v", i, s)
				}
			}
			return nil
		})},
	}
}

func validAs[V any](f func(V) error) func(any) error {
	return func(v any) error {
		x, ok := v.(V)
		if !ok {
			var zero V
			return fmt.Errorf("value of type %T, want %T", v, zero)
		}
		return f(x)
	}
}

func indexesIn(xs []int, n int, what string) error {
	for _, x := range xs {
		if x < 0 || x >= n {
			return fmt.Errorf("%s index %d outside [0, %d)", what, x, n)
		}
	}
	return nil
}

// ValidFingerprint reports a fingerprint that is not valid Alert DNA.
func ValidFingerprint(fp openrecall.Fingerprint) error { return fp.Validate() }

// ValidNoteVariant reports indexes outside their pools.
func ValidNoteVariant(n NoteVariant) error {
	for _, e := range []error{
		indexesIn(n.Words, len(NoteWords()), "word"),
		indexesIn(n.Forms, len(Forms()), "form"),
		indexesIn(n.Seps, len(Spaces()), "separator"),
		indexesIn([]int{n.Lead, n.Trail}, len(Spaces()), "space"),
	} {
		if e != nil {
			return e
		}
	}
	return nil
}

// ValidMatch reports a match whose score is outside [0, 1] or whose incident
// is not retainable.
func ValidMatch(m openrecall.Match) error {
	if !(m.Score >= 0 && m.Score <= 1) {
		return fmt.Errorf("score %v outside [0, 1]", m.Score)
	}
	return m.Incident.Validate()
}

// ValidTriageCase reports an invalid fingerprint or match.
func ValidTriageCase(c TriageCase) error {
	if err := ValidFingerprint(c.Fingerprint); err != nil {
		return err
	}
	for _, m := range c.Matches {
		if err := ValidMatch(m); err != nil {
			return err
		}
	}
	return nil
}

// ValidTriageResult reports a proposal outside the closed set or with
// confidence or consistency outside [0, 1] or negative counts.
func ValidTriageResult(tr openrecall.TriageResult) error {
	switch {
	case !tr.Decision.Valid():
		return fmt.Errorf("decision %q outside the closed set", tr.Decision)
	case math.IsNaN(tr.Confidence) || tr.Confidence < 0 || tr.Confidence > 1:
		return fmt.Errorf("confidence %v outside [0, 1]", tr.Confidence)
	case math.IsNaN(tr.Consistency) || tr.Consistency < 0 || tr.Consistency > 1:
		return fmt.Errorf("consistency %v outside [0, 1]", tr.Consistency)
	case tr.StrongCount < 0 || tr.ConsistentCount < 0:
		return fmt.Errorf("negative count")
	}
	return nil
}
