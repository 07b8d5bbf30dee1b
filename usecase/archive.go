package usecase

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
)

// ArchiveStore keeps the archive records of the audit trail (DESIGN §9).
// memory.Store satisfies it.
type ArchiveStore interface {
	// RecordArchive records a and deletes the prefix it covers in one
	// transaction, unless the latest record is no longer from.
	RecordArchive(ctx context.Context, a, from openrecall.TrailArchive) (entries, costs int64, err error)
	// Archives returns every archive record, oldest first.
	Archives(ctx context.Context) ([]openrecall.TrailArchive, error)
}

// ArchiveFile is where `audit archive` writes: Sync makes what was written
// durable, the file's name included, and is called before the archived
// prefix is deleted.
type ArchiveFile interface {
	io.Writer
	Sync() error
}

// archiveFormat names the archive file format, in its header line.
const archiveFormat = "openrecall-audit-archive/1"

// ChainLink names one link of a chain: its sequence and hash (0 and ""
// before the first).
type ChainLink struct {
	Sequence int64  `json:"sequence"`
	Hash     string `json:"hash"`
}

// ArchiveEnds are where an archive starts after and where it ends, in each
// chain.
type ArchiveEnds struct {
	Entries    ChainLink `json:"entries"`
	CostPoints ChainLink `json:"cost_points"`
}

// archiveHeader is the first line of an archive file.
type archiveHeader struct {
	Format string    `json:"archive"`
	Before time.Time `json:"before"`
	KeyID  string    `json:"key_id"`
	// From is the end of the previous archive (zeros for the first);
	// Through the last archived entry and cost point.
	From    ArchiveEnds `json:"from"`
	Through ArchiveEnds `json:"through"`
	// Entries and CostPoints count the lines that follow.
	Entries    int64 `json:"entries"`
	CostPoints int64 `json:"cost_points"`
}

// archiveLine is every later line: one audit entry or one chained cost
// point.
type archiveLine struct {
	Entry *openrecall.AuditEntry `json:"entry,omitempty"`
	Cost  *archivedCost          `json:"cost_point,omitempty"`
}

type archivedCost struct {
	Sequence int64                `json:"sequence"`
	PrevHash string               `json:"prev_hash"`
	Hash     string               `json:"hash"`
	Point    openrecall.CostPoint `json:"point"`
}

// Archived is the outcome of `audit archive`.
type Archived struct {
	// Report is the verification of the whole trail before archiving;
	// nothing was archived when it has problems.
	Report audit.Report
	// Record is the archive record written, the zero TrailArchive when
	// nothing was archived (a tampered trail, or nothing older than the
	// cut).
	Record openrecall.TrailArchive
	// From is where the archive starts after.
	From ArchiveEnds
	// Entries and CostPoints count what moved to the file.
	Entries, CostPoints int64
	// After is the verification of what remains, once archived.
	After audit.Report
}

func ends(a openrecall.TrailArchive) ArchiveEnds {
	return ArchiveEnds{Entries: ChainLink{a.Through, a.ThroughHash}, CostPoints: ChainLink{a.CostThrough, a.CostThroughHash}}
}

