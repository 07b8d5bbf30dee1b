package openrecall

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"time"
)

// ErrGroupDecided marks an alert group a person has decided already: it is
// closed, and a second decision is refused (a storm is one vote).
var ErrGroupDecided = errors.New("group already decided")

// StepGrouped is the route step of a group member (DESIGN §6a, §7): no
// model call, cost 0, its baseline saved, the head's decision taken.
const StepGrouped = "grouped"

// Group roles of a result.
const (
	GroupRoleHead   = "head"
	GroupRoleMember = "member"
)

// DefaultGroupWindow is how long after a group's last firing another one
// still joins it (grouping.window).
const DefaultGroupWindow = time.Hour

// GroupRef says which alert group a result belongs to and in which role
// (DESIGN §6a). The group's id is "g-" and its head's analysis id.
type GroupRef struct {
	ID             string `json:"id"`
	Role           string `json:"role"`
	HeadAnalysisID string `json:"head_analysis_id"`
	HeadAlertID    string `json:"head_alert_id"`
	// At is the time the firing was grouped on: the alert's own, else its
	// arrival.
	At time.Time `json:"at"`
}

// GroupID returns the id of the group headed by the analysis headAnalysisID.
func GroupID(headAnalysisID string) string { return "g-" + headAnalysisID }

// GroupKey is what firings of one group share: identity, canonical Alert
// DNA, status and, for an alert with an attack pattern, the sender's entity
// fields (what acted), so four hundred CI-runner shells and one intruder's
// shell are two groups. Its zero value is no key: an alert without identity
// never groups.
type GroupKey struct {
	Identity    Identity `json:"identity"`
	Fingerprint string   `json:"fingerprint"`
	Status      string   `json:"status"`
	// Entities is the canonical "name=value" list of the entity fields,
	// sorted and ";"-joined, for an alert with an attack pattern only.
	Entities string `json:"entities,omitempty"`
}

// GroupKeyOf returns the group key of alert a of identity id and Alert DNA
// fp; false when a cannot group (no identity).
func GroupKeyOf(a Alert, id Identity, fp Fingerprint) (GroupKey, bool) {
	if id.IsZero() {
		return GroupKey{}, false
	}
	k := GroupKey{Identity: id, Fingerprint: fp.String(), Status: a.Status}
	if fp.HasAttack() {
		names := make([]string, 0, len(a.Entities))
		for n := range a.Entities {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + "=" + a.Entities[n]
		}
		k.Entities = strings.Join(parts, ";")
	}
	return k, true
}

// Hash returns a stable hash of the key (32 hex digits), for storage.
func (k GroupKey) Hash() string {
	var b strings.Builder
	for _, s := range []string{k.Identity.Rule, k.Identity.Service, k.Fingerprint, k.Status, k.Entities} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// JoinsGroup reports whether a firing of severity sev at time t joins an
// open group whose head has severity head and whose last firing was at
// last, within window: it is not more severe than the head (as the guard's
// severity clause ranks them, DESIGN §6 e) and no farther than window from
// the last firing, either way (the window slides with each member).
func JoinsGroup(sev, head Severity, t, last time.Time, window time.Duration) bool {
	if MoreSevere(sev, head) {
		return false
	}
	d := t.Sub(last)
	return d <= window && -d <= window
}

// LessSevereHead reports whether a group head of severity a is less severe
// than one of b, a head of unknown severity counting as medium (as a memory
// does in the severity clause, DESIGN §6 e).
func LessSevereHead(a, b Severity) bool {
	rank := func(s Severity) int {
		if r := s.rank(); r >= 0 {
			return r
		}
		return SeverityMedium.rank()
	}
	return rank(a) < rank(b)
}

// GroupHead is what a group's members take from its head: the head's
// analysis, its decision, whether memory bypassed it, it was escalated
// without analysis or a model answered it benign, and the memories that
// supported the bypass.
type GroupHead struct {
	AnalysisID string   `json:"analysis_id"`
	AlertID    string   `json:"alert_id"`
	Decision   Decision `json:"decision"`
	Bypassed   bool     `json:"bypassed"`
	Unanalysed bool     `json:"escalated_without_analysis"`
	// ModelBenign says the head's benign decision is a model's answer
	// about that one firing (the cheap confirmer's, or one awaiting a
	// person's approval), not memory vouching for the alert: it closes no
	// member, who is escalated to the person deciding the group.
	ModelBenign bool     `json:"model_benign,omitempty"`
	Supporting  []string `json:"supporting,omitempty"`
}

// HeadOf returns what members of the group headed by r take from it.
func HeadOf(r Result) GroupHead {
	h := GroupHead{AnalysisID: r.AnalysisID, AlertID: r.Alert.ID, Decision: r.Decision, Bypassed: r.Bypassed, Unanalysed: r.EscalatedWithoutAnalysis,
		ModelBenign: !r.Bypassed && r.Decision.Benign()}
	if r.Bypassed {
		h.Supporting = append([]string(nil), r.Triage.Supporting...)
	}
	return h
}

// Group is a stored alert group (DESIGN §6a): its key, head and size, the
// span of its firings' times and, once a person decided it, the decision
// and the one memory that records it.
type Group struct {
	ID           string    `json:"id"`
	Batch        string    `json:"batch"`
	Key          GroupKey  `json:"key"`
	HeadSeverity Severity  `json:"head_severity"`
	Head         GroupHead `json:"head"`
	Size         int       `json:"size"`
	FirstAt      time.Time `json:"first_at"`
	LastAt       time.Time `json:"last_at"`
	// Decided is set once a person decided the group: it is closed, and
	// later firings start a new group.
	Decided   bool      `json:"decided"`
	Decision  Decision  `json:"decision,omitempty"`
	MemoryID  string    `json:"memory_id,omitempty"`
	Analyst   string    `json:"analyst,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// GroupMember is one firing of a stored group.
type GroupMember struct {
	GroupID    string `json:"group_id"`
	AnalysisID string `json:"analysis_id"`
	AlertID    string `json:"alert_id"`
	Role       string `json:"role"`
	// Decision is the person's decision of the group, once decided.
	Decision Decision `json:"decision,omitempty"`
}

// GroupClaim is an alert group as a shared store holds it from the moment
// a run opens it (DESIGN §13): claimed under the lock of its key before
// its head is triaged, so a firing another process receives finds it and
// joins it rather than opening a group of its own. Until the head's result
// is stored the claim is pending: Stored is false and Head unknown.
type GroupClaim struct {
	// Seq orders claims in the store; a run reads those after the last
	// one made before it started.
	Seq          int64    `json:"seq"`
	ID           string   `json:"id"`
	Key          GroupKey `json:"key"`
	Owner        string   `json:"owner"`
	HeadSeverity Severity `json:"head_severity"`
	// Last is the time of the group's last firing the store knows: the
	// head's, or the stored group's last.
	Last    time.Time `json:"last"`
	Stored  bool      `json:"stored"`
	Decided bool      `json:"decided"`
	Head    GroupHead `json:"head"`
}
