package openrecall

import (
	"errors"
	"fmt"
	"time"
)

// ErrFull marks a queue at its capacity: the caller should retry later.
var ErrFull = errors.New("full")

// ErrNoSpace marks a store with no room left for a write (a full disk, a
// size cap): nothing more can be accepted until space is made.
var ErrNoSpace = errors.New("no space left for the database")

// Alert states a receiver tracks per alert id, from the notifications it
// accepted.
const (
	AlertFiring       = "firing"
	AlertAcknowledged = "acknowledged"
	AlertResolved     = "resolved"
)

// Delivery is one record a receiver accepted into the durable inbox: an
// alert to triage, a resolved or acknowledged notice to record, or a record
// intake refused (Rejection set, Alert.Position says where it was).
type Delivery struct {
	// ID is the inbox's own number, assigned on acceptance; ids only grow.
	ID         int64     `json:"inbox_id"`
	AnalysisID string    `json:"analysis_id"`
	Endpoint   string    `json:"endpoint"`
	RequestID  string    `json:"request_id,omitempty"`
	ReceivedAt time.Time `json:"received_at"`
	Alert      Alert     `json:"alert"`
	Rejection  string    `json:"rejection,omitempty"`
	// Duplicate is set on a delivery that repeats one already accepted (the
	// same alert id, its severity not higher, its state unchanged): it is
	// not queued again, and AnalysisID names the earlier analysis.
	Duplicate bool `json:"duplicate,omitempty"`
	// State is the alert's state after this delivery (AlertFiring,
	// AlertAcknowledged or AlertResolved); empty for a rejected record.
	State string `json:"state,omitempty"`
	// Episode is the analysis id of the delivery that opened the alert's
	// firing episode this delivery belongs to (DESIGN §12b): its repeats,
	// severity rises, acknowledgement and recovery carry it. Empty when
	// this delivery opens the episode (EpisodeOf is then its own
	// analysis id) and for a rejected record.
	Episode string `json:"episode,omitempty"`
}

// EpisodeOf names the delivery's firing episode: Episode, or its own
// analysis id when it opened the episode.
func (d Delivery) EpisodeOf() string {
	if d.Episode != "" {
		return d.Episode
	}
	return d.AnalysisID
}

// Served is a delivery and, once the workers have analysed it, its result.
type Served struct {
	Delivery
	// Done is false while the delivery waits in the inbox.
	Done bool `json:"done"`
	// Cursor orders finished deliveries by completion; results?since=
	// returns those with a larger cursor.
	Cursor int64     `json:"cursor,omitempty"`
	DoneAt time.Time `json:"done_at,omitzero"`
	Result *Result   `json:"result,omitempty"`
	// Pruned is set on a finished delivery whose delivery and result
	// documents were pruned after the server's retention (PrunedAt says
	// when): only its ids, endpoint, request id, times and alert id remain,
	// and Result is nil. Its decisions, alert state, group, memories and
	// audit and cost entries are kept.
	Pruned   bool      `json:"pruned,omitempty"`
	PrunedAt time.Time `json:"pruned_at,omitzero"`
	// Integrity is "failed" on a finished delivery whose stored row does
	// not match its seal in the audit chain (ErrIntegrity): its documents
	// are withheld (Result nil, the alert reduced to its id).
	Integrity string `json:"integrity,omitempty"`
}

// ErrPruned marks a finished analysis whose delivery and result documents
// were pruned after the server's retention.
var ErrPruned = errors.New("pruned after the retention")

// PrunedError is the error of reading what a pruned analysis no longer
// holds (its alert, its result). It wraps ErrPruned.
type PrunedError struct {
	AnalysisID string
	PrunedAt   time.Time
	// Retention is the retention in force when known (0 when not).
	Retention time.Duration
}

// Error names the analysis, when it was pruned and the retention.
func (e *PrunedError) Error() string {
	ret := "server.retention"
	if e.Retention > 0 {
		ret += " (" + e.Retention.String() + ")"
	}
	return fmt.Sprintf("analysis %q finished longer ago than %s: its delivery and result were pruned on %s "+
		"(its audit entries, cost point, decisions and memories are kept): %v",
		e.AnalysisID, ret, e.PrunedAt.UTC().Format(time.RFC3339), ErrPruned)
}

// Unwrap returns ErrPruned.
func (e *PrunedError) Unwrap() error { return ErrPruned }

// ErrSchemaMismatch marks a database whose schema version is not the one
// this binary was built for, met while serving: another openrecall
// migrated it. A server refuses to claim work from it and stops.
var ErrSchemaMismatch = errors.New("database schema version differs from this binary's")

// Forgotten counts the rows serve deleted once an archive of the audit
// trail had taken their analyses (server.archive_dir, DESIGN §11).
type Forgotten struct {
	// Deliveries are pruned inbox rows.
	Deliveries int
	// Waiting are items that waited for a person; Expired of them were
	// never decided.
	Waiting, Expired int
	// Groups are alert groups, with Members member rows; ExpiredGroups of
	// them were never decided.
	Groups, Members, ExpiredGroups int
	// AlertStates are alerts' redelivery states.
	AlertStates int
	// History are records of analyses closed without a person.
	History int
}

// Total is the number of rows deleted.
func (f Forgotten) Total() int {
	return f.Deliveries + f.Waiting + f.Groups + f.Members + f.AlertStates + f.History
}
