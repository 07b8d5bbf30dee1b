package openrecall

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Identity says which alert an alert is: the rule (check) that fired and the
// service it fired for (DESIGN §4). Alert DNA says what kind of trouble an
// alert is; only a memory of the same identity may vote for a bypass.
//
// Rule is an alertname (in any format), a PagerDuty class, or else the
// masked template of the alert's summary or title. Service is the normalized
// service the alert is about, empty when unknown; hosts, instances, pods and
// PagerDuty sources are never part of it. The zero value (no rule) is "no
// identity".
type Identity struct {
	Rule    string `json:"rule"`
	Service string `json:"service"`
}

// IsZero reports whether the identity is absent: without a rule there is no
// identity, whatever the service.
func (i Identity) IsZero() bool { return i.Rule == "" }

// String returns the identity as a person reads it: "rule" or
// "rule @ service", or "-" when absent.
func (i Identity) String() string {
	switch {
	case i.IsZero():
		return "-"
	case i.Service == "":
		return i.Rule
	}
	return i.Rule + " @ " + i.Service
}

// Key returns a short, stable hash of the identity (16 hex digits) used for
// indexing, or "" when the identity is absent.
func (i Identity) Key() string {
	if i.IsZero() {
		return ""
	}
	var b strings.Builder
	b.WriteString(i.Rule)
	b.WriteByte(0)
	b.WriteString(i.Service)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}
