package memory

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// fpKey is the indexed key of a whole fingerprint: the first 8 bytes of the
// SHA-256 of its canonical string. Queries also compare the six columns, so
// a hash collision can never return a wrong match.
func fpKey(fp openrecall.Fingerprint) int64 {
	sum := sha256.Sum256([]byte(fp.String()))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// k4Key is the indexed key of the four critical values (error class, service
// role, attack pattern, environment).
func k4Key(fp openrecall.Fingerprint) int64 {
	h := sha256.New()
	for _, v := range []string{fp.ErrorClass, fp.ServiceRole, fp.AttackPattern, fp.Environment} {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]))
}

// identKey returns the indexed key of an identity together with a part of
// the fingerprint (the whole canonical string, or the critical values): 0
// when the identity is absent, so memories without one never reach the
// identity indexes' strong tiers.
func identKey(id openrecall.Identity, part string) int64 {
	if id.IsZero() {
		return 0
	}
	h := sha256.New()
	h.Write([]byte(id.Rule))
	h.Write([]byte{0})
	h.Write([]byte(id.Service))
	h.Write([]byte{0})
	h.Write([]byte(part))
	k := int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]))
	if k == 0 {
		k = 1
	}
	return k
}

// ifpKey and ik4Key are the indexed keys of an identity with the whole
// fingerprint and with its four critical values.
func ifpKey(id openrecall.Identity, fp openrecall.Fingerprint) int64 {
	return identKey(id, fp.String())
}

func ik4Key(id openrecall.Identity, fp openrecall.Fingerprint) int64 {
	return identKey(id, fp.ErrorClass+"\x00"+fp.ServiceRole+"\x00"+fp.AttackPattern+"\x00"+fp.Environment)
}

const incidentColumns = `id, dedupe_key, error_class, service_role, dependency_pattern, signal_shape,
	attack_pattern, environment, decision, note, dead_ends, analyst, impact_minutes, source_alert_id, created_at,
	rule, service, severity, expires_at, forgotten_at, entities, seal`

const insertIncident = `INSERT INTO incidents (id, dedupe_key, fp, k4, error_class, service_role,
	dependency_pattern, signal_shape, attack_pattern, environment, decision, note, dead_ends,
	analyst, impact_minutes, source_alert_id, created_at, rule, service, severity, ifp, ik4,
	expires_at, forgotten_at, entities)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)
	ON CONFLICT (dedupe_key) DO NOTHING`

// fillIdentity gives a stored memory without an identity the identity (and
// severity) of an equivalent retain that has one: re-seeding or re-importing
// with identities restores the vote of memories from before identity
// existed (DESIGN §5). A memory that has an identity is never changed.
const fillIdentity = `UPDATE incidents SET rule = $1, service = $2, severity = $3, ifp = $4, ik4 = $5
	WHERE dedupe_key = $6 AND rule = '' AND $7 <> ''`

// fillEntities gives a stored memory without entity fields (retained
// before migration 0007) those of an equivalent retain that has them.
const fillEntities = `UPDATE incidents SET entities = $1 WHERE dedupe_key = $2 AND entities = '{}'`

// The recall query's parameters, numbered so that every tier shares them
// (recallArgs gives them in this order). On SQLite each is written +?N
// (numbered.p): SQLite marks a statement for re-preparing on every new
// binding when a bare parameter could inform its plan (a LIMIT, an
// equality it filters rows by), and the driver clears the bindings before
// each run, so a bare ?N would parse and plan the whole query again on
// every recall. The unary plus changes no value, and the plan is pinned by
// INDEXED BY anyway. On PostgreSQL they are $M, numbered as the statement
// uses them (recallStatement.pick).
//
// ?1 ifp, ?2 ik4: the identity keys; ?3 fp, ?4 k4: the DNA keys.
// ?5–?8: the critical values; ?9 dependency pattern, ?10 signal shape;
// ?11 rule, ?12 service; ?13 the limit.
const (
	argIFP = 1 + iota
	argIK4
	argFP
	argK4
	argErrorClass
	argServiceRole
	argAttackPattern
	argEnvironment
	argDependency
	argShape
	argRule
	argService
	argLimit
)

