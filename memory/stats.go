package memory

import (
	"context"
	"fmt"
	"sort"

	"github.com/openrecall/openrecall"
)

// topFamilies is how many fingerprint families Stats lists.
const topFamilies = 10

// Stats summarizes what a Store holds.
type Stats struct {
	// Incidents is the number of stored incidents.
	Incidents int `json:"incidents"`
	// ByDecision counts incidents per decision; every retainable decision
	// has an entry, zero when none is stored.
	ByDecision map[openrecall.Decision]int `json:"by_decision"`
	// Fingerprints is the number of distinct fingerprints.
	Fingerprints int `json:"fingerprints"`
	// TopFamilies lists the most retained fingerprints (up to 10), most
	// incidents first, then by canonical string.
	TopFamilies []FamilyCount `json:"top_families"`
	// WithoutIdentity is the number of memories without an identity: related
	// knowledge only, they never vote for a bypass until re-seeded or
	// re-imported with one.
	WithoutIdentity int `json:"without_identity"`
	// Forgotten is the number of memories taken back (memory forget, or a
	// superseding retain); they are never recalled.
	Forgotten int `json:"forgotten"`
	// Identities is the number of distinct identities among the memories.
	Identities int `json:"identities"`
	// TopIdentities lists the identities with the most memories (up to 10),
	// most first, then by rule and service.
	TopIdentities []IdentityCount `json:"top_identities"`
	// AuditEntries is the number of stored audit entries.
	AuditEntries int64 `json:"audit_entries"`
	// CostPoints is the number of stored cost points.
	CostPoints int `json:"cost_points"`
	// Batches is the number of batches with cost points.
	Batches int `json:"batches"`
	// SchemaVersion is the database's schema version.
	SchemaVersion int `json:"schema_version"`
	// Path is the database path.
	Path string `json:"path"`
}

// FamilyCount is the number of incidents retained for one fingerprint.
type FamilyCount struct {
	Fingerprint openrecall.Fingerprint `json:"fingerprint"`
	Count       int                    `json:"count"`
}

// IdentityCount is the number of memories of one identity.
type IdentityCount struct {
	Identity openrecall.Identity `json:"identity"`
	Count    int                 `json:"count"`
}