// ArchiveAudit moves the verified prefix of the audit and cost chains older
// than before to a file (DESIGN §9): it verifies the whole trail (a
// tampered trail is not archived: Report has the problems), reads the
// prefix, writes it to the file create opens (called only when there is
// something to archive) as JSON lines under a header naming where it starts
// and ends, syncs the file, and only then records the signed archive
// record and deletes the prefix in one transaction. An error anywhere
// before that transaction commits leaves the trail as it was; a file
// created then is the caller's to remove. It needs ReadTrail,
// ReadTrailPrefix, Archives and Keys, and a key (the trail's).
func (a *App) ArchiveAudit(ctx context.Context, before time.Time, create func() (ArchiveFile, error)) (Archived, error) {
	if a.ReadTrailPrefix == nil || a.Archives == nil {
		return Archived{}, errors.New("usecase: no audit trail to archive")
	}
	rep, k, err := a.verifyTrail(ctx, nil, false)
	if err != nil {
		return Archived{}, err
	}
	out := Archived{Report: rep}
	if len(rep.Problems) > 0 {
		return out, nil
	}
	if k.IsZero() {
		return out, fmt.Errorf("archiving signs an archive record with the audit key, and none was found: %w", audit.ErrNoKey)
	}
	from := rep.State.Archive
	out.From = ends(from)
	h := archiveHeader{Format: archiveFormat, Before: before.UTC(), KeyID: k.ID(), From: out.From, Through: out.From}
	// The first read finds where the prefix ends; the second writes it,
	// under a header that says so. The prefix is append-only, so both
	// read the same links up to the ends the first found.
	if err := a.ReadTrailPrefix(ctx, before, TrailReader{
		Entry: func(e openrecall.AuditEntry) error {
			h.Through.Entries, h.Entries = ChainLink{e.Sequence, e.Hash}, h.Entries+1
			return nil
		},
		Cost: func(seq int64, _, hash string, _ openrecall.CostPoint) error {
			h.Through.CostPoints, h.CostPoints = ChainLink{seq, hash}, h.CostPoints+1
			return nil
		},
	}); err != nil {
		return out, err
	}
	if h.Entries == 0 && h.CostPoints == 0 {
		return out, nil
	}
	f, err := create()
	if err != nil {
		return out, err
	}
	sum := sha256.New()
	if err := a.writeArchive(ctx, io.MultiWriter(f, sum), h, before, k, rep.State.LegacyThrough); err != nil {
		return out, err
	}
	if err := f.Sync(); err != nil {
		return out, fmt.Errorf("archive file: %w", err)
	}
	rec := audit.SignArchive(k, openrecall.TrailArchive{
		Through: h.Through.Entries.Sequence, ThroughHash: h.Through.Entries.Hash,
		CostThrough: h.Through.CostPoints.Sequence, CostThroughHash: h.Through.CostPoints.Hash,
		Before: fromUnixNano(before), At: fromUnixNano(a.clock()()), FileSHA256: hex.EncodeToString(sum.Sum(nil)),
	})
	if out.Entries, out.CostPoints, err = a.Archives.RecordArchive(ctx, rec, from); err != nil {
		// A commit can fail after the write reached the database: the
		// archive then happened, and its file must stay.
		if recs, lerr := a.Archives.Archives(ctx); lerr != nil || len(recs) == 0 || recs[len(recs)-1].MAC != rec.MAC {
			return out, err
		}
		out.Entries, out.CostPoints = h.Entries, h.CostPoints
	}
	out.Record = rec
	if out.After, _, err = a.verifyTrail(ctx, nil, false); err != nil {
		return out, fmt.Errorf("archived, then: %w", err)
	}
	return out, nil
}

// ArchiveTo is ArchiveAudit into a new file at path (never an existing
// one): synced, closed and its directory synced before the prefix is
// deleted, and removed again unless the archive was recorded (removeFailed
// hears when that removal fails).
func (a *App) ArchiveTo(ctx context.Context, before time.Time, path string, removeFailed func(error)) (Archived, error) {
	var f *os.File
	res, err := a.ArchiveAudit(ctx, before, func() (ArchiveFile, error) {
		var err error
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return nil, fmt.Errorf("archive file: %w", err)
		}
		return archiveFile{f}, nil
	})
	if f != nil {
		_ = f.Close() // closed by Sync when the archive got that far
		if res.Record.IsZero() {
			if rerr := os.Remove(path); rerr != nil && removeFailed != nil {
				removeFailed(rerr)
			}
		}
	}
	return res, err
}

// archiveFile is a file ArchiveTo writes: Sync syncs its contents, closes
// it and syncs its directory, so its name is durable too.
type archiveFile struct {
	*os.File
}

func (f archiveFile) Sync() error {
	if err := f.File.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(f.Name()))
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }() // read-only: Sync's error is the one that counts
	return dir.Sync()
}

// fromUnixNano is t in UTC at the precision the store keeps.
func fromUnixNano(t time.Time) time.Time { return time.Unix(0, t.UnixNano()).UTC() }

