package gen

import (
	"fmt"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// ForeignDB describes a SQLite file that another application wrote: its
// tables (some named like openrecall's), rows, journal mode and
// application id.
type ForeignDB struct {
	Tables  []int // indexes into ForeignTableNames
	Rows    int   // rows in each table, 0 to 4
	Journal int   // index into ForeignJournalModes
	AppID   int   // index into ForeignAppIDs
}

// ForeignTableNames are the table names a foreign file may hold, openrecall's
// own names among them (a foreign "incidents" table is still foreign).
func ForeignTableNames() []string {
	return []string{"customers", "dashboard", "notes", "kv", "incidents", "audit_entries", "cost_points", "migrations"}
}

// ForeignJournalModes are the journal modes a foreign file may be in.
func ForeignJournalModes() []string { return []string{"DELETE", "TRUNCATE", "PERSIST", "WAL"} }

// ForeignAppIDs are application ids: none, and some real applications'
// (Fossil, GeoPackage, MBTiles) and arbitrary ones.
func ForeignAppIDs() []int32 { return []int32{0, 0x0f055112, 0x47504b47, 0x4d504258, 1, 42, -7} }

// TableNames are the tables to create. A file with application id 0 gets
// at least one: an empty file without an id is a new file, not a foreign one.
func (f ForeignDB) TableNames() []string {
	var out []string
	for _, i := range f.Tables {
		out = append(out, ForeignTableNames()[i])
	}
	if len(out) == 0 && ForeignAppIDs()[f.AppID] == 0 {
		out = []string{ForeignTableNames()[0]}
	}
	return out
}

// ForeignDBGen generates foreign files.
func ForeignDBGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ForeignDB{}), map[string]gopter.Gen{
		"Tables":  SliceUpTo(4, Index(len(ForeignTableNames()), 0), reflect.TypeOf(0)),
		"Rows":    Index(5, 0),
		"Journal": Index(len(ForeignJournalModes()), 0),
		"AppID":   Index(len(ForeignAppIDs()), 0.4),
	})
}

// ValidForeignDB is ForeignDBGen's predicate.
func ValidForeignDB(f ForeignDB) error {
	if err := indexesIn(f.Tables, len(ForeignTableNames()), "table"); err != nil {
		return err
	}
	if err := indexesIn([]int{f.Journal}, len(ForeignJournalModes()), "journal mode"); err != nil {
		return err
	}
	if err := indexesIn([]int{f.AppID}, len(ForeignAppIDs()), "application id"); err != nil {
		return err
	}
	if f.Rows < 0 || f.Rows > 4 {
		return fmt.Errorf("rows %d out of range", f.Rows)
	}
	return nil
}
