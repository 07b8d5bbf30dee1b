package audit

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// ErrBadCheckpoint marks a checkpoint that cannot be read or whose signature
// does not match its content under the right key.
var ErrBadCheckpoint = errors.New("invalid audit checkpoint")

// State is what a trail's records say about it (openrecall.TrailState):
// the heads of the audit and cost chains and the keyed boundary.
type State = openrecall.TrailState

// BoundaryMAC signs the keyed boundary (see State) with k, so that it cannot
// be moved without the key.
func BoundaryMAC(k Key, legacyThrough, legacyCosts int64) string {
	enc := encoder{}
	enc.str("openrecall.audit.boundary.v1")
	enc.int(legacyThrough)
	enc.int(legacyCosts)
	return k.mac(enc.b)
}

// Checkpoint is a signed copy of a trail's State, printed by `openrecall
// audit head` to be kept away from the database. A later trail must still
// extend it: hold the same audit entry and cost point at the checkpoint's
// sequences, with the same hashes, and the same keyed boundary.
type Checkpoint struct {
	State
	// MAC is the HMAC-SHA-256 under the trail's key of all the above.
	MAC string
}

// checkpointPrefix starts the text form of a Checkpoint.
const checkpointPrefix = "orcp1"

// NewCheckpoint signs s with k. KeyID is set to k's ID.
func NewCheckpoint(k Key, s State) Checkpoint {
	s.KeyID, s.BoundaryMAC = k.ID(), ""
	c := Checkpoint{State: s}
	c.MAC = k.mac([]byte(c.body()))
	return c
}

// body is the signed part of the text form.
func (c Checkpoint) body() string {
	return strings.Join([]string{checkpointPrefix, strconv.FormatInt(c.HeadSeq, 10), orDash(c.HeadHash),
		strconv.FormatInt(c.CostHeadSeq, 10), orDash(c.CostHeadHash), strconv.FormatInt(c.LegacyThrough, 10),
		strconv.FormatInt(c.LegacyCosts, 10), c.KeyID}, ".")
}

// String returns the text form, one token without spaces:
// orcp1.SEQ.HASH.COSTSEQ.COSTHASH.LEGACY.LEGACYCOSTS.KEYID.MAC, an empty hash
// written as "-".
func (c Checkpoint) String() string { return c.body() + "." + c.MAC }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fromDash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// LooksLikeCheckpoint reports whether s is meant as a checkpoint value
// rather than the name of a file holding one.
func LooksLikeCheckpoint(s string) bool { return strings.HasPrefix(s, checkpointPrefix+".") }

// ParseCheckpoint reads the text form of a Checkpoint (surrounding white
// space ignored). It checks the form, not the signature: see Check.
func ParseCheckpoint(s string) (Checkpoint, error) {
	f := strings.Split(strings.TrimSpace(s), ".")
	if len(f) != 9 || f[0] != checkpointPrefix {
		return Checkpoint{}, fmt.Errorf("want %s.SEQ.HASH.COSTSEQ.COSTHASH.LEGACY.LEGACYCOSTS.KEYID.MAC: %w", checkpointPrefix, ErrBadCheckpoint)
	}
	var nums [4]int64
	for i, j := range []int{1, 3, 5, 6} {
		n, err := strconv.ParseInt(f[j], 10, 64)
		if err != nil || n < 0 {
			return Checkpoint{}, fmt.Errorf("field %d %q is not a sequence number: %w", j+1, f[j], ErrBadCheckpoint)
		}
		nums[i] = n
	}
	return Checkpoint{State: State{HeadSeq: nums[0], HeadHash: fromDash(f[2]), CostHeadSeq: nums[1], CostHeadHash: fromDash(f[4]),
		LegacyThrough: nums[2], LegacyCosts: nums[3], KeyID: f[7]}, MAC: f[8]}, nil
}

// Check verifies c's signature under k: an error wrapping ErrWrongKey when c
// was signed with another key, ErrBadCheckpoint when its content was
// changed.
func (c Checkpoint) Check(k Key) error {
	if c.KeyID != k.ID() {
		return fmt.Errorf("checkpoint signed with key %s, the key at hand is %s: %w", c.KeyID, k.ID(), ErrWrongKey)
	}
	if !hmac.Equal([]byte(k.mac([]byte(c.body()))), []byte(c.MAC)) {
		return fmt.Errorf("its signature does not match its content: %w", ErrBadCheckpoint)
	}
	return nil
}
