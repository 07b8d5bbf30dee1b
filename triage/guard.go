package triage

import (
	"fmt"
	"math"
	"strconv"

	"github.com/openrecall/openrecall"
)

// Guard rules on the memory bypass for one alert. Bypass is true if and only
// if all five clauses hold:
//
//	(a) tr.StrongCount ≥ 1;
//	(b) tr.Consistency ≥ cfg.Consistency;
//	(c) tr.Confidence ≥ cfg.BypassConfidence;
//	(d) fp has no attack pattern and tr.Decision is benign
//	    (false_positive, duplicate or known_benign);
//	(e) the alert is not more severe than the most severe supporting
//	    memory: !openrecall.MoreSevere(tr.AlertSeverity, tr.SupportSeverity),
//	    an unknown alert counting as critical, an unknown memory as medium.
//
// Each clause's result is filled in, and Reason says why in words a person
// reads: the evidence for a bypass, or the first failing clause in the order
// above. An attack pattern blocks the bypass whatever the evidence.
func Guard(fp openrecall.Fingerprint, tr openrecall.TriageResult, cfg Config) openrecall.GuardVerdict {
	v := openrecall.GuardVerdict{
		StrongMatch:     tr.StrongCount >= 1,
		Consistent:      tr.Consistency >= cfg.Consistency,
		Confident:       tr.Confidence >= cfg.BypassConfidence,
		BenignNoAttack:  fp.AttackPattern == "" && tr.Decision.Benign(),
		SeverityCovered: !openrecall.MoreSevere(tr.AlertSeverity, tr.SupportSeverity),
	}
	v.Bypass = v.StrongMatch && v.Consistent && v.Confident && v.BenignNoAttack && v.SeverityCovered
	switch {
	case v.Bypass:
		conf, thr := versus(tr.Confidence, cfg.BypassConfidence, 3, 17)
		v.Reason = fmt.Sprintf("bypass: %s, %s %s, confidence %s ≥ %s",
			plural(tr.StrongCount, "strong match", "strong matches"), percent(tr.Consistency), tr.Decision, conf, thr)
	case !v.StrongMatch && tr.BestScore > 0 && tr.BestScore < cfg.StrongMatch:
		best, thr := versus(tr.BestScore, cfg.StrongMatch, 2, 17)
		v.Reason = fmt.Sprintf("no strong memory match (best score %s < %s) blocks bypass", best, thr)
	case !v.StrongMatch:
		v.Reason = "no strong memory match blocks bypass"
	case !v.Consistent:
		c, thr := percentVersus(tr.Consistency, cfg.Consistency)
		v.Reason = fmt.Sprintf("consistency %s < %s blocks bypass (%d of %s agree)",
			c, thr, tr.ConsistentCount, plural(tr.StrongCount, "strong match", "strong matches"))
	case !v.Confident:
		conf, thr := versus(tr.Confidence, cfg.BypassConfidence, 3, 17)
		v.Reason = fmt.Sprintf("confidence %s < %s blocks bypass (%s)",
			conf, thr, plural(tr.StrongCount, "strong match", "strong matches"))
	case fp.AttackPattern != "":
		v.Reason = fmt.Sprintf("attack pattern %s blocks bypass", fp.AttackPattern)
	case !v.BenignNoAttack:
		v.Reason = fmt.Sprintf("decision %s blocks bypass (only false_positive, duplicate or known_benign may bypass)", describe(tr.Decision))
	default:
		v.Reason = fmt.Sprintf("severity clause (e) blocks bypass: the alert (%s) is more severe than every supporting memory (most severe %s); strong model, a person approves",
			severityName(tr.AlertSeverity, openrecall.SeverityCritical), severityName(tr.SupportSeverity, openrecall.SeverityMedium))
	}
	return v
}

// Vet checks a decision a model proposed for the alert with fingerprint fp.
// It refuses a decision outside the closed set and a benign decision on an
// alert with an attack pattern; escalated and real are always accepted. The
// reason is empty when ok.
func Vet(fp openrecall.Fingerprint, proposed openrecall.Decision) (ok bool, reason string) {
	switch {
	case !proposed.Valid():
		return false, fmt.Sprintf("model proposed %q, not a decision", string(proposed))
	case proposed.Benign() && fp.HasAttack():
		return false, fmt.Sprintf("benign verdict refused on %s alert", fp.AttackPattern)
	}
	return true, ""
}

// severityName shows a severity as the clause reads it: an unknown one
// with the severity it counts as.
func severityName(s, unknownAs openrecall.Severity) string {
	if s == "" || s == openrecall.SeverityUnknown || !s.Valid() {
		return "unknown, counted as " + string(unknownAs)
	}
	return string(s)
}

func describe(d openrecall.Decision) string {
	if d == "" {
		return "(none)"
	}
	if !d.Valid() {
		return strconv.Quote(string(d))
	}
	return string(d)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// percent formats a share in [0, 1] as a whole percentage, more precise only
// when rounding would print 0% or 100% for a share that is neither.
func percent(x float64) string {
	s := strconv.FormatFloat(x*100, 'f', 0, 64)
	for d := 1; (s == "100" && x != 1 || s == "0" && x != 0) && d <= 6; d++ {
		s = strconv.FormatFloat(x*100, 'f', d, 64)
	}
	return s + "%"
}

// percentVersus formats a share and its threshold as percentages that do
// not read equal when they differ by more than float noise.
func percentVersus(x, threshold float64) (string, string) {
	thr := math.Round(threshold*100*1e6) / 1e6
	if x == threshold {
		s := strconv.FormatFloat(thr, 'f', -1, 64) + "%"
		return s, s
	}
	a, b := versus(x*100, thr, 0, 17)
	return a + "%", b + "%"
}
