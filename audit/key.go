package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of an audit key in bytes.
const KeySize = 32

// ErrNoKey marks a keyed trail verified or extended without its key. It is
// a setup problem, never a sign of tampering.
var ErrNoKey = errors.New("audit key missing")

// ErrWrongKey marks a key that is not the one the trail (or a checkpoint)
// was keyed with. It is a setup problem, never a sign of tampering.
var ErrWrongKey = errors.New("audit key does not match")

// Key is the secret that keys the audit chain (HMAC-SHA-256). It is kept
// outside the database it protects. The zero Key is "no key".
type Key struct{ b string }

// NewKey returns the Key made of b, which must be KeySize bytes.
func NewKey(b []byte) (Key, error) {
	if len(b) != KeySize {
		return Key{}, fmt.Errorf("audit key: %d bytes, want %d", len(b), KeySize)
	}
	return Key{b: string(b)}, nil
}

// ParseKey reads a key in its text form: 64 hexadecimal digits (KeySize
// bytes), surrounding white space ignored. It is the form of the key file
// and of OPENRECALL_AUDIT_KEY.
func ParseKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != KeySize {
		return Key{}, fmt.Errorf("audit key: want %d hexadecimal digits (%d bytes), got %d characters", 2*KeySize, KeySize, len(s))
	}
	return Key{b: string(b)}, nil
}

// IsZero reports whether k is the zero Key (no key).
func (k Key) IsZero() bool { return k.b == "" }

// Text returns k in its text form (see ParseKey). It is the secret itself:
// write it only where the key belongs.
func (k Key) Text() string { return hex.EncodeToString([]byte(k.b)) }

// ID returns a short public name of k ("k1-" and 16 hex digits of a hash of
// it): the trail records it so a wrong key is told apart from tampering. It
// reveals nothing usable about the key.
func (k Key) ID() string {
	sum := sha256.Sum256([]byte("openrecall.audit.key-id\x00" + k.b))
	return "k1-" + hex.EncodeToString(sum[:8])
}

// mac returns the hex HMAC-SHA-256 of msg under k.
func (k Key) mac(msg []byte) string { return macHex(hmac.New(sha256.New, []byte(k.b)), msg) }

// macHex writes msg to the keyed state m and returns the hex of its sum.
func macHex(m hash.Hash, msg []byte) string {
	st := macState{h: m, msg: msg}
	return st.hex()
}

// ReadKeyFile reads the key file at path. A missing file is an error
// wrapping ErrNoKey; a file that others may read, or that does not hold a
// key, is refused.
func ReadKeyFile(path string) (Key, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Key{}, fmt.Errorf("audit key file %s does not exist: %w", path, ErrNoKey)
	}
	if err != nil {
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return Key{}, fmt.Errorf("audit key file %s has mode %04o, readable by others: run chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return Key{}, fmt.Errorf("audit key file %s: %w", path, err)
	}
	return k, nil
}

// CreateKeyFile makes a new key from random and writes it to path (mode
// 0600, its directory created with 0700). When the file appeared meanwhile
// (another process created it first), that key is read and returned.
func CreateKeyFile(path string, random io.Reader) (Key, error) {
	b := make([]byte, KeySize)
	if _, err := io.ReadFull(random, b); err != nil {
		return Key{}, fmt.Errorf("audit key: read random bytes: %w", err)
	}
	k, _ := NewKey(b)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	// Write under a temporary name and link it into place, so no reader
	// ever sees a half-written key and an existing key is never replaced.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".audit.key-*")
	if err != nil {
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	// The temporary name only ever holds a copy: once linked, path is the
	// key; on failure the error being returned is the one that matters. A
	// leftover ".audit.key-*" file is inert (nothing reads that pattern).
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.WriteString(k.Text() + "\n"); err != nil {
		_ = tmp.Close() // the write error is the one to report
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close() // the sync error is the one to report
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return ReadKeyFile(path)
	} else if err != nil {
		return Key{}, fmt.Errorf("audit key file: %w", err)
	}
	return k, nil
}
