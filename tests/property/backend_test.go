package property

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/memory"
)

// The storage properties run on the backend under test: SQLite by default,
// PostgreSQL when OPENRECALL_TEST_BACKEND=postgres (make test's
// conformance run, same seed), on an empty schema per store.

// storesTaken counts the stores storeLocation has handed out: a property
// that takes one is a storage property (see storageProperties).
var storesTaken atomic.Int64

// storeLocation returns where a property's store lives: memory.db in dir,
// or an empty PostgreSQL schema, which drop releases once the property's
// stores are closed (a no-op for SQLite: the caller removes dir).
func storeLocation(dir string) (location string, drop func(), err error) {
	storesTaken.Add(1)
	return storetest.Fresh(dir)
}

// scratchLocation returns an empty store location on the backend under
// test in a new temporary directory named for name, for a property that
// opens several stores on it (several serve processes); done releases it
// once they are closed. Errors are the property's setup errors.
func scratchLocation(name string) (loc string, done func(), err error) {
	dir, err := os.MkdirTemp("", "openrecall-pbt-"+name+"-")
	if err != nil {
		return "", nil, fmt.Errorf("setup: %v", err)
	}
	loc, drop, err := storeLocation(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("setup: %v", err)
	}
	return loc, func() {
		drop()
		_ = os.RemoveAll(dir)
	}, nil
}

// scratchStore opens an empty store on the backend under test
// (storeLocation) in a new temporary directory named for name; done closes
// it and releases what it took. Errors are the property's setup errors.
func scratchStore(name string, opts memory.Options) (st *memory.Store, done func(), err error) {
	dir, err := os.MkdirTemp("", "openrecall-pbt-"+name+"-")
	if err != nil {
		return nil, nil, fmt.Errorf("setup: %v", err)
	}
	path, drop, err := storeLocation(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("setup: %v", err)
	}
	if st, err = memory.Open(context.Background(), path, opts); err != nil {
		drop()
		_ = os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("setup: %v", err)
	}
	return st, func() {
		_ = st.Close()
		drop()
		_ = os.RemoveAll(dir)
	}, nil
}

// storageListPath is the list of the properties that open a store on the
// backend under test, one ID a line. The PostgreSQL conformance run checks
// those alone: every other property runs the same code on either backend,
// and make test has just run it on SQLite. The SQLite run holds the list
// to what the properties really do (a property that takes a store and is
// not listed fails it), so no storage property can slip out of the
// conformance run; -update rewrites it.
const storageListPath = "testdata/storage_properties.txt"

// storageProperties reads the list.
func storageProperties(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(storageListPath)
	if os.IsNotExist(err) && *update {
		return map[string]bool{} // -update writes it
	}
	if err != nil {
		t.Fatalf("the storage properties' list: %v", err)
	}
	defer func() { _ = f.Close() }()
	ids := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" && !strings.HasPrefix(id, "#") {
			ids[id] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", storageListPath, err)
	}
	return ids
}

// checkStorageList fails a property that passed, took a store and is not
// listed (a listed property that took none is only logged: a generator
// may draw no store-opening case under another seed, and running it on
// PostgreSQL anyway costs time, not safety). With update it rewrites the
// list from a whole run instead.
func checkStorageList(t *testing.T, listed map[string]bool, ran map[string]bool, took map[string]bool, update bool) {
	t.Helper()
	if update {
		var ids []string
		for id := range took {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return idNumber(ids[i]) < idNumber(ids[j]) })
		body := "# The properties that open a store on the backend under test (written by\n# go test ./tests/property -run TestProperties -update; see backend_test.go).\n" + strings.Join(ids, "\n") + "\n"
		if err := os.WriteFile(storageListPath, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for id := range ran {
		switch {
		case took[id] && !listed[id]:
			t.Errorf("%s opens a store on the backend under test but is not in %s, so the PostgreSQL run would leave it out: run go test ./tests/property -run TestProperties -update", id, storageListPath)
		case !took[id] && listed[id]:
			t.Logf("%s is in %s but opened no store in this run", id, storageListPath)
		}
	}
}
