package jsonfast

import (
	"encoding/json"

	openrecall "github.com/openrecall/openrecall"
)

// AppendResult appends the JSON encoding of r to b: byte for byte what
// encoding/json writes for it (json.Marshal with escapeHTML, an Encoder
// with SetEscapeHTML(false) without, the Encoder's newline not included).
// It is hand-written because a result is written for every alert and the
// reflective encoder cost about a tenth of analyze's CPU; a value it
// cannot write as encoding/json would (a non-finite number, a time outside
// RFC 3339) is handed to encoding/json, with its error.
// TestAppendResultMatchesEncodingJSON fills every field of every nested
// type and compares the two.
func AppendResult(b []byte, r openrecall.Result, escapeHTML bool) ([]byte, error) {
	o := NewObject(b, escapeHTML)
	result(&o, &r)
	if out, ok := o.End(); ok {
		return out, nil
	}
	return appendMarshaled(b, r)
}

// AppendAnalysis appends the JSON encoding of a to b, as AppendResult does
// for a result (a model answer is encoded for every analysed alert).
func AppendAnalysis(b []byte, a openrecall.Analysis, escapeHTML bool) ([]byte, error) {
	o := NewObject(b, escapeHTML)
	analysis(&o, &a)
	if out, ok := o.End(); ok {
		return out, nil
	}
	return appendMarshaled(b, a)
}

// appendMarshaled appends what json.Marshal writes for v, or returns its
// error: the way out for a value the hand-written encoders met one they
// cannot write as encoding/json would (v is boxed only then).
func appendMarshaled(b []byte, v any) ([]byte, error) {
	std, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, std...), nil
}

// The members of each type, in its declaration order with its JSON names.

func result(o *Object, r *openrecall.Result) {
	n := o.Open("position")
	position(o, &r.Position)
	o.Close(n)
	o.Str("outcome", r.Outcome)
	o.Str("analysis_id", r.AnalysisID)
	o.Str("batch", r.Batch)
	n = o.Open("mode")
	o.Str("memory", r.Mode.Memory)
	o.Str("model", r.Mode.Model)
	o.Close(n)
	o.StrOmit("error", r.Error)
	n = o.Open("alert")
	alert(o, &r.Alert)
	o.Close(n)
	n = o.Open("fingerprint")
	fingerprint(o, &r.Fingerprint)
	o.Close(n)
	o.StrOmit("fingerprint_id", r.FingerprintID)
	n = o.Open("identity")
	identity(o, &r.Identity)
	o.Close(n)
	if len(r.Matches) > 0 {
		a := o.OpenArray("matches")
		for i := range r.Matches {
			n = o.OpenElem()
			match(o, &r.Matches[i])
			o.Close(n)
		}
		o.CloseArray(a)
	}
	n = o.Open("triage")
	triage(o, &r.Triage)
	o.Close(n)
	n = o.Open("guard")
	guard(o, &r.Guard)
	o.Close(n)
	o.StrOmit("decision", string(r.Decision))
	o.Bool("bypassed", r.Bypassed)
	o.Bool("escalated_without_analysis", r.EscalatedWithoutAnalysis)
	if g := r.Group; g != nil {
		n = o.Open("group")
		o.Str("id", g.ID)
		o.Str("role", g.Role)
		o.Str("head_analysis_id", g.HeadAnalysisID)
		o.Str("head_alert_id", g.HeadAlertID)
		o.Time("at", g.At)
		o.Close(n)
	}
	if p := r.Proposal; p != nil {
		n = o.Open("proposal")
		proposal(o, p)
		o.Close(n)
	}
	if e := r.Exception; e != nil {
		n = o.Open("exception")
		o.Str("id", e.ID)
		o.Str("analyst", e.Analyst)
		o.Time("expires_at", e.ExpiresAt)
		o.Close(n)
	}
	if r.Analysis != nil {
		n = o.Open("analysis")
		analysis(o, r.Analysis)
		o.Close(n)
	}
	if r.Steps == nil {
		o.Null("steps")
	} else {
		a := o.OpenArray("steps")
		for i := range r.Steps {
			n = o.OpenElem()
			routeStep(o, &r.Steps[i])
			o.Close(n)
		}
		o.CloseArray(a)
	}
	if r.Audit == nil {
		o.Null("audit")
	} else {
		a := o.OpenArray("audit")
		for i := range r.Audit {
			n = o.OpenElem()
			auditEntry(o, &r.Audit[i])
			o.Close(n)
		}
		o.CloseArray(a)
	}
	o.Int("cost_nano_usd", int64(r.Cost))
	o.Int("baseline_nano_usd", int64(r.Baseline))
	o.Int("latency_ns", int64(r.Latency))
}

