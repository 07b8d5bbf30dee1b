package audit

import (
	"slices"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestVerifyLinks: an analysis's entries are checked in place against
// their content, the entries before them and the head record; what
// happens elsewhere in the chain is not its finding.
func TestVerifyLinks(t *testing.T) {
	c := chain(9) // three analyses of three entries: b1-000002 is entries 4-6
	const id = "b1-000002"
	state := func(c []openrecall.AuditEntry) State {
		seq, hash := head(c)
		return State{HeadSeq: seq, HeadHash: hash, LegacyThrough: seq} // unkeyed
	}
	// around returns the entries of id and the one before each, as
	// memory's AnalysisLinks reads them.
	around := func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
		var out []openrecall.AuditEntry
		for i, e := range c {
			if e.AnalysisID == id || i+1 < len(c) && c[i+1].AnalysisID == id {
				out = append(out, e)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		edit  func(c []openrecall.AuditEntry) []openrecall.AuditEntry
		id    string
		kinds []string
	}{
		{"clean", func(c []openrecall.AuditEntry) []openrecall.AuditEntry { return c }, id, nil},
		{"its entry edited", func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
			c[4].Reason = "nothing to see"
			return c
		}, id, []string{"5 " + KindEdited}},
		{"the entry before it replaced", func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
			c[2] = forged(c[2])
			return c
		}, id, []string{"4 " + KindDeleted}},
		{"the entry before it deleted", func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
			return without(c, 2)
		}, id, []string{"4 " + KindDeleted}},
		{"another analysis edited", func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
			c[7].Reason = "nothing to see"
			return c
		}, id, nil},
		{"the last entry not the head", func(c []openrecall.AuditEntry) []openrecall.AuditEntry {
			c[8].Hash = "0000"
			return c
		}, "b1-000003", []string{"9 " + KindEdited, "9 " + KindHeadMismatch}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean := slices.Clone(c)
			st := state(clean)
			ps, err := VerifyLinks(Key{}, st, around(tt.edit(slices.Clone(c))), tt.id)
			if tt.id != id {
				ps, err = VerifyLinks(Key{}, st, tt.edit(slices.Clone(c)), tt.id)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(ps); !slices.Equal(got, tt.kinds) && len(got)+len(tt.kinds) > 0 {
				t.Errorf("kinds %v, want %v: %v", got, tt.kinds, ps)
			}
		})
	}
}
