package openrecall

import "encoding/json"

// AppendJSON appends the JSON encoding of r to b: byte for byte what
// encoding/json writes for it (json.Marshal with escapeHTML, an Encoder
// with SetEscapeHTML(false) without, the Encoder's newline not included).
// It is hand-written because a result is written for every alert and the
// reflective encoder cost about a tenth of analyze's CPU; a value it
// cannot write as encoding/json would (a non-finite number, a time outside
// RFC 3339) is handed to encoding/json, with its error.
// TestResultAppendJSONMatchesEncodingJSON fills every field of every
// nested type and compares the two.
func (r Result) AppendJSON(b []byte, escapeHTML bool) ([]byte, error) {
	o := jsonObject{b: append(b, '{'), escapeHTML: escapeHTML, ok: true}
	r.appendMembers(&o)
	if o.ok {
		return append(o.b, '}'), nil
	}
	return appendMarshaled(b, r)
}

// AppendJSON appends the JSON encoding of a to b, as Result.AppendJSON does
// for a result (a model answer is encoded for every analysed alert).
func (a Analysis) AppendJSON(b []byte, escapeHTML bool) ([]byte, error) {
	o := jsonObject{b: append(b, '{'), escapeHTML: escapeHTML, ok: true}
	a.appendMembers(&o)
	if o.ok {
		return append(o.b, '}'), nil
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

func (r Result) appendMembers(o *jsonObject) {
	o.object("position", r.Position.appendMembers)
	o.str("outcome", r.Outcome)
	o.str("analysis_id", r.AnalysisID)
	o.str("batch", r.Batch)
	o.object("mode", func(o *jsonObject) {
		o.str("memory", r.Mode.Memory)
		o.str("model", r.Mode.Model)
	})
	o.strOmit("error", r.Error)
	o.object("alert", r.Alert.appendMembers)
	o.object("fingerprint", r.Fingerprint.appendMembers)
	o.strOmit("fingerprint_id", r.FingerprintID)
	o.object("identity", r.Identity.appendMembers)
	if len(r.Matches) > 0 {
		o.array("matches", len(r.Matches), false, func(i int, o *jsonObject) { r.Matches[i].appendMembers(o) })
	}
	o.object("triage", r.Triage.appendMembers)
	o.object("guard", r.Guard.appendMembers)
	o.strOmit("decision", string(r.Decision))
	o.bool("bypassed", r.Bypassed)
	o.bool("escalated_without_analysis", r.EscalatedWithoutAnalysis)
	if r.Analysis != nil {
		o.object("analysis", r.Analysis.appendMembers)
	}
	o.array("steps", len(r.Steps), r.Steps == nil, func(i int, o *jsonObject) { r.Steps[i].appendMembers(o) })
	o.array("audit", len(r.Audit), r.Audit == nil, func(i int, o *jsonObject) { r.Audit[i].appendMembers(o) })
	o.int("cost_nano_usd", int64(r.Cost))
	o.int("baseline_nano_usd", int64(r.Baseline))
	o.int("latency_ns", int64(r.Latency))
}

func (p Position) appendMembers(o *jsonObject) {
	o.strOmit("source", p.Source)
	o.intOmit("line", int64(p.Line))
	o.int("index", int64(p.Index))
	o.boolOmit("has_index", p.HasIndex)
}

func (a Alert) appendMembers(o *jsonObject) {
	o.str("id", a.ID)
	o.str("format", a.Format)
	o.strOmit("title", a.Title)
	o.strOmit("text", a.Text)
	o.stringMapOmit("labels", a.Labels)
	o.stringMapOmit("annotations", a.Annotations)
	o.strOmit("severity", string(a.Severity))
	o.strOmit("service", a.Service)
	o.strOmit("environment", a.Environment)
	o.strOmit("source", a.Source)
	o.strOmit("status", a.Status)
	if !a.Timestamp.IsZero() {
		o.time("timestamp", a.Timestamp)
	}
	o.object("position", a.Position.appendMembers)
	o.strOmit("sender", a.Sender)
	o.strOmit("rule", a.Rule)
	o.boolOmit("security", a.Security)
	o.boolOmit("episode", a.Episode)
	o.stringMapOmit("entities", a.Entities)
	o.intOmit("dropped", int64(a.Dropped))
	o.stringMapOmit("origin", a.Origin)
}

func (f Fingerprint) appendMembers(o *jsonObject) {
	o.str("error_class", f.ErrorClass)
	o.str("service_role", f.ServiceRole)
	o.str("dependency_pattern", f.DependencyPattern)
	o.str("signal_shape", f.SignalShape)
	o.str("attack_pattern", f.AttackPattern)
	o.str("environment", f.Environment)
}

func (i Identity) appendMembers(o *jsonObject) {
	o.str("rule", i.Rule)
	o.str("service", i.Service)
}

func (m Match) appendMembers(o *jsonObject) {
	o.object("incident", m.Incident.appendMembers)
	o.float("score", m.Score)
	o.boolOmit("related", m.Related)
}

func (inc Incident) appendMembers(o *jsonObject) {
	o.str("id", inc.ID)
	o.object("fingerprint", inc.Fingerprint.appendMembers)
	o.str("decision", string(inc.Decision))
	o.strOmit("note", inc.Note)
	o.stringsOmit("dead_ends", inc.DeadEnds)
	o.strOmit("analyst", inc.Analyst)
	o.intOmit("business_impact_minutes", int64(inc.ImpactMinutes))
	o.strOmit("source_alert_id", inc.SourceAlertID)
	o.time("created_at", inc.CreatedAt)
	o.str("dedupe_key", inc.DedupeKey)
	if !inc.Identity.IsZero() {
		o.object("identity", inc.Identity.appendMembers)
	}
	o.strOmit("severity", string(inc.Severity))
	if !inc.ExpiresAt.IsZero() {
		o.time("expires_at", inc.ExpiresAt)
	}
	if !inc.ForgottenAt.IsZero() {
		o.time("forgotten_at", inc.ForgottenAt)
	}
}

func (t TriageResult) appendMembers(o *jsonObject) {
	o.str("decision", string(t.Decision))
	o.float("confidence", t.Confidence)
	o.int("consistent_decision_count", int64(t.ConsistentCount))
	o.int("strong_match_count", int64(t.StrongCount))
	o.float("consistency", t.Consistency)
	o.float("best_score", t.BestScore)
	o.stringsOmit("supporting_matches", t.Supporting)
	o.bool("requires_human_approval", t.RequiresHumanApproval)
	o.strOmit("escalation_reason", t.EscalationReason)
	o.strOmit("alert_severity", string(t.AlertSeverity))
	o.strOmit("support_severity", string(t.SupportSeverity))
}

func (v GuardVerdict) appendMembers(o *jsonObject) {
	o.bool("bypass", v.Bypass)
	o.bool("strong_match", v.StrongMatch)
	o.bool("consistent", v.Consistent)
	o.bool("confident", v.Confident)
	o.bool("benign_no_attack", v.BenignNoAttack)
	o.bool("severity_covered", v.SeverityCovered)
	o.str("reason", v.Reason)
}

func (a *Analysis) appendMembers(o *jsonObject) {
	o.str("decision", string(a.Decision))
	o.float("confidence", a.Confidence)
	o.strOmit("summary", a.Summary)
	o.stringsOmit("hypotheses", a.Hypotheses)
	o.stringsOmit("verification_commands", a.Verify)
	o.stringsOmit("next_steps", a.NextSteps)
	o.stringsOmit("skip_paths", a.SkipPaths)
	o.stringsOmit("cited_memory_ids", a.CitedMemory)
	o.strOmit("model", a.Model)
	o.bool("live", a.Live)
}

func (s RouteStep) appendMembers(o *jsonObject) {
	o.str("step", s.Step)
	o.strOmit("model", s.Model)
	o.strOmit("tier", string(s.Tier))
	o.bool("live", s.Live)
	o.boolOmit("skipped", s.Skipped)
	o.str("reason", s.Reason)
	o.str("outcome", s.Outcome)
	o.intOmit("memory_hits", int64(s.MemoryHits))
	o.strOmit("proposed_decision", string(s.Proposed))
	o.strOmit("escalation_reason", s.EscalationReason)
	o.intOmit("prompt_tokens", int64(s.PromptTokens))
	o.intOmit("completion_tokens", int64(s.CompletionTokens))
	o.int("cost_nano_usd", int64(s.Cost))
	o.int("baseline_nano_usd", int64(s.Baseline))
	o.int("latency_ns", int64(s.Latency))
	o.object("budget", func(o *jsonObject) {
		o.int("limit", int64(s.Budget.Limit))
		o.int("spent", int64(s.Budget.Spent))
		o.boolOmit("exhausted", s.Budget.Exhausted)
	})
}

func (e AuditEntry) appendMembers(o *jsonObject) {
	o.int("sequence", e.Sequence)
	o.str("analysis_id", e.AnalysisID)
	o.str("batch", e.Batch)
	o.str("alert_id", e.AlertID)
	o.int("step_index", int64(e.StepIndex))
	o.str("step", e.Step)
	o.strOmit("model", e.Model)
	o.strOmit("tier", string(e.Tier))
	o.str("reason", e.Reason)
	o.str("outcome", e.Outcome)
	o.int("memory_hits", int64(e.MemoryHits))
	o.strOmit("proposed_decision", string(e.ProposedDecision))
	o.strOmit("escalation_reason", e.EscalationReason)
	o.bool("live", e.Live)
	o.bool("skipped", e.Skipped)
	o.int("cost_nano_usd", int64(e.Cost))
	o.int("baseline_nano_usd", int64(e.Baseline))
	o.int("savings_nano_usd", int64(e.Savings))
	o.int("latency_ns", int64(e.Latency))
	o.time("time", e.Time)
	o.str("prev_hash", e.PrevHash)
	o.str("hash", e.Hash)
}
