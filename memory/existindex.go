package memory

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/openrecall/openrecall"
)

// existIndex knows, without a query, when a recall would find nothing:
// the keys of the memories that could be recalled, held in memory. Every
// arm of the recall query (incidents.go) compares the four critical values
// of the DNA and skips forgotten memories; the strong arms also compare
// the identity, the related arms need another identity. So a recall can
// return something only when a memory not forgotten has the alert's
// critical values (crit), and, for an alert that reads only its own tiers
// (an identity and a DNA with neither error class nor service role), the
// alert's identity too (ident). The keys are hashes of the plain columns,
// as stored, not the indexed keys (fp, k4, …), which recall also compares
// but which an edited row could disagree with: a hash collision or a
// memory that recall refuses (a broken seal, the identity noRule) only
// makes the index say "maybe", and the query runs. The index never says
// "nothing" where the query would find something.
//
// It is kept exact as the recall cache is (recallcache.go): loaded from
// the database on first use and again whenever the memory's data version
// (PRAGMA data_version; PostgreSQL's incidents_version) differs from the
// one it was loaded at, so another process's writes, its forgets included,
// are seen; this store's own retains add their keys after they commit
// (indexWrote). A forget removes nothing: the keys of a forgotten memory stay
// until the next load, and only make the index say "maybe". Its size is
// proportional to the memory: two 8-byte keys per distinct (identity,
// critical values) of memories not forgotten, at most two per memory.
type existIndex struct {
	seed maphash.Seed

	mu sync.Mutex
	// loaded is set once crit and ident hold the keys of the memory as it
	// was at data version version, or later.
	loaded  bool
	version int64
	// loading is set while one lookup loads the keys; the others ask the
	// query meanwhile.
	loading bool
	// gen counts this store's writes noted (indexWrote): a load that began
	// before one is not kept, since it may have missed that write.
	gen         int64
	crit, ident map[uint64]struct{}

	skips, loads atomic.Int64
}

func newExistIndex() *existIndex { return &existIndex{seed: maphash.MakeSeed()} }

// critKey hashes the critical values of fp; identKey the identity id with
// them. Each string is written with its length, so no two tuples write
// the same bytes.
func (x *existIndex) critKey(fp openrecall.Fingerprint) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	for _, v := range [...]string{fp.ErrorClass, fp.ServiceRole, fp.AttackPattern, fp.Environment} {
		writeField(&h, v)
	}
	return h.Sum64()
}

func (x *existIndex) identKey(id openrecall.Identity, fp openrecall.Fingerprint) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	for _, v := range [...]string{id.Rule, id.Service, fp.ErrorClass, fp.ServiceRole, fp.AttackPattern, fp.Environment} {
		writeField(&h, v)
	}
	return h.Sum64()
}

func writeField(h *maphash.Hash, v string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(v)))
	_, _ = h.Write(n[:])    // a maphash.Hash never fails
	_, _ = h.WriteString(v) // as above
}

// recallFamilies says which tiers a recall of id and fp reads (the choice
// recallIncidents makes): the alert's own when it has an identity, the
// related ones when its DNA names an error class or a service role.
func recallFamilies(id openrecall.Identity, fp openrecall.Fingerprint) (strong, related bool) {
	return !id.IsZero(), fp.ErrorClass != "" || fp.ServiceRole != ""
}

// mayRecall reports whether a recall of id and fp could find a memory,
// with the memory at data version version: false only when the query
// would find none. It loads the keys when they are missing or of another
// version.
func (s *conn) mayRecall(ctx context.Context, version int64, id openrecall.Identity, fp openrecall.Fingerprint) (bool, error) {
	x := s.rcache.index
	x.mu.Lock()
	if x.loaded && x.version == version {
		may := x.has(id, fp)
		x.mu.Unlock()
		if !may {
			x.skips.Add(1)
		}
		return may, nil
	}
	if x.loading {
		x.mu.Unlock()
		return true, nil
	}
	x.loading = true
	gen := x.gen
	x.mu.Unlock()
	crit, ident, err := s.loadExistence(ctx, x)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loading = false
	if err != nil {
		return false, err
	}
	x.loads.Add(1)
	if x.gen != gen {
		return true, nil // a write of this store's landed meanwhile: ask the query
	}
	x.crit, x.ident, x.version, x.loaded = crit, ident, version, true
	may := x.has(id, fp)
	if !may {
		x.skips.Add(1)
	}
	return may, nil
}

// has answers mayRecall from the keys held; x.mu must be held.
func (x *existIndex) has(id openrecall.Identity, fp openrecall.Fingerprint) bool {
	strong, related := recallFamilies(id, fp)
	switch {
	case related:
		// The strong and the related tiers together read every identity
		// (the related ones alone, every identity but noRule).
		_, ok := x.crit[x.critKey(fp)]
		return ok
	case strong:
		_, ok := x.ident[x.identKey(id, fp)]
		return ok
	default:
		return false // recallIncidents runs no query
	}
}

// loadExistence reads the keys of every memory not forgotten, through the
// readers recall reads through.
func (s *conn) loadExistence(ctx context.Context, x *existIndex) (crit, ident map[uint64]struct{}, err error) {
	rows, err := s.readers.QueryContext(ctx, `SELECT DISTINCT rule, service, error_class, service_role, attack_pattern, environment
		FROM incidents WHERE forgotten_at IS NULL`)
	if err != nil {
		return nil, nil, translate("recall: existence index", err)
	}
	defer rows.Close()
	crit, ident = map[uint64]struct{}{}, map[uint64]struct{}{}
	for rows.Next() {
		var id openrecall.Identity
		var fp openrecall.Fingerprint
		if err := rows.Scan(&id.Rule, &id.Service, &fp.ErrorClass, &fp.ServiceRole, &fp.AttackPattern, &fp.Environment); err != nil {
			return nil, nil, translate("recall: existence index: scan", err)
		}
		crit[x.critKey(fp)] = struct{}{}
		ident[x.identKey(id, fp)] = struct{}{}
	}
	return crit, ident, translate("recall: existence index", rows.Err())
}

// indexWrote tells the existence index that this store committed a retain
// of the memories stored, as stored (retain, supersede, import, a group's
// decision): their keys are added. It must be called after every such
// commit, once it counted in incidentWrites. A forget need not call it.
func (s *conn) indexWrote(stored ...openrecall.Incident) {
	if s.rcache == nil {
		return
	}
	x := s.rcache.index
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gen++
	if !x.loaded {
		return
	}
	for _, inc := range stored {
		if inc.ForgottenAt.IsZero() {
			x.crit[x.critKey(inc.Fingerprint)] = struct{}{}
			x.ident[x.identKey(inc.Identity, inc.Fingerprint)] = struct{}{}
		}
	}
}