// recallText builds the recall queries of one dialect.
type recallText struct {
	d dialect
	numbered
}

// critical compares the critical fields.
func (r *recallText) critical() string {
	return `error_class = ` + r.p(argErrorClass) + ` AND service_role = ` + r.p(argServiceRole) +
		` AND attack_pattern = ` + r.p(argAttackPattern) + ` AND environment = ` + r.p(argEnvironment)
}

// The descriptive conditions of the tiers.
func (r *recallText) condExact() string {
	return `dependency_pattern = ` + r.p(argDependency) + ` AND signal_shape = ` + r.p(argShape)
}

func (r *recallText) condShapeDiffers() string {
	return `dependency_pattern = ` + r.p(argDependency) + ` AND signal_shape <> ` + r.p(argShape)
}

func (r *recallText) condDependencyDiffers() string {
	return `signal_shape = ` + r.p(argShape) + ` AND dependency_pattern <> ` + r.p(argDependency)
}

func (r *recallText) condBothDiffer() string {
	return `dependency_pattern <> ` + r.p(argDependency) + ` AND signal_shape <> ` + r.p(argShape)
}

// sameIdentity selects memories of the alert's identity (the strong
// tiers), otherIdentity every other memory (the related tiers).
func (r *recallText) sameIdentity() string {
	return `rule = ` + r.p(argRule) + ` AND service = ` + r.p(argService)
}

func (r *recallText) otherIdentity() string {
	return `(rule <> ` + r.p(argRule) + ` OR service <> ` + r.p(argService) + `)`
}

// newestFirst orders a tier, and limits it to what recall asks for.
func (r *recallText) newestFirst() string {
	return ` ORDER BY created_at DESC, id LIMIT ` + r.p(argLimit)
}

// tierSelect selects one tier's memories: key writes the indexed key
// condition, index the index the select is pinned to (INDEXED BY on
// SQLite), cond the tier's descriptive condition and ident the identity
// condition. It also compares the plain columns, so it is exact even if
// two keys collide. Forgotten memories are never recalled. The conditions
// are written in the order the text has them (Go calls the functions of
// an expression left to right), so that PostgreSQL's parameters first
// appear in order $1, $2, … (numbered.p).
func (r *recallText) tierSelect(index string, key, cond, ident func() string) string {
	return `SELECT ` + incidentColumns + ` FROM incidents` + r.d.indexedBy(index) + `
	WHERE ` + key() + ` AND ` + r.critical() + ` AND ` + cond() + ` AND ` + ident() + ` AND forgotten_at IS NULL`
}

// family is one family of memories: the alert's identity (strong tiers,
// through the identity indexes) or the related ones (through the DNA
// indexes).
type family struct {
	strong           bool
	fpIndex, fpArg   string
	k4Prefix         string
	fpParam, k4Param int
}

var (
	strongFamily  = family{strong: true, fpIndex: "incidents_ifp", fpArg: "ifp", k4Prefix: "incidents_ik4", fpParam: argIFP, k4Param: argIK4}
	relatedFamily = family{fpIndex: "incidents_fp", fpArg: "fp", k4Prefix: "incidents_k4", fpParam: argFP, k4Param: argK4}
)

// family returns the tiers of one family of memories, best first: the
// exact fingerprint, then the two tiers where one descriptive field
// differs merged newer first, then both differ. Each is a subquery
// ordered newer first and limited.
func (r *recallText) family(f family) []string {
	ident := r.otherIdentity
	k4Col := "k4"
	if f.strong {
		ident = r.sameIdentity
		k4Col = "ik4"
	}
	fpKey := func() string { return f.fpArg + ` = ` + r.p(f.fpParam) }
	k4Key := func() string { return k4Col + ` = ` + r.p(f.k4Param) }
	exact := `SELECT * FROM (` + r.tierSelect(f.fpIndex, fpKey, r.condExact, ident) + r.newestFirst() + `) AS exact`
	dep := r.tierSelect(f.k4Prefix+"_dep", k4Key, r.condShapeDiffers, ident)
	shape := r.tierSelect(f.k4Prefix+"_shape", k4Key, r.condDependencyDiffers, ident)
	one := `SELECT * FROM (` + dep + `
	UNION ALL ` + shape + r.newestFirst() + `) AS one_differs`
	both := `SELECT * FROM (` + r.tierSelect(f.k4Prefix, k4Key, r.condBothDiffer, ident) + r.newestFirst() + `) AS both_differ`
	return []string{exact, one, both}
}