// writeArchive writes the header h and the prefix up to h.Through to w,
// checking as it goes that the links written chain from h.From to
// h.Through under k.
func (a *App) writeArchive(ctx context.Context, w io.Writer, h archiveHeader, before time.Time, k audit.Key, legacyThrough int64) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("archive file: %w", err)
	}
	entries, costs := audit.NewKeyedVerifier(k, legacyThrough), audit.NewCostVerifier(k)
	entries.Start(h.From.Entries.Sequence, h.From.Entries.Hash)
	costs.Start(h.From.CostPoints.Sequence, h.From.CostPoints.Hash)
	err := a.ReadTrailPrefix(ctx, before, TrailReader{
		Entry: func(e openrecall.AuditEntry) error {
			if e.Sequence > h.Through.Entries.Sequence {
				return nil
			}
			entries.Add(e)
			return enc.Encode(archiveLine{Entry: &e})
		},
		Cost: func(seq int64, prev, hash string, p openrecall.CostPoint) error {
			if seq > h.Through.CostPoints.Sequence {
				return nil
			}
			costs.AddCost(seq, prev, hash, p)
			return enc.Encode(archiveLine{Cost: &archivedCost{Sequence: seq, PrevHash: prev, Hash: hash, Point: p}})
		},
	})
	if err != nil {
		return fmt.Errorf("archive file: %w", err)
	}
	problems := append(entries.Finish(h.Through.Entries.Sequence, h.Through.Entries.Hash),
		costs.Finish(h.Through.CostPoints.Sequence, h.Through.CostPoints.Hash)...)
	if len(problems) > 0 {
		return fmt.Errorf("the prefix read to archive does not chain: %s", problems[0])
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("archive file: %w", err)
	}
	return nil
}

// ArchiveCheck is the outcome of `audit verify --archive`, as its -o json
// prints it.
type ArchiveCheck struct {
	// Intact is true when the file checks: no problems.
	Intact bool `json:"intact"`
	// Record is the archive record whose SHA-256 is the file's (zero when
	// none is).
	Record openrecall.TrailArchive `json:"-"`
	// From and Through are what the file's header says.
	From    ArchiveEnds `json:"from"`
	Through ArchiveEnds `json:"through"`
	// Entries and CostPoints count the links the file holds.
	Entries    int64 `json:"entries"`
	CostPoints int64 `json:"cost_points"`
	// FileSHA256 is the file's.
	FileSHA256 string `json:"file_sha256"`
	// Problems lists every way the file differs from its record and from
	// the chains it claims to hold; empty, never null, for a file that
	// checks.
	Problems []Problem `json:"problems"`
}

// VerifyArchive checks an archive file written by ArchiveAudit against the
// trail's archive records: a record carries the file's SHA-256 and a valid
// signature, the file's links chain (keyed) from where the previous record
// ends to where its record ends, and its header says the same. A file
// that changed, lost or gained a line, or is not this trail's is reported
// in Problems; a missing or wrong key is an error.
func (a *App) VerifyArchive(ctx context.Context, r io.Reader) (ArchiveCheck, error) {
	if a.ReadTrail == nil || a.Keys == nil || a.Archives == nil {
		return ArchiveCheck{}, errors.New("usecase: no audit trail to check an archive against")
	}
	var (
		state openrecall.TrailState
		k     audit.Key
	)
	if err := a.ReadTrail(ctx, TrailReader{State: func(s openrecall.TrailState) error {
		var err error
		state = s
		k, err = a.Keys.Key(s, false)
		return err
	}}); err != nil {
		return ArchiveCheck{}, err
	}
	if k.IsZero() {
		return ArchiveCheck{}, a.Keys.Explain(fmt.Errorf("checking an archive needs the key that signed it: %w", audit.ErrNoKey))
	}
	if state.KeyID != "" && state.KeyID != k.ID() {
		return ArchiveCheck{}, a.Keys.Explain(fmt.Errorf("the trail is keyed with key %s, the key at hand is %s: %w", state.KeyID, k.ID(), audit.ErrWrongKey))
	}
	recs, err := a.Archives.Archives(ctx)
	if err != nil {
		return ArchiveCheck{}, err
	}
	sum := sha256.New()
	c, err := readArchive(io.TeeReader(r, sum), k, state.LegacyThrough)
	if err != nil {
		return ArchiveCheck{}, err
	}
	// The rest of the file, if the reading stopped early, is hashed too.
	if _, err := io.Copy(sum, r); err != nil {
		return ArchiveCheck{}, fmt.Errorf("archive file: %w", err)
	}
	c.FileSHA256 = hex.EncodeToString(sum.Sum(nil))
	prev := openrecall.TrailArchive{}
	found := false
	for _, rec := range recs {
		if hmac.Equal([]byte(rec.FileSHA256), []byte(c.FileSHA256)) {
			c.Record, found = rec, true
			break
		}
		prev = rec
	}
	problem := func(seq int64, detail string) {
		c.problems = append(c.problems, audit.Problem{Sequence: seq, Kind: audit.KindArchive, Detail: detail})
	}
	switch {
	case !found:
		problem(c.Through.Entries.Sequence, fmt.Sprintf("no archive record of this trail has the file's SHA-256 %s: the file was changed, or is not this trail's archive", c.FileSHA256))
	case !audit.ArchiveSigned(k, c.Record):
		problem(c.Record.Through, "the archive record with the file's SHA-256 does not match its signature: it was forged or changed")
	case ends(c.Record) != c.Through:
		problem(c.Record.Through, fmt.Sprintf("the file's header ends at entry %d and cost point %d, its archive record at entry %d and cost point %d",
			c.Through.Entries.Sequence, c.Through.CostPoints.Sequence, c.Record.Through, c.Record.CostThrough))
	case ends(prev) != c.From:
		problem(c.From.Entries.Sequence, fmt.Sprintf("the file's header starts after entry %d and cost point %d, the archive record before it ends at entry %d and cost point %d",
			c.From.Entries.Sequence, c.From.CostPoints.Sequence, prev.Through, prev.CostThrough))
	}
	c.Problems = NewVerified(audit.Report{Problems: c.problems}).Problems
	c.Intact = len(c.Problems) == 0
	return c.ArchiveCheck, nil
}