// Stats returns counts of what the Store holds.
func (s *Memories) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Path: s.path, ByDecision: map[openrecall.Decision]int{}, TopFamilies: []FamilyCount{}, TopIdentities: []IdentityCount{}}
	for _, d := range openrecall.MemoryDecisions {
		st.ByDecision[d] = 0
	}
	rows, err := s.db.QueryContext(ctx, `SELECT decision, COUNT(*) FROM incidents GROUP BY decision`)
	if err != nil {
		return Stats{}, translate("stats: decisions", err)
	}
	for rows.Next() {
		var d string
		var n int
		if err := rows.Scan(&d, &n); err != nil {
			rows.Close()
			return Stats{}, translate("stats: decisions", err)
		}
		st.ByDecision[openrecall.Decision(d)] = n
		st.Incidents += n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Stats{}, translate("stats: decisions", err)
	}

	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM incidents GROUP BY fp) AS families`).Scan(&st.Fingerprints); err != nil {
		return Stats{}, translate("stats: fingerprints", err)
	}
	fams, err := s.topFamilies(ctx)
	if err != nil {
		return Stats{}, err
	}
	st.TopFamilies = append(st.TopFamilies, fams...)
	ids, err := s.topIdentities(ctx)
	if err != nil {
		return Stats{}, err
	}
	st.TopIdentities = append(st.TopIdentities, ids...)

	queries := []struct {
		what string
		q    string
		dst  any
	}{
		{"audit entries", `SELECT COUNT(*) FROM audit_entries`, &st.AuditEntries},
		{"memories without identity", s.sql.withoutIdentity, &st.WithoutIdentity},
		{"forgotten memories", `SELECT COUNT(*) FROM incidents WHERE forgotten_at IS NOT NULL`, &st.Forgotten},
		{"identities", s.sql.identities, &st.Identities},
		{"cost points", `SELECT COUNT(*) FROM cost_points`, &st.CostPoints},
		{"batches", `SELECT COUNT(*) FROM batches`, &st.Batches},
		{"schema version", `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`, &st.SchemaVersion},
	}
	for _, q := range queries {
		if err := s.db.QueryRowContext(ctx, q.q).Scan(q.dst); err != nil {
			return Stats{}, translate(fmt.Sprintf("stats: %s", q.what), err)
		}
	}
	return st, nil
}

// topFamilies returns the most retained fingerprints. Families are grouped
// by the indexed 64-bit fingerprint hash, which keeps Stats to index scans;
// ties at the cut are broken by that hash, and the result is ordered by
// count, then canonical string.
func (s *conn) topFamilies(ctx context.Context) ([]FamilyCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT fp, COUNT(*) AS n FROM incidents GROUP BY fp ORDER BY n DESC, fp LIMIT $1`, topFamilies)
	if err != nil {
		return nil, translate("stats: families", err)
	}
	type group struct {
		key   int64
		count int
	}
	var groups []group
	for rows.Next() {
		var g group
		if err := rows.Scan(&g.key, &g.count); err != nil {
			rows.Close()
			return nil, translate("stats: families", err)
		}
		groups = append(groups, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate("stats: families", err)
	}
	out := make([]FamilyCount, 0, len(groups))
	for _, g := range groups {
		f := FamilyCount{Count: g.count}
		if err := s.db.QueryRowContext(ctx, `SELECT error_class, service_role, dependency_pattern, signal_shape,
			attack_pattern, environment FROM incidents WHERE fp = $1 LIMIT 1`, g.key).Scan(&f.Fingerprint.ErrorClass,
			&f.Fingerprint.ServiceRole, &f.Fingerprint.DependencyPattern, &f.Fingerprint.SignalShape,
			&f.Fingerprint.AttackPattern, &f.Fingerprint.Environment); err != nil {
			return nil, translate("stats: family fingerprint", err)
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Fingerprint.String() < out[j].Fingerprint.String()
	})
	return out, nil
}

// topIdentities returns the identities with the most memories, through the
// (rule, service) index.
func (s *conn) topIdentities(ctx context.Context) ([]IdentityCount, error) {
	rows, err := s.db.QueryContext(ctx, s.sql.topIdentities, topFamilies)
	if err != nil {
		return nil, translate("stats: identities", err)
	}
	defer rows.Close()
	var out []IdentityCount
	for rows.Next() {
		var c IdentityCount
		if err := rows.Scan(&c.Identity.Rule, &c.Identity.Service, &c.Count); err != nil {
			return nil, translate("stats: identities", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, translate("stats: identities", err)
	}
	return out, nil
}

// withoutIdentitySQL counts the memories without identity, through
// incidents_identity on SQLite.
func withoutIdentitySQL(d dialect) string {
	return `SELECT COUNT(*) FROM incidents` + d.indexedBy("incidents_identity") + ` WHERE rule = ''`
}

// identitiesSQL counts the identities memories have, through
// incidents_identity on SQLite.
func identitiesSQL(d dialect) string {
	return `SELECT COUNT(*) FROM (SELECT 1 FROM incidents` + d.indexedBy("incidents_identity") + ` WHERE rule <> '' GROUP BY rule, service) AS identities`
}

// topIdentitiesSQL selects the identities with the most memories
// (topIdentities), through incidents_identity on SQLite.
func topIdentitiesSQL(d dialect) string {
	return `SELECT rule, service, COUNT(*) AS n FROM incidents` + d.indexedBy("incidents_identity") + `
		WHERE rule <> '' GROUP BY rule, service ORDER BY n DESC, rule, service LIMIT $1`
}