// recallStatement is one recall query in one dialect: its text, and on
// PostgreSQL the recallArgs it takes, by number, in the order of its
// parameters (nil: all of them, as numbered).
type recallStatement struct {
	text string
	pick []int
}

// recallQuery joins the tiers of families, best first, into one query of
// dialect d that returns the first limit rows of their concatenation.
// UNION ALL without an ORDER BY of its own yields its arms in order
// (SQLite runs them one after the other and stops at the LIMIT, so later
// tiers are not read once the earlier ones filled it; PostgreSQL's
// Append does the same without parallel workers, which openPostgres
// turns off); every arm reads an index in its order (the EXPLAIN QUERY
// PLAN test checks it).
func recallQuery(d dialect, families ...family) recallStatement {
	r := &recallText{d: d, numbered: numbered{d: d}}
	var arms []string
	for _, f := range families {
		arms = append(arms, r.family(f)...)
	}
	text := strings.Join(arms, "\nUNION ALL\n") + "\nLIMIT " + r.p(argLimit)
	return recallStatement{text: text, pick: r.pick}
}

// recallStatements are the recall queries of one dialect, one per
// combination of families an alert reads: an alert with an identity reads
// its own tiers first, and the related tiers only when its DNA names an
// error class or a service role.
type recallStatements struct {
	strongRelated, strongOnly, relatedOnly recallStatement
}

func newRecallStatements(d dialect) recallStatements {
	return recallStatements{
		strongRelated: recallQuery(d, strongFamily, relatedFamily),
		strongOnly:    recallQuery(d, strongFamily),
		relatedOnly:   recallQuery(d, relatedFamily),
	}
}

// all lists the recall queries, for preparing.
func (r recallStatements) all() []recallStatement {
	return []recallStatement{r.strongRelated, r.strongOnly, r.relatedOnly}
}

// recallArgs returns the arguments of the recall queries of dialect d,
// numbered as the constants above say; for a PostgreSQL statement
// (pick not nil) the ones it takes, in its order.
func recallArgs(d dialect, pick []int, id openrecall.Identity, fp openrecall.Fingerprint, limit int) []any {
	rule := id.Rule
	if id.IsZero() {
		rule = d.noRule()
	}
	args := []any{ifpKey(id, fp), ik4Key(id, fp), fpKey(fp), k4Key(fp), fp.ErrorClass, fp.ServiceRole,
		fp.AttackPattern, fp.Environment, fp.DependencyPattern, fp.SignalShape, rule, id.Service, limit}
	if pick == nil {
		return args
	}
	picked := make([]any, len(pick))
	for i, n := range pick {
		picked[i] = args[n-1]
	}
	return picked
}

type rowScanner interface {
	Scan(dest ...any) error
}

func scanIncident(r rowScanner) (openrecall.Incident, error) {
	inc, _, err := scanIncidentSealed(r, nil)
	return inc, err
}

