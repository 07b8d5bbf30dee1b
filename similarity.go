package openrecall

// Similarity weights, in points out of SimilarityTotal. The four critical
// fields (error class, service role, environment, attack pattern) weigh 20
// points each and the two descriptive fields (dependency pattern, signal
// shape) 9 each, so that:
//
//   - identical fingerprints score exactly 1;
//   - a fingerprint that differs in any critical field scores at most
//     78/98 ≈ 0.796, below every allowed strong-match threshold (> 0.80);
//   - one that differs only in one descriptive field scores 89/98 ≈ 0.908;
//   - every match that agrees on all four critical fields outscores every
//     match that does not, which lets memory rank matches with indexes
//     instead of a scan.
const (
	WeightErrorClass        = 20
	WeightServiceRole       = 20
	WeightDependencyPattern = 9
	WeightSignalShape       = 9
	WeightAttackPattern     = 20
	WeightEnvironment       = 20
	SimilarityTotal         = WeightErrorClass + WeightServiceRole + WeightDependencyPattern + WeightSignalShape + WeightAttackPattern + WeightEnvironment

	// MinStrongThreshold is the exclusive lower bound of a valid strong-match
	// threshold: at or below it, a match that differs in a critical field
	// could count as strong. It is also the cap of every related match's
	// score (RelatedScore): one constant, so no allowed threshold can ever
	// make a memory of another alert a strong match.
	MinStrongThreshold = 0.80
)

// SimilarityPoints returns the weighted number of equal fields of a and b,
// in [0, SimilarityTotal]. Two unknown (empty) values count as equal.
func SimilarityPoints(a, b Fingerprint) int {
	p := 0
	if a.ErrorClass == b.ErrorClass {
		p += WeightErrorClass
	}
	if a.ServiceRole == b.ServiceRole {
		p += WeightServiceRole
	}
	if a.DependencyPattern == b.DependencyPattern {
		p += WeightDependencyPattern
	}
	if a.SignalShape == b.SignalShape {
		p += WeightSignalShape
	}
	if a.AttackPattern == b.AttackPattern {
		p += WeightAttackPattern
	}
	if a.Environment == b.Environment {
		p += WeightEnvironment
	}
	return p
}

// Similarity returns the match score of b against a in [0, 1]: 1 for
// identical fingerprints, symmetric, and below MinStrongThreshold whenever a
// critical field differs.
func Similarity(a, b Fingerprint) float64 {
	return float64(SimilarityPoints(a, b)) / float64(SimilarityTotal)
}

// SameCritical reports whether a and b agree on the four critical fields.
func SameCritical(a, b Fingerprint) bool {
	return a.ErrorClass == b.ErrorClass && a.ServiceRole == b.ServiceRole &&
		a.AttackPattern == b.AttackPattern && a.Environment == b.Environment
}

// RelatedScore returns the score of a related match (a memory of another
// identity, or one that does not vote): Similarity scaled by
// MinStrongThreshold, so at most MinStrongThreshold and ordered as
// Similarity is.
func RelatedScore(a, b Fingerprint) float64 {
	return MinStrongThreshold * Similarity(a, b)
}
