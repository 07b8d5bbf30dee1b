package memory

import (
	"context"
	"fmt"

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
	// incidents first, ties by canonical string.
	TopFamilies []FamilyCount `json:"top_families"`
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

// Stats returns counts of what the Store holds.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Path: s.path, ByDecision: map[openrecall.Decision]int{}, TopFamilies: []FamilyCount{}}
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

	rows, err = s.db.QueryContext(ctx, `SELECT error_class, service_role, dependency_pattern, signal_shape,
		attack_pattern, environment, COUNT(*) AS n FROM incidents
		GROUP BY error_class, service_role, dependency_pattern, signal_shape, attack_pattern, environment`)
	if err != nil {
		return Stats{}, translate("stats: families", err)
	}
	var fams []FamilyCount
	for rows.Next() {
		var f FamilyCount
		if err := rows.Scan(&f.Fingerprint.ErrorClass, &f.Fingerprint.ServiceRole, &f.Fingerprint.DependencyPattern,
			&f.Fingerprint.SignalShape, &f.Fingerprint.AttackPattern, &f.Fingerprint.Environment, &f.Count); err != nil {
			rows.Close()
			return Stats{}, translate("stats: families", err)
		}
		fams = append(fams, f)
		st.Fingerprints++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Stats{}, translate("stats: families", err)
	}
	st.TopFamilies = append(st.TopFamilies, top(fams, topFamilies)...)

	queries := []struct {
		what string
		q    string
		dst  any
	}{
		{"audit entries", `SELECT COUNT(*) FROM audit_entries`, &st.AuditEntries},
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

// top returns the n largest families, most incidents first, ties by the
// canonical fingerprint string.
func top(fams []FamilyCount, n int) []FamilyCount {
	less := func(a, b FamilyCount) bool {
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Fingerprint.String() < b.Fingerprint.String()
	}
	// Selection keeps this linear in len(fams) for small n.
	out := make([]FamilyCount, 0, n)
	for _, f := range fams {
		i := len(out)
		for i > 0 && less(f, out[i-1]) {
			i--
		}
		if i >= n {
			continue
		}
		if len(out) < n {
			out = append(out, FamilyCount{})
		}
		copy(out[i+1:], out[i:len(out)-1])
		out[i] = f
	}
	return out
}
