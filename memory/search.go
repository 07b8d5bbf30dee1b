package memory

import (
	"context"
	"strings"

	"github.com/openrecall/openrecall"
)

// likeEscaper escapes LIKE's wildcards in a search text.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// SearchIncidents returns the memories f selects, newest first.
func (s *Memories) SearchIncidents(ctx context.Context, f openrecall.IncidentFilter) ([]openrecall.Incident, error) {
	q := `SELECT ` + incidentColumns + ` FROM incidents WHERE TRUE`
	var args []any
	var p params
	for _, c := range []struct{ col, v string }{{"rule", f.Rule}, {"service", f.Service}} {
		if c.v != "" {
			q += " AND " + c.col + s.d.like() + p.next() + ` ESCAPE '\'`
			args = append(args, "%"+likeEscaper.Replace(c.v)+"%")
		}
	}
	if f.Decision != "" {
		q += " AND decision = " + p.next()
		args = append(args, string(f.Decision))
	}
	if !f.Forgotten {
		q += " AND forgotten_at IS NULL"
	}
	q += " ORDER BY created_at DESC, id"
	if f.Limit > 0 {
		q += " LIMIT " + p.next()
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate("search incidents", err)
	}
	defer rows.Close()
	out := []openrecall.Incident{}
	for rows.Next() {
		inc, err := scanIncident(rows)
		if err != nil {
			return nil, translate("search incidents: scan", err)
		}
		out = append(out, inc)
	}
	return out, translate("search incidents", rows.Err())
}