// archiveReading is an ArchiveCheck with the problems found so far.
type archiveReading struct {
	ArchiveCheck
	problems []audit.Problem
}

// readArchive reads an archive file and checks its chains under k. A file
// whose first line is not an archive header is an error wrapping
// openrecall.ErrInvalid; a later line that does not read is a problem.
func readArchive(r io.Reader, k audit.Key, legacyThrough int64) (archiveReading, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var h archiveHeader
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return archiveReading{}, fmt.Errorf("archive file: %w", err)
		}
		return archiveReading{}, fmt.Errorf("archive file: empty: %w", openrecall.ErrInvalid)
	}
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Format != archiveFormat {
		return archiveReading{}, fmt.Errorf("archive file: the first line is not an %s header: %w", archiveFormat, openrecall.ErrInvalid)
	}
	c := archiveReading{ArchiveCheck: ArchiveCheck{From: h.From, Through: h.Through}}
	entries, costs := audit.NewKeyedVerifier(k, legacyThrough), audit.NewCostVerifier(k)
	entries.Start(h.From.Entries.Sequence, h.From.Entries.Hash)
	costs.Start(h.From.CostPoints.Sequence, h.From.CostPoints.Hash)
	var unread []audit.Problem
	for n := 2; sc.Scan(); n++ {
		var l archiveLine
		err := json.Unmarshal(sc.Bytes(), &l)
		switch {
		case err == nil && l.Entry != nil && l.Cost == nil:
			entries.Add(*l.Entry)
		case err == nil && l.Cost != nil && l.Entry == nil:
			costs.AddCost(l.Cost.Sequence, l.Cost.PrevHash, l.Cost.Hash, l.Cost.Point)
		default:
			unread = append(unread, audit.Problem{Kind: audit.KindEdited, Detail: fmt.Sprintf("line %d of the archive file is neither an entry nor a cost point", n)})
		}
	}
	if err := sc.Err(); err != nil {
		return archiveReading{}, fmt.Errorf("archive file: %w", err)
	}
	c.Entries, c.CostPoints = entries.Count(), costs.Count()
	c.problems = append(unread, entries.Finish(h.Through.Entries.Sequence, h.Through.Entries.Hash)...)
	c.problems = append(c.problems, costs.Finish(h.Through.CostPoints.Sequence, h.Through.CostPoints.Hash)...)
	if c.Entries != h.Entries || c.CostPoints != h.CostPoints {
		c.problems = append(c.problems, audit.Problem{Kind: audit.KindDeleted, Detail: fmt.Sprintf("the file holds %d entries and %d cost points, its header says %d and %d",
			c.Entries, c.CostPoints, h.Entries, h.CostPoints)})
	}
	return c, nil
}
