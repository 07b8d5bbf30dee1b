package usecase

import (
	"context"
	"time"

	"github.com/openrecall/openrecall"
)

// Store is the memory the use cases read and write. memory.Store satisfies
// it.
type Store interface {
	Retain(ctx context.Context, inc openrecall.Incident) (openrecall.Incident, bool, error)
	Supersede(ctx context.Context, old string, inc openrecall.Incident) (stored, forgotten openrecall.Incident, created bool, err error)
	Forget(ctx context.Context, id string) (openrecall.Incident, bool, error)
	Recall(ctx context.Context, id openrecall.Identity, fp openrecall.Fingerprint, limit int) ([]openrecall.Match, error)
	Served(ctx context.Context, analysisID string) (openrecall.Served, error)
}

// Fingerprinter reduces an alert to its Alert DNA and its identity.
// fingerprint.Extractor satisfies it.
type Fingerprinter interface {
	Extract(a openrecall.Alert) openrecall.Fingerprint
	Identify(a openrecall.Alert) openrecall.Identity
}

// App runs the use cases over one memory. It is safe for concurrent use
// when its Store is.
type App struct {
	// Store is the memory; required.
	Store Store
	// Fingerprinter fingerprints and identifies the alerts decisions are
	// about; required to retain about alerts or analyses.
	Fingerprinter Fingerprinter
	// Audit appends entries to the audit trail, sealed with the trail's
	// key; required to forget or supersede (a decision taken back is
	// audited).
	Audit func(ctx context.Context, entries []openrecall.AuditEntry) error
	// ReadTrail reads the whole audit trail in one snapshot; required,
	// with Keys, to verify the trail or sign its head.
	ReadTrail func(ctx context.Context, r TrailReader) error
	// ReadTrailPrefix reads, in one snapshot, the trail's state and the
	// prefix of its chains older than a cut (memory.Store.ReadTrailPrefix);
	// required, with Archives, ReadTrail and Keys, to archive.
	ReadTrailPrefix func(ctx context.Context, before time.Time, r TrailReader) error
	// Archives keeps the archive records; required to archive or to check
	// an archive file.
	Archives ArchiveStore
	// AnalysisLinks reads the trail's state and one analysis's audit
	// entries with the entry before each (memory.Store.AnalysisLinks);
	// required, with Keys, to check an analysis's entries in place.
	AnalysisLinks func(ctx context.Context, analysisID string) (openrecall.TrailState, []openrecall.AuditEntry, error)
	// Keys finds the audit key.
	Keys AuditKeys
	// Groups stores the alert groups a person decides (DESIGN §6a);
	// required to decide or list groups.
	Groups GroupStore
	// Exceptions stores the exceptions people approve and the proposals
	// memory makes (DESIGN §6b); required for the exception use cases.
	Exceptions     ExceptionStore
	ExceptionRules ExceptionRules
	// Expiries records in the audit trail, with actor system, the
	// exceptions expired since the last writing command; nil records none.
	// Writing use cases call it through App.RecordExpiries.
	Expiries func(ctx context.Context) error
	// Waiting keeps what waits for a person; required for the queue and
	// for decisions about analyses, and, when set, a retain about an
	// analysis that waits settles it (marked decided, audited).
	Waiting WaitingStore
	// Closures keeps what was closed without a person; required for the
	// history and a person's "this was wrong".
	Closures HistoryStore
	// Now is the clock of decisions (default: time.Now in UTC).
	Now func() time.Time
	// Retention is serve's server.retention, named in the error about an
	// analysis whose documents were pruned (0 when unknown).
	Retention time.Duration
}
