package memory

import "context"

// Size is how much of the database file holds data: Pages of PageSize
// bytes, FreePages of them free for reuse (pruned documents leave free
// pages that later writes take before the file grows).
type Size struct {
	PageSize  int64 `json:"page_size"`
	Pages     int64 `json:"pages"`
	FreePages int64 `json:"free_pages"`
}

// Used returns the bytes of the pages in use.
func (z Size) Used() int64 { return (z.Pages - z.FreePages) * z.PageSize }

// Total returns the bytes of the logical database (in use and free).
func (z Size) Total() int64 { return z.Pages * z.PageSize }

// Size reads the database's page counts, WAL included.
func (s *Store) Size(ctx context.Context) (Size, error) {
	var z Size
	if s.pg {
		// PostgreSQL: the schema's tables with their indexes and TOAST, in
		// blocks; free space inside them is not counted apart.
		err := s.db.QueryRowContext(ctx, `SELECT current_setting('block_size')::bigint,
			(COALESCE(SUM(pg_total_relation_size(c.oid)), 0) / current_setting('block_size')::bigint)::bigint
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&z.PageSize, &z.Pages)
		return z, translate("size", err)
	}
	for _, q := range []struct {
		pragma string
		into   *int64
	}{{"page_size", &z.PageSize}, {"page_count", &z.Pages}, {"freelist_count", &z.FreePages}} {
		if err := s.db.QueryRowContext(ctx, "PRAGMA "+q.pragma).Scan(q.into); err != nil {
			return z, translate("size: "+q.pragma, err)
		}
	}
	return z, nil
}