// scanIncidentSealed scans a row of incidentColumns (and extra after them)
// and returns its seal; with content not nil, it also sets *content to the
// encoding its seal covers: every column of incidentColumns but the seal,
// as stored (the keys fp, k4, ifp and ik4 are not read as truth: recall
// compares the plain columns).
func scanIncidentSealed(r rowScanner, content *[]byte, extra ...any) (openrecall.Incident, string, error) {
	var (
		inc      openrecall.Incident
		deadEnds string
		created  int64
		decision string
		severity string
		expires  sql.NullInt64
		forgot   sql.NullInt64
		entities string
		seal     string
	)
	err := r.Scan(append([]any{&inc.ID, &inc.DedupeKey, &inc.Fingerprint.ErrorClass, &inc.Fingerprint.ServiceRole,
		&inc.Fingerprint.DependencyPattern, &inc.Fingerprint.SignalShape, &inc.Fingerprint.AttackPattern,
		&inc.Fingerprint.Environment, &decision, &inc.Note, &deadEnds, &inc.Analyst, &inc.ImpactMinutes,
		&inc.SourceAlertID, &created, &inc.Identity.Rule, &inc.Identity.Service, &severity, &expires, &forgot, &entities, &seal}, extra...)...)
	if err != nil {
		return openrecall.Incident{}, "", err
	}
	if content != nil {
		e := rowEnc{b: (*content)[:0]}
		fp := inc.Fingerprint
		for _, v := range []string{inc.ID, inc.DedupeKey, fp.ErrorClass, fp.ServiceRole, fp.DependencyPattern, fp.SignalShape,
			fp.AttackPattern, fp.Environment, decision, inc.Note, deadEnds, inc.Analyst} {
			e.str(v)
		}
		e.int(int64(inc.ImpactMinutes))
		e.str(inc.SourceAlertID)
		e.int(created)
		e.str(inc.Identity.Rule)
		e.str(inc.Identity.Service)
		e.str(severity)
		e.nullInt(expires)
		e.nullInt(forgot)
		e.str(entities)
		*content = e.b
	}
	if entities != "{}" { // what prepare stores for none
		if err := json.Unmarshal([]byte(entities), &inc.Entities); err != nil {
			return openrecall.Incident{}, seal, fmt.Errorf("incident %s: entities column: %w", inc.ID, err)
		}
	}
	if len(inc.Entities) == 0 {
		inc.Entities = nil
	}
	inc.Decision = openrecall.Decision(decision)
	inc.Severity = openrecall.Severity(severity)
	inc.CreatedAt = fromNanos(created)
	if expires.Valid {
		inc.ExpiresAt = fromNanos(expires.Int64)
	}
	if forgot.Valid {
		inc.ForgottenAt = fromNanos(forgot.Int64)
	}
	if deadEnds != "[]" { // what prepare stores for none: no decoding needed
		if err := json.Unmarshal([]byte(deadEnds), &inc.DeadEnds); err != nil {
			return openrecall.Incident{}, seal, fmt.Errorf("incident %s: dead ends column: %w", inc.ID, err)
		}
	}
	if len(inc.DeadEnds) == 0 {
		inc.DeadEnds = nil
	}
	return inc, seal, nil
}

// prepare validates and normalizes inc for storage: the dedupe key and id
// derived from its content, CreatedAt set to now when zero and kept in UTC.
func (s *conn) prepare(inc openrecall.Incident) (openrecall.Incident, []any, error) {
	if err := inc.Validate(); err != nil {
		return inc, nil, err
	}
	inc = inc.Normalized()
	if inc.CreatedAt.IsZero() {
		inc.CreatedAt = s.now()
	}
	created, err := nanos(inc.CreatedAt)
	if err != nil {
		return inc, nil, fmt.Errorf("incident created_at: %w", err)
	}
	deadEnds := inc.DeadEnds
	if deadEnds == nil {
		deadEnds = []string{}
	}
	de, err := json.Marshal(deadEnds)
	if err != nil {
		return inc, nil, fmt.Errorf("incident dead ends: %w", err)
	}
	expires, err := optionalNanos(inc.ExpiresAt)
	if err != nil {
		return inc, nil, fmt.Errorf("incident expires_at: %w", err)
	}
	forgot, err := optionalNanos(inc.ForgottenAt)
	if err != nil {
		return inc, nil, fmt.Errorf("incident forgotten_at: %w", err)
	}
	ents := inc.Entities
	if ents == nil {
		ents = map[string]string{}
	}
	en, err := json.Marshal(ents)
	if err != nil {
		return inc, nil, fmt.Errorf("incident entities: %w", err)
	}
	fp, id := inc.Fingerprint, inc.Identity
	args := []any{inc.ID, inc.DedupeKey, fpKey(fp), k4Key(fp), fp.ErrorClass, fp.ServiceRole,
		fp.DependencyPattern, fp.SignalShape, fp.AttackPattern, fp.Environment, string(inc.Decision),
		inc.Note, string(de), inc.Analyst, inc.ImpactMinutes, inc.SourceAlertID, created,
		id.Rule, id.Service, string(inc.Severity), ifpKey(id, fp), ik4Key(id, fp), expires, forgot, string(en)}
	return inc, args, nil
}

