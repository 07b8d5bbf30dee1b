package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	good := strings.Repeat("0f", KeySize)
	k, err := ParseKey("  " + good + "\n")
	if err != nil || k.Text() != good {
		t.Fatalf("ParseKey(good) = %q, %v", k.Text(), err)
	}
	for _, bad := range []string{"", good[:62], good + "00", strings.Repeat("zz", KeySize)} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
	other, _ := NewKey(bytes.Repeat([]byte{1}, KeySize))
	if k.ID() == other.ID() || !strings.HasPrefix(k.ID(), "k1-") || strings.Contains(k.ID(), good[:16]) {
		t.Errorf("key ids %q %q: want distinct, prefixed, not the key", k.ID(), other.ID())
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "openrecall", "audit.key")
	if _, err := ReadKeyFile(path); !errors.Is(err, ErrNoKey) {
		t.Fatalf("missing key file: %v, want ErrNoKey", err)
	}
	k, err := CreateKeyFile(path, bytes.NewReader(bytes.Repeat([]byte{7}, KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %v, want 0700", di.Mode().Perm())
	}
	// A second creator finds the first key and keeps it.
	k2, err := CreateKeyFile(path, bytes.NewReader(bytes.Repeat([]byte{9}, KeySize)))
	if err != nil || k2.ID() != k.ID() {
		t.Errorf("second CreateKeyFile: %v, key %s, want the first key %s", err, k2.ID(), k.ID())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a key file others can read: %v", err)
	}
}

func TestCheckpoint(t *testing.T) {
	k, _ := NewKey(bytes.Repeat([]byte{3}, KeySize))
	s := State{HeadSeq: 12, HeadHash: "ab12", CostHeadSeq: 0, LegacyThrough: 4, LegacyCosts: 2}
	cp := NewCheckpoint(k, s)
	got, err := ParseCheckpoint(cp.String() + "\n")
	if err != nil || got != cp {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, cp)
	}
	if err := got.Check(k); err != nil {
		t.Errorf("Check: %v", err)
	}
	other, _ := NewKey(bytes.Repeat([]byte{4}, KeySize))
	if err := got.Check(other); !errors.Is(err, ErrWrongKey) {
		t.Errorf("Check with another key: %v, want ErrWrongKey", err)
	}
	forged := got
	forged.HeadSeq = 11
	if err := forged.Check(k); !errors.Is(err, ErrBadCheckpoint) {
		t.Errorf("Check of an edited checkpoint: %v, want ErrBadCheckpoint", err)
	}
	for _, bad := range []string{"", "orcp1.1.2", "orcp1.x.-.0.-.0.0.k1-00.ff", "orcp2.1.a.0.-.0.0.k1-00.ff"} {
		if _, err := ParseCheckpoint(bad); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("ParseCheckpoint(%q): %v", bad, err)
		}
	}
}

// TestTrailVerifierKeyErrors: a keyed trail without a key, or with another
// key, stops with ErrNoKey or ErrWrongKey, not with problems; a trail that
// is all unkeyed verifies without a key.
func TestTrailVerifierKeyErrors(t *testing.T) {
	k, _ := NewKey(bytes.Repeat([]byte{5}, KeySize))
	other, _ := NewKey(bytes.Repeat([]byte{6}, KeySize))
	keyed := State{HeadSeq: 3, LegacyThrough: 1, KeyID: k.ID()}
	if _, err := NewTrailVerifier(Key{}, keyed, nil); !errors.Is(err, ErrNoKey) {
		t.Errorf("no key: %v", err)
	}
	if _, err := NewTrailVerifier(other, keyed, nil); !errors.Is(err, ErrWrongKey) {
		t.Errorf("other key: %v", err)
	}
	c := chain(3)
	tv, err := NewTrailVerifier(Key{}, State{HeadSeq: 3, HeadHash: c[2].Hash, LegacyThrough: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c {
		tv.Entry(e)
	}
	if r := tv.Finish(); len(r.Problems) > 0 || r.Entries != 3 {
		t.Errorf("unkeyed legacy trail: %+v", r)
	}
}