func position(o *Object, p *openrecall.Position) {
	o.StrOmit("source", p.Source)
	o.IntOmit("line", int64(p.Line))
	o.Int("index", int64(p.Index))
	o.BoolOmit("has_index", p.HasIndex)
}

func alert(o *Object, a *openrecall.Alert) {
	o.Str("id", a.ID)
	o.Str("format", a.Format)
	o.StrOmit("title", a.Title)
	o.StrOmit("text", a.Text)
	o.StringMapOmit("labels", a.Labels)
	o.StringMapOmit("annotations", a.Annotations)
	o.StrOmit("severity", string(a.Severity))
	o.StrOmit("service", a.Service)
	o.StrOmit("environment", a.Environment)
	o.StrOmit("source", a.Source)
	o.StrOmit("status", a.Status)
	if !a.Timestamp.IsZero() {
		o.Time("timestamp", a.Timestamp)
	}
	n := o.Open("position")
	position(o, &a.Position)
	o.Close(n)
	o.StrOmit("sender", a.Sender)
	o.StrOmit("rule", a.Rule)
	o.BoolOmit("security", a.Security)
	o.BoolOmit("episode", a.Episode)
	o.StrOmit("sent_fingerprint", a.SentFingerprint)
	o.StringMapOmit("entities", a.Entities)
	o.IntOmit("dropped", int64(a.Dropped))
	o.StringMapOmit("origin", a.Origin)
	o.StringMapOmit("fields", a.Fields)
}

func fingerprint(o *Object, f *openrecall.Fingerprint) {
	o.Str("error_class", f.ErrorClass)
	o.Str("service_role", f.ServiceRole)
	o.Str("dependency_pattern", f.DependencyPattern)
	o.Str("signal_shape", f.SignalShape)
	o.Str("attack_pattern", f.AttackPattern)
	o.Str("environment", f.Environment)
}

func identity(o *Object, i *openrecall.Identity) {
	o.Str("rule", i.Rule)
	o.Str("service", i.Service)
}

func match(o *Object, m *openrecall.Match) {
	n := o.Open("incident")
	incident(o, &m.Incident)
	o.Close(n)
	o.Float("score", m.Score)
	o.BoolOmit("related", m.Related)
}

func incident(o *Object, inc *openrecall.Incident) {
	o.Str("id", inc.ID)
	n := o.Open("fingerprint")
	fingerprint(o, &inc.Fingerprint)
	o.Close(n)
	o.Str("decision", string(inc.Decision))
	o.StrOmit("note", inc.Note)
	o.StringsOmit("dead_ends", inc.DeadEnds)
	o.StrOmit("analyst", inc.Analyst)
	o.IntOmit("business_impact_minutes", int64(inc.ImpactMinutes))
	o.StrOmit("source_alert_id", inc.SourceAlertID)
	o.Time("created_at", inc.CreatedAt)
	o.Str("dedupe_key", inc.DedupeKey)
	if !inc.Identity.IsZero() {
		n = o.Open("identity")
		identity(o, &inc.Identity)
		o.Close(n)
	}
	o.StrOmit("severity", string(inc.Severity))
	if !inc.ExpiresAt.IsZero() {
		o.Time("expires_at", inc.ExpiresAt)
	}
	if !inc.ForgottenAt.IsZero() {
		o.Time("forgotten_at", inc.ForgottenAt)
	}
	o.StringMapOmit("entities", inc.Entities)
}

func proposal(o *Object, p *openrecall.Proposal) {
	o.Str("id", p.ID)
	n := o.Open("identity")
	identity(o, &p.Identity)
	o.Close(n)
	n = o.Open("dna")
	fingerprint(o, &p.DNA)
	o.Close(n)
	if p.Match == nil {
		o.Null("match")
	} else {
		o.Key("match")
		o.b = AppendStringMap(o.b, p.Match, o.escapeHTML)
	}
	o.Str("decision", string(p.Decision))
	o.Str("max_severity", string(p.MaxSeverity))
	o.Int("expiry_ns", int64(p.Expiry))
	o.Strings("supporting", p.Supporting)
	o.Str("alert_id", p.AlertID)
	if !p.CreatedAt.IsZero() {
		o.Time("created_at", p.CreatedAt)
	}
	o.StrOmit("approved_as", p.ApprovedAs)
}