// optionalNanos stores a time as UTC unix nanoseconds, or NULL when zero.
func optionalNanos(t time.Time) (sql.NullInt64, error) {
	if t.IsZero() {
		return sql.NullInt64{}, nil
	}
	n, err := nanos(t)
	if err != nil {
		return sql.NullInt64{}, err
	}
	return sql.NullInt64{Int64: n, Valid: true}, nil
}

// Retain stores an analyst decision. The incident is validated, normalized
// (dedupe key and stable id from its content) and given CreatedAt = now when
// zero. Retain is idempotent: when an equivalent incident is already stored
// (same dedupe key, whichever process stored it) it returns the stored record
// and created=false, leaving it untouched. The returned incident is exactly
// what Get returns for its id.
func (s *Memories) Retain(ctx context.Context, inc openrecall.Incident) (openrecall.Incident, bool, error) {
	inc, args, err := s.prepare(inc)
	if err != nil {
		return openrecall.Incident{}, false, fmt.Errorf("retain: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: begin", err)
	}
	defer tx.Rollback()
	stored, created, err := s.retainTx(ctx, tx, args, inc)
	if err != nil {
		return openrecall.Incident{}, false, err
	}
	if err := tx.Commit(); err != nil {
		return openrecall.Incident{}, false, translate("retain: commit", err)
	}
	s.incidentWrites.Add(1)
	s.indexWrote(stored)
	s.log.Debug("retain", zap.String("id", stored.ID), zap.Bool("created", created),
		zap.String("fingerprint", stored.Fingerprint.String()), zap.String("decision", string(stored.Decision)))
	return stored, created, nil
}

// retainTx inserts a prepared incident (args from prepare) unless an
// equivalent one is stored; an equivalent stored memory without an identity
// takes inc's (fillIdentity). It returns the stored record and whether it
// was created.
func (s *conn) retainTx(ctx context.Context, tx *sql.Tx, args []any, inc openrecall.Incident) (openrecall.Incident, bool, error) {
	res, err := tx.ExecContext(ctx, insertIncident, args...)
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: insert", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: rows affected", err)
	}
	if n == 0 && !inc.Identity.IsZero() {
		id, fp := inc.Identity, inc.Fingerprint
		if _, err := tx.ExecContext(ctx, fillIdentity, id.Rule, id.Service, string(inc.Severity),
			ifpKey(id, fp), ik4Key(id, fp), inc.DedupeKey, id.Rule); err != nil {
			return openrecall.Incident{}, false, translate("retain: fill identity", err)
		}
	}
	if n == 0 && len(inc.Entities) > 0 {
		if _, err := tx.ExecContext(ctx, fillEntities, args[len(args)-1], inc.DedupeKey); err != nil {
			return openrecall.Incident{}, false, translate("retain: fill entities", err)
		}
	}
	event := "memory-retain"
	if n == 0 {
		event = "memory-fill" // an identity or entities filled in, if anything changed
	}
	stored, err := s.resealIncidentTx(ctx, tx, `dedupe_key = $1`, inc.DedupeKey, event)
	if err != nil {
		return openrecall.Incident{}, false, translate("retain: read back", err)
	}
	return stored, n == 1, nil
}

// resealIncidentTx reads back the memory where cond (one parameter, $1: arg)
// holds and, with a sealer, seals it again and binds the write to the
// chain as event when its columns changed since they were sealed.
func (s *conn) resealIncidentTx(ctx context.Context, tx *sql.Tx, cond string, arg any, event string) (openrecall.Incident, error) {
	var content []byte
	stored, seal, err := scanIncidentSealed(tx.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE `+cond, arg), &content)
	if err != nil || s.seal == nil {
		return stored, err
	}
	now := s.seal.Row(openrecall.RowMemory, content)
	if now == seal {
		return stored, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE incidents SET seal = $1 WHERE id = $2`, now, stored.ID); err != nil {
		return stored, err
	}
	return stored, s.bindTx(ctx, tx, []binding{{kind: openrecall.RowMemory, id: stored.ID, alertID: stored.SourceAlertID, event: event, seal: now,
		reason: fmt.Sprintf("memory %s by %s: %s", stored.ID, stored.Analyst, stored.Decision), at: s.now()}})
}

