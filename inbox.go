package openrecall

import (
	"errors"
	"time"
)

// ErrFull marks a queue at its capacity: the caller should retry later.
var ErrFull = errors.New("full")

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
}
