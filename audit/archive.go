package audit

import (
	"crypto/hmac"

	"github.com/openrecall/openrecall"
)

// Archive is an archive record (openrecall.TrailArchive): where a prefix of
// the trail moved to an archive file ends.
type Archive = openrecall.TrailArchive

// archiveMAC is the HMAC under k of every field of a but MAC.
func archiveMAC(k Key, a Archive) string {
	enc := encoder{}
	enc.str("openrecall.audit.archive.v1")
	enc.int(a.Through)
	enc.str(a.ThroughHash)
	enc.int(a.CostThrough)
	enc.str(a.CostThroughHash)
	enc.int(a.Before.UnixNano())
	enc.int(a.At.UnixNano())
	enc.str(a.FileSHA256)
	enc.str(a.KeyID)
	return k.mac(enc.b)
}

// SignArchive returns a signed with k: KeyID set to k's ID and MAC to the
// key's HMAC over all the other fields, so that the record cannot be forged
// or changed without the key.
func SignArchive(k Key, a Archive) Archive {
	a.KeyID, a.MAC = k.ID(), ""
	a.MAC = archiveMAC(k, a)
	return a
}

// ArchiveSigned reports whether a is signed with k (SignArchive).
func ArchiveSigned(k Key, a Archive) bool {
	return !k.IsZero() && a.KeyID == k.ID() && hmac.Equal([]byte(a.MAC), []byte(archiveMAC(k, a)))
}