// Get returns the incident with the given id, or an error wrapping
// openrecall.ErrNotFound.
func (s *Memories) Get(ctx context.Context, id string) (openrecall.Incident, error) {
	inc, err := scanIncident(s.db.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE id = $1`, id))
	if err != nil {
		return openrecall.Incident{}, translate(fmt.Sprintf("get incident %q", id), err)
	}
	return inc, nil
}

// Recall returns up to limit memories for an alert of identity id and
// fingerprint fp, best first; see the package documentation for the exact
// semantics. limit <= 0 returns an empty result.
func (s *Memories) Recall(ctx context.Context, id openrecall.Identity, fp openrecall.Fingerprint, limit int) ([]openrecall.Match, error) {
	if err := fp.Validate(); err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	out := []openrecall.Match{}
	if limit <= 0 {
		return out, nil
	}
	var incs []openrecall.Incident
	var err error
	if s.rcache == nil {
		incs, err = s.recallIncidents(ctx, id, fp, limit)
	} else {
		incs, err = s.cachedIncidents(ctx, recallKey{id, fp, limit}, func() ([]openrecall.Incident, error) {
			return s.recallIncidents(ctx, id, fp, limit)
		})
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	out = make([]openrecall.Match, 0, len(incs))
	for _, inc := range incs {
		out = append(out, openrecall.ScoreMatch(id, fp, inc, now))
	}
	// An expired memory of the alert's identity came from a strong tier but
	// scores as related: order the whole result again.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if !a.Incident.CreatedAt.Equal(b.Incident.CreatedAt) {
			return a.Incident.CreatedAt.After(b.Incident.CreatedAt)
		}
		return a.Incident.ID < b.Incident.ID
	})
	// Checked first: the fields would build their strings on every recall
	// even with debug logging off.
	if ce := s.log.Check(zap.DebugLevel, "recall"); ce != nil {
		ce.Write(zap.String("identity", id.String()), zap.String("fingerprint", fp.String()),
			zap.Int("limit", limit), zap.Int("matches", len(out)))
	}
	return out, nil
}

// recallIncidents runs the recall query for up to limit incidents: the
// strong tiers of the alert's identity first, then the related tiers. The
// result depends on the stored incidents alone (scores, which depend on the
// time, are Recall's), which is what the recall cache keeps.
func (s *conn) recallIncidents(ctx context.Context, id openrecall.Identity, fp openrecall.Fingerprint, limit int) ([]openrecall.Incident, error) {
	// Related matches need a DNA that says something: an empty error class
	// and service role are kinship with nothing (recallFamilies).
	strong, related := recallFamilies(id, fp)
	var query recallStatement
	switch {
	case strong && related:
		query = s.sql.recall.strongRelated
	case strong:
		query = s.sql.recall.strongOnly
	case related:
		query = s.sql.recall.relatedOnly
	default:
		return nil, nil
	}
	rows, err := s.recall[query.text].QueryContext(ctx, recallArgs(s.d, query.pick, id, fp, limit)...)
	if err != nil {
		return nil, translate("recall", err)
	}
	defer rows.Close()
	var out []openrecall.Incident
	var content *[]byte
	if s.seal != nil {
		content = new([]byte)
	}
	for rows.Next() {
		inc, seal, err := scanIncidentSealed(rows, content)
		if err != nil {
			return nil, translate("recall: scan", err)
		}
		// A memory is believed only as it was sealed: an edited row (a
		// poisoned decision), or one written outside the chain, is refused.
		if content != nil && !s.seal.sealed(openrecall.RowMemory, *content, seal) {
			s.refuse(openrecall.RowMemory, inc.ID, seal)
			continue
		}
		out = append(out, inc)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("recall", err)
	}
	return out, nil
}
