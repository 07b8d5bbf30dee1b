package fingerprint

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/openrecall/openrecall"
)

// Bounds of an Extractor's fingerprint cache, per generation (two are
// kept): entries, and bytes of keys. A key is everything the rules read of
// an alert after normalization, so firings of one rule on other instances,
// with other values, share it.
const (
	dnaCacheEntries = 4096
	dnaCacheBytes   = 4 << 20
)

// dnaCache is a bounded map from prepared inputs to fingerprints. It keeps
// two generations: lookups read the current one, then the previous one
// (moving a hit forward); when the current one is full it becomes the
// previous one and the oldest is dropped, so the memory held stays under
// twice the bounds whatever the queue's length. Safe for concurrent use.
type dnaCache struct {
	mu         sync.Mutex
	cur, prev  map[string]openrecall.Fingerprint
	curBytes   int
	maxEntries int
	maxBytes   int
	// off makes every lookup a miss and every put a no-op (DisableCache).
	off bool

	hits, lookups atomic.Int64
}

func newDNACache(entries, bytes int) *dnaCache {
	return &dnaCache{cur: map[string]openrecall.Fingerprint{}, maxEntries: entries, maxBytes: bytes}
}

// get looks key up; the key is copied only when a hit of the previous
// generation moves forward.
func (c *dnaCache) get(key []byte) (openrecall.Fingerprint, bool) {
	c.lookups.Add(1)
	if c.off {
		return openrecall.Fingerprint{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if fp, ok := c.cur[string(key)]; ok {
		c.hits.Add(1)
		return fp, true
	}
	if fp, ok := c.prev[string(key)]; ok {
		c.hits.Add(1)
		c.putLocked(string(key), fp)
		return fp, true
	}
	return openrecall.Fingerprint{}, false
}

func (c *dnaCache) put(key string, fp openrecall.Fingerprint) {
	if c.off {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, fp)
}

func (c *dnaCache) putLocked(key string, fp openrecall.Fingerprint) {
	if len(key) > c.maxBytes {
		return
	}
	if _, ok := c.cur[key]; ok {
		return
	}
	if len(c.cur) >= c.maxEntries || c.curBytes+len(key) > c.maxBytes {
		c.prev, c.cur, c.curBytes = c.cur, make(map[string]openrecall.Fingerprint, len(c.cur)), 0
	}
	c.cur[key] = fp
	c.curBytes += len(key)
}

// len returns the entries held in both generations.
func (c *dnaCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}

// DisableCache turns the fingerprint cache off: every alert is extracted
// anew, as on a queue whose alerts all differ (make bench-analyze's
// cache-off rows). Call it before the first Extract; the DNA is the same
// either way (P35 holds a cached extraction to the reference).
func (e *Extractor) DisableCache() { e.cache.off = true }

// CacheStats says how the fingerprint cache did: hits of lookups, such as
// "fingerprint cache 19355/20000 hits (96.8%)". Extract looks up every
// alert; Explain bypasses the cache.
func (e *Extractor) CacheStats() string {
	h, n := e.cache.hits.Load(), e.cache.lookups.Load()
	pct := 0.0
	if n > 0 {
		pct = 100 * float64(h) / float64(n)
	}
	return fmt.Sprintf("fingerprint cache %d/%d hits (%.1f%%)", h, n, pct)
}