func triage(o *Object, t *openrecall.TriageResult) {
	o.Str("decision", string(t.Decision))
	o.Float("confidence", t.Confidence)
	o.Int("consistent_decision_count", int64(t.ConsistentCount))
	o.Int("strong_match_count", int64(t.StrongCount))
	o.Float("consistency", t.Consistency)
	o.Float("best_score", t.BestScore)
	o.StringsOmit("supporting_matches", t.Supporting)
	o.Bool("requires_human_approval", t.RequiresHumanApproval)
	o.StrOmit("escalation_reason", t.EscalationReason)
	o.StrOmit("alert_severity", string(t.AlertSeverity))
	o.StrOmit("support_severity", string(t.SupportSeverity))
}

func guard(o *Object, v *openrecall.GuardVerdict) {
	o.Bool("bypass", v.Bypass)
	o.Bool("strong_match", v.StrongMatch)
	o.Bool("consistent", v.Consistent)
	o.Bool("confident", v.Confident)
	o.Bool("benign_no_attack", v.BenignNoAttack)
	o.Bool("severity_covered", v.SeverityCovered)
	o.Str("reason", v.Reason)
}

func analysis(o *Object, a *openrecall.Analysis) {
	o.Str("decision", string(a.Decision))
	o.Float("confidence", a.Confidence)
	o.StrOmit("summary", a.Summary)
	o.StringsOmit("hypotheses", a.Hypotheses)
	o.StringsOmit("verification_commands", a.Verify)
	o.StringsOmit("next_steps", a.NextSteps)
	o.StringsOmit("skip_paths", a.SkipPaths)
	o.StringsOmit("cited_memory_ids", a.CitedMemory)
	o.StrOmit("model", a.Model)
	o.Bool("live", a.Live)
}

func routeStep(o *Object, s *openrecall.RouteStep) {
	o.Str("step", s.Step)
	o.StrOmit("model", s.Model)
	o.StrOmit("tier", string(s.Tier))
	o.Bool("live", s.Live)
	o.BoolOmit("skipped", s.Skipped)
	o.Str("reason", s.Reason)
	o.Str("outcome", s.Outcome)
	o.IntOmit("memory_hits", int64(s.MemoryHits))
	o.StrOmit("proposed_decision", string(s.Proposed))
	o.StrOmit("escalation_reason", s.EscalationReason)
	o.IntOmit("prompt_tokens", int64(s.PromptTokens))
	o.IntOmit("completion_tokens", int64(s.CompletionTokens))
	o.StrOmit("usage_anomaly", s.UsageAnomaly)
	o.Int("cost_nano_usd", int64(s.Cost))
	o.Int("baseline_nano_usd", int64(s.Baseline))
	o.Int("latency_ns", int64(s.Latency))
	n := o.Open("budget")
	o.Int("limit", int64(s.Budget.Limit))
	o.Int("spent", int64(s.Budget.Spent))
	o.BoolOmit("exhausted", s.Budget.Exhausted)
	o.Close(n)
}

func auditEntry(o *Object, e *openrecall.AuditEntry) {
	o.Int("sequence", e.Sequence)
	o.Str("analysis_id", e.AnalysisID)
	o.Str("batch", e.Batch)
	o.Str("alert_id", e.AlertID)
	o.Int("step_index", int64(e.StepIndex))
	o.Str("step", e.Step)
	o.StrOmit("model", e.Model)
	o.StrOmit("tier", string(e.Tier))
	o.Str("reason", e.Reason)
	o.Str("outcome", e.Outcome)
	o.Int("memory_hits", int64(e.MemoryHits))
	o.StrOmit("proposed_decision", string(e.ProposedDecision))
	o.StrOmit("escalation_reason", e.EscalationReason)
	o.Bool("live", e.Live)
	o.Bool("skipped", e.Skipped)
	o.Int("cost_nano_usd", int64(e.Cost))
	o.Int("baseline_nano_usd", int64(e.Baseline))
	o.Int("savings_nano_usd", int64(e.Savings))
	o.Int("latency_ns", int64(e.Latency))
	o.Time("time", e.Time)
	o.Str("prev_hash", e.PrevHash)
	o.Str("hash", e.Hash)
}
