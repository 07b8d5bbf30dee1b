// Package memory is openrecall's embedded memory: a SQLite adapter that
// retains analyst decisions (incidents), recalls them for a fingerprint, and
// persists the audit trail and cost curve points of the other stages. It is
// the only package that imports a database driver.
//
// # Storage
//
// One SQLite file opened in WAL mode with a busy timeout, foreign keys and
// immediate transactions, through one writer connection; recall reads
// through a small pool of read-only connections to the same file (opened
// only once the file is known to be an openrecall database of this
// binary's schema), so workers recall concurrently, from the last committed
// state, while the writer appends. Migrations are
// embedded (migrations/*.sql), applied one per transaction and recorded in
// schema_migrations; a file whose schema is newer than the binary is refused
// (ErrNewerSchema). A Store is safe for concurrent use, and several Stores in
// one or many processes may share a file.
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
// says so (read at most every recheck interval).
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
// # Audit and cost
//
// Audit entries are append-only (triggers refuse UPDATE and DELETE) and
// numbered by sequence. A one-row audit_head holds the last sequence and
// hash and moves in the same transaction as each append, so a deleted tail is
// detectable. Hash chaining belongs to the caller's SealFunc. Cost points
// are keyed by (batch, index); batches are listed in the order they were
// first appended to.
package memory
