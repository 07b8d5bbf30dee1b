package memory

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openrecall/openrecall"
)

// recallCache keeps, for one run, the incidents each recall found, keyed by
// the identity, fingerprint and limit asked: what the tier queries return
// depends on nothing else but the stored incidents (scores, which depend on
// the time, are computed afresh on every recall). It is emptied whenever the
// memory may have changed: when SQLite's PRAGMA data_version, read on the
// store's writer connection, says another connection (another process, or
// another Store) committed, or
// when this store wrote incidents (Store.incidentWrites: retain, forget,
// supersede, import). Bounded: two
// generations of at most maxEntries keys. It also holds the existence
// index (existindex.go), which a recall the cache cannot answer asks
// before the query; with maxEntries 0 (EnableRecallIndex) it keeps no
// results, only the index.
type recallCache struct {
	mu         sync.Mutex
	cur, prev  map[recallKey][]openrecall.Incident
	maxEntries int
	version    int64 // PRAGMA data_version when the entries were found
	writes     int64 // Store.incidentWrites then
	// seen is the data version last read, and checked when; it is read
	// again when recheck has passed (0: on every lookup).
	seen    int64
	checked time.Time
	recheck time.Duration

	hits, lookups atomic.Int64

	index *existIndex
}

// EnableRecallCache turns on a per-run cache of recall results of at most
// about 2×entries keys (analyze turns it on; benchmarks and the library
// default leave it off). This store's own writes of incidents empty it at
// once; another process's are seen through SQLite's PRAGMA data_version,
// read again when recheck has passed since the last read (0: before every
// recall), so a memory another process retains is recalled at most recheck
// later.
//
// It turns on the existence index too (see EnableRecallIndex).
func (s *Memories) EnableRecallCache(entries int, recheck time.Duration) {
	s.rcache = &recallCache{cur: map[recallKey][]openrecall.Incident{}, maxEntries: max(1, entries), version: -1, seen: -1,
		recheck: recheck, index: newExistIndex()}
}

// EnableRecallIndex turns on the existence index alone, without a cache
// of results: a recall that the memory's keys, held in memory, show would
// find nothing is answered without its query (an alert whose critical
// values no memory shares; analyze's miss path). It is kept as the recall
// cache is: this store's own retains add to it, and another process's
// writes are seen through the data version, read again when recheck has
// passed since the last read (0: before every recall). Its size is
// proportional to the memory (two 8-byte keys per memory at most).
func (s *Memories) EnableRecallIndex(recheck time.Duration) {
	s.rcache = &recallCache{version: -1, seen: -1, recheck: recheck, index: newExistIndex()}
}

// CacheStats says how the recall cache did, such as "recall cache
// 19000/20000 hits (95.0%), existence index 900/1000 misses skipped (1
// load)", or that it is off.
func (s *Memories) CacheStats() string {
	c := s.rcache
	if c == nil {
		return "recall cache off"
	}
	h, n := c.hits.Load(), c.lookups.Load()
	loads := c.index.loads.Load()
	plural := "s"
	if loads == 1 {
		plural = ""
	}
	idx := fmt.Sprintf("existence index %d/%d misses skipped (%d load%s)", c.index.skips.Load(), n-h, loads, plural)
	if c.maxEntries == 0 {
		return "recall cache off, " + idx
	}
	pct := 0.0
	if n > 0 {
		pct = 100 * float64(h) / float64(n)
	}
	return fmt.Sprintf("recall cache %d/%d hits (%.1f%%), %s", h, n, pct, idx)
}

// recallKey is the cache key of one recall: the values it was asked for,
// compared as they are (no string is built on a lookup).
type recallKey struct {
	id    openrecall.Identity
	fp    openrecall.Fingerprint
	limit int
}

// cachedIncidents returns load's incidents for key, from the cache when the
// memory has not changed since they were found, and none without calling
// load when the existence index shows load would find none. The cache must
// be on. The caller must not modify what it returns.
func (s *conn) cachedIncidents(ctx context.Context, key recallKey, load func() ([]openrecall.Incident, error)) ([]openrecall.Incident, error) {
	c := s.rcache
	c.lookups.Add(1)
	c.mu.Lock()
	version, checked := c.seen, c.checked
	c.mu.Unlock()
	if now := time.Now(); c.recheck <= 0 || version < 0 || now.Sub(checked) >= c.recheck {
		if err := s.db.QueryRowContext(ctx, s.dataVersion()).Scan(&version); err != nil {
			return nil, translate("recall: data version", err)
		}
		c.mu.Lock()
		c.seen, c.checked = version, now
		c.mu.Unlock()
	}
	writes := s.incidentWrites.Load()
	results := c.maxEntries > 0
	if results {
		c.mu.Lock()
		if version != c.version || writes != c.writes {
			c.cur, c.prev, c.version, c.writes = map[recallKey][]openrecall.Incident{}, nil, version, writes
		}
		incs, ok := c.cur[key]
		if !ok {
			if incs, ok = c.prev[key]; ok {
				c.put(key, incs)
			}
		}
		c.mu.Unlock()
		if ok {
			c.hits.Add(1)
			return incs, nil // read-only: Recall copies each into its match
		}
	}
	var incs []openrecall.Incident
	may, err := s.mayRecall(ctx, version, key.id, key.fp)
	if err == nil && may {
		incs, err = load()
	}
	if err != nil {
		return nil, err
	}
	if results {
		c.mu.Lock()
		if version == c.version && writes == c.writes {
			c.put(key, append([]openrecall.Incident(nil), incs...))
		}
		c.mu.Unlock()
	}
	return incs, nil
}

// len returns the keys held in both generations.
func (c *recallCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}

func (c *recallCache) put(key recallKey, incs []openrecall.Incident) {
	if len(c.cur) >= c.maxEntries {
		c.prev, c.cur = c.cur, make(map[recallKey][]openrecall.Incident, len(c.cur))
	}
	c.cur[key] = incs
}

// dataVersion is the query whose answer changes when another connection
// committed (SQLite) or when any transaction wrote memories (PostgreSQL,
// whose incidents table keeps a counter by trigger).
func (s *conn) dataVersion() string {
	if s.pg {
		return "SELECT v FROM incidents_version WHERE id = 1"
	}
	return "PRAGMA data_version"
}
