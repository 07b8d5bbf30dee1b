// Package memory is openrecall's persistence layer, for SQLite and for
// PostgreSQL: it retains analyst decisions (incidents), recalls them for a
// fingerprint, and keeps the audit trail and cost curve, the durable inbox
// of serve and its leases, alert groups, exceptions, what waits for a
// person, archives, the daily budget, cockpit sessions and the outbox of
// notification intents. It is the only package that imports a database
// driver.
//
// # Backends
//
// Open takes a file path (SQLite) or a postgres:// URL (PostgreSQL) and
// returns the same Store either way; Backend names which.
//
// SQLite: one file opened in WAL mode with a busy timeout, foreign keys and
// immediate transactions, through one writer connection; recall reads
// through a small pool of read-only connections to the same file (opened
// only once the file is known to be an openrecall database of this
// binary's schema), so workers recall concurrently, from the last committed
// state, while the writer appends. The file is marked with ApplicationID;
// a file of another application is refused untouched (ErrForeign).
//
// PostgreSQL (postgres.go): a pool of writers and a pool of read-only
// readers in the URL's schema. Every write transaction takes one
// transaction-level advisory lock keyed by the schema, as SQLite's
// immediate transactions serialise writers, except the inbox's hot paths
// and the budget, which lock rows instead (withRowLocks). A Store is safe
// for concurrent use, and several Stores in one or many processes may
// share one database.
//
// # Dialect
//
// The statements are written once, in the SQL both databases share, with
// numbered placeholders $1, $2, … that both take as written: PostgreSQL's
// own, and SQLite's named parameters, which it numbers by first
// appearance, so each statement's placeholders first appear in order
// without a gap (a statement built piece by piece numbers them with
// params; a test checks every statement the tests run). Where SQLite and
// PostgreSQL spell a thing differently, the query site says so through
// the Store's dialect (dialect.go), chosen at open: like (LIKE/ILIKE),
// least and greatest (MIN/LEAST, MAX/GREATEST), insertOrIgnore with
// onConflictIgnore (INSERT OR IGNORE/ON CONFLICT DO NOTHING), indexedBy
// (SQLite's index hints; none on PostgreSQL), jsonText and jsonNotTrue
// (json_extract/jsonb operators), beginSnapshot (a deferred
// transaction/REPEATABLE READ READ ONLY), forUpdate (none/FOR UPDATE) and
// noRule (the recall argument that matches no rule). The statements that
// differ are built once per dialect (statements), so nothing is built
// per call, and no statement is rewritten at run time: the database is
// given the text the query site wrote. The recall queries number their
// parameters per dialect (+?N on SQLite, $M with the arguments each takes
// on PostgreSQL). Both schemas keep SQLite's integer flags, so a Go bool
// is passed as boolInt at the call site.
//
// # Aggregates
//
// The storage is split by job into aggregates, each a type of its own
// over the connection and dialect they share (conn), in its own files:
// Memories, retain and recall (incidents.go, search.go, forget.go,
// recallcache.go, stats.go); Inbox, serve's inbox and its leases
// (inbox.go, lease.go); Trail, the audit and cost trail, its archives,
// keying and row seals (audit.go, cost.go, trail.go, archive.go, seal.go,
// completions.go); Decisions, alert groups, exceptions and what waits for
// a person (groups.go, exceptions.go, waiting.go); Budget, serve's daily
// model budget (budget.go); Sessions, the cockpit's (sessions.go); Outbox,
// the notification intents and their dispatch (outbox.go). Store embeds
// them all, so it has every method, and keeps the few that span
// aggregates: Export and Import (memories with their exceptions),
// ForgetArchived, Complete, Size. The sink (sink.go) writes one batch of
// results across them in one transaction, the completion of their inbox
// deliveries and their notification intents included. Consumers declare the small
// interfaces they need (usecase, server, workflow, routing) and take a
// Store through them; only the composition root (cmd/openrecall) names
// *Store.
//
// # Migrations
//
// Each backend has its own history, embedded and applied one migration
// per transaction, recorded in schema_migrations (version, name,
// applied_at): migrations/ for SQLite, migrations_pg/ for PostgreSQL. A
// database whose schema is newer than the binary is refused
// (ErrNewerSchema); a read-only open never migrates (ErrOlderSchema).
// Files are named NNNN_name.sql, numbered upwards (a number may be
// skipped, never reused).
//
// The histories correspond by number. SQLite's 0001–0009 grew the schema
// before PostgreSQL was a backend; PostgreSQL starts with 0009_init.sql,
// the schema those nine reached, in one step (with none of SQLite's legacy
// rows to carry). From 0010 on every migration exists in both directories
// under the same number and name, each written in its database's SQL
// (BIGINT for INTEGER, COLLATE "C" text, identity columns for rowid), so
// both backends report the same SchemaVersion and a version check means
// the same on either (TestBackendsShareSchemaVersion holds it). The SQLite
// file explains what and why; its PostgreSQL twin may say so by
// reference.
//
// To change the schema: add migrations/NNNN_name.sql and
// migrations_pg/NNNN_name.sql with the next number, both in the same
// commit; never edit a migration that has shipped. Add the statements
// that use the change with their dialect calls where the two differ, and
// run the package's tests on both backends (OPENRECALL_TEST_BACKEND=postgres
// with OPENRECALL_PG_DSN).
//
// # Retain
//
// Retain validates and normalizes an incident (root Incident.Normalized: the
// dedupe key and a stable id derived from the canonical fingerprint, the
// decision and the content normalized for case, Unicode forms and white
// space), sets CreatedAt to the Store's clock when zero, and inserts it with
// ON CONFLICT(dedupe_key) DO NOTHING in an immediate transaction. Equivalent
// input retained twice, by one process or by two at the same moment, leaves
// one record; the second call returns the stored record and created=false.
// Times are stored as UTC unix nanoseconds (years 1678 to 2261).
//
// # Recall
//
// Recall(identity, fp, limit) is exactly (DESIGN §5):
//
//   - candidates are the memories that agree with fp on the four critical
//     fields (error_class, service_role, environment, attack_pattern; see
//     openrecall.SameCritical) and are not forgotten; no other is returned;
//   - a memory of the alert's identity (same rule and service; the alert
//     has one) scores openrecall.Similarity: 1 when identical, 89/98 when
//     one of dependency_pattern and signal_shape differs, 80/98 when both
//     do — these are the only memories that can be strong matches;
//   - every other candidate (another rule or service, no identity) is a
//     related match (Match.Related), scored openrecall.RelatedScore, at
//     most openrecall.MinStrongThreshold (0.80), and recalled only when fp
//     names an error class or a service role: an empty DNA is kinship with
//     nothing, while the alert's own memories are recalled whatever its DNA;
//   - an expired memory of the alert's identity is recalled as related;
//   - matches are ordered by score descending, then created time descending
//     (newer first), then id ascending, and the first limit are returned;
//     limit <= 0 returns an empty slice and no error.
//
// Recall reads indexes, not the table, in one prepared query. The strong
// tiers go through indexes keyed by the identity hashed with the whole
// fingerprint (ifp) and with its four critical values (ik4); the related
// tiers through the DNA indexes (fp, k4) and skip the alert's own identity.
// The tiers are the arms of one UNION ALL in rank order, each read newest
// first in index order, and the query stops at limit, so a tier is read only
// for the matches still missing; each arm compares the plain columns as
// well, so a hash collision cannot produce a wrong match. Its cost depends
// on limit, not on how many memories are stored.
//
// EnableRecallCache (analyze turns it on for its run) keeps the incidents
// each recall found, keyed by identity, fingerprint and limit; scores are
// computed afresh. The store's own retains, forgets, supersedes and imports
// empty it at once, another process's writes when PRAGMA data_version next
// says so (read at most every recheck interval). It, or EnableRecallIndex
// alone, also holds the existence index (existindex.go): the keys of the
// critical values, and of the identity with them, of every memory not
// forgotten, so that a recall no memory could answer returns without its
// query; loaded again when the data version moves, added to by the store's
// own retains.
//
// # Identity, severity, expiry, forgetting
//
// A memory records the identity and severity of its alert. The dedupe key
// stays on the source alert's id, not its identity; an equivalent retain
// with an identity fills in a stored memory that has none (schema v1
// memories, migrated without one). Forget takes a decision back: the record
// stays, marked forgotten, and is never recalled; Supersede forgets one
// memory and retains its replacement in one transaction.
//
// # Outbox
//
// Each stored result's notification intents (root Intent: a receiver, a
// kind, the episode's key; Sink.Notify gives them) are written in the
// sink's transaction with the result, only for the results it stores: a
// result fenced out of its delivery writes none, so no result is stored
// without its intents, nor an intent without its result. A dispatcher
// (serve's runner) claims them under a lease with the inbox's rules
// (lease.go: a passed lease is any other Store's to take, a former start
// of the same instance's at once, never the Store's that let it pass, nor
// one whose outcome it has not reported), oldest first, each with its
// episode's Prior, and never an intent while an earlier one of its
// episode (receiver and key) is pending: an episode is delivered in
// creation order, one intent at a time. An earlier dead letter blocks
// nothing, and RetryIntent refuses to revive one once a later intent of
// its episode was sent or is being sent. The outcome — IntentSent (with
// the receiver's delivery state, the episode's later Prior), IntentFailed
// (pending again, not before its next try) or IntentDead (a dead letter,
// listed and counted until a person retries it) — is written only under
// the claim that took it (owner and attempt), else refused with
// openrecall.ErrLeaseLost. These writes run in the store's one write
// transaction at a time, because the ordering rule reads rows other than
// those it writes. PruneOutbox deletes sent intents older than the
// retention, but keeps an open episode's Prior.
//
// # Audit and cost
//
// Audit entries are append-only (triggers refuse UPDATE and DELETE) and
// numbered by sequence. A one-row audit_head holds the last sequence and
// hash and moves in the same transaction as each append, so a deleted tail is
// detectable. Hash chaining belongs to the caller's SealFunc. Cost points
// are keyed by (batch, index); batches are listed in the order they were
// first appended to.
package memory
