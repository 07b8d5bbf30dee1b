package openrecall

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid marks input that breaks a documented rule (a non-canonical
// fingerprint, an unknown decision, a malformed record). Callers branch on it
// with errors.Is.
var ErrInvalid = errors.New("invalid")

// ErrNotFound marks a lookup that found nothing.
var ErrNotFound = errors.New("not found")

// ErrIntegrity marks a stored row that does not match its seal in the
// keyed audit chain (DESIGN §9): it was edited, rolled back or written
// outside the chain, and is not served or believed.
var ErrIntegrity = errors.New("integrity check failed")

// Field names of the Alert DNA, in canonical order.
const (
	FieldErrorClass        = "error_class"
	FieldServiceRole       = "service_role"
	FieldDependencyPattern = "dependency_pattern"
	FieldSignalShape       = "signal_shape"
	FieldAttackPattern     = "attack_pattern"
	FieldEnvironment       = "environment"
)

// FingerprintFields lists the six Alert DNA field names in canonical order.
// Callers must not modify it.
var FingerprintFields = []string{
	FieldErrorClass, FieldServiceRole, FieldDependencyPattern,
	FieldSignalShape, FieldAttackPattern, FieldEnvironment,
}

// Default vocabulary per field (DESIGN §4). Values outside it are allowed when
// they are canonical tokens; rules files may add more. Callers must not
// modify these slices.
var (
	ErrorClasses = []string{
		"crashloopbackoff", "oomkilled", "http_5xx", "http_4xx", "timeout",
		"tls_handshake", "auth_failure", "connection_refused", "pool_exhausted",
		"migration_lock", "config_error", "image_pull", "dns_failure",
		"disk_pressure", "cert_expiry", "latency_slo", "replication_lag",
		"queue_backlog",
	}
	ServiceRoles = []string{
		"api_edge", "web_frontend", "batch_worker", "db_primary", "db_replica",
		"cache", "queue_consumer", "scheduler", "auth_service",
		"payment_service", "storage",
	}
	DependencyPatterns = []string{
		"configmap", "dns", "downstream_api", "queue", "object_store",
		"database", "cache", "identity_provider", "smtp", "payment_provider",
		"feature_flag", "secret_store",
	}
	SignalShapes   = []string{"spike", "sustained", "sawtooth", "regression", "flapping"}
	AttackPatterns = []string{
		"brute_force", "port_scan", "suspicious_login", "credential_stuffing",
		"sql_injection", "xss", "csrf", "ssrf", "rce", "path_traversal",
		"malware", "data_exfiltration", "privilege_escalation",
		// ATT&CK tactics (DESIGN §4), in its order of precedence.
		"initial_access", "execution", "persistence", "defense_evasion",
		"credential_access", "discovery", "lateral_movement", "collection",
		"command_and_control", "impact", "reconnaissance", "resource_development",
		// An alert of a security detection sender that names no tactic.
		"security_detection",
	}
	Environments = []string{"prod", "staging", "dev"}
)

// Vocabulary returns the default values of one field by its name, or nil for
// an unknown name. The returned slice must not be modified.
func Vocabulary(field string) []string {
	switch field {
	case FieldErrorClass:
		return ErrorClasses
	case FieldServiceRole:
		return ServiceRoles
	case FieldDependencyPattern:
		return DependencyPatterns
	case FieldSignalShape:
		return SignalShapes
	case FieldAttackPattern:
		return AttackPatterns
	case FieldEnvironment:
		return Environments
	}
	return nil
}

// Fingerprint is the six-field Alert DNA of an alert. Each value is a
// canonical token (lowercase [a-z0-9_]+) or empty, meaning unknown.
// The zero value is the valid, all-unknown fingerprint.
type Fingerprint struct {
	ErrorClass        string `json:"error_class"`
	ServiceRole       string `json:"service_role"`
	DependencyPattern string `json:"dependency_pattern"`
	SignalShape       string `json:"signal_shape"`
	AttackPattern     string `json:"attack_pattern"`
	Environment       string `json:"environment"`
}

// Values returns the six values in canonical field order.
func (f Fingerprint) Values() [6]string {
	return [6]string{f.ErrorClass, f.ServiceRole, f.DependencyPattern, f.SignalShape, f.AttackPattern, f.Environment}
}

// Get returns the value of the named field and whether the name is known.
func (f Fingerprint) Get(field string) (string, bool) {
	for i, name := range FingerprintFields {
		if name == field {
			return f.Values()[i], true
		}
	}
	return "", false
}

// With returns a copy of f with the named field set to value. An unknown
// field name returns f unchanged and false.
func (f Fingerprint) With(field, value string) (Fingerprint, bool) {
	switch field {
	case FieldErrorClass:
		f.ErrorClass = value
	case FieldServiceRole:
		f.ServiceRole = value
	case FieldDependencyPattern:
		f.DependencyPattern = value
	case FieldSignalShape:
		f.SignalShape = value
	case FieldAttackPattern:
		f.AttackPattern = value
	case FieldEnvironment:
		f.Environment = value
	default:
		return f, false
	}
	return f, true
}

// String returns the canonical string: the six name=value pairs in canonical
// order, separated by ';', an empty value written as nothing after '='.
func (f Fingerprint) String() string {
	vals := f.Values()
	n := len(vals) - 1 // the separators
	for i, v := range vals {
		n += len(FingerprintFields[i]) + 1 + len(v)
	}
	var b strings.Builder
	b.Grow(n) // one allocation: the hot path builds this string per alert
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(FingerprintFields[i])
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// appendCanonical appends the canonical string (String) to b.
func (f Fingerprint) appendCanonical(b []byte) []byte {
	for i, v := range f.Values() {
		if i > 0 {
			b = append(b, ';')
		}
		b = append(b, FingerprintFields[i]...)
		b = append(b, '=')
		b = append(b, v...)
	}
	return b
}

// ID returns a short, stable hash of the canonical string (12 hex digits),
// used for display and indexing.
func (f Fingerprint) ID() string {
	var buf [256]byte // the canonical string of a usual fingerprint fits
	sum := sha256.Sum256(f.appendCanonical(buf[:0]))
	var id [12]byte
	hex.Encode(id[:], sum[:6])
	return string(id[:])
}

// HasAttack reports whether the fingerprint carries an attack pattern.
func (f Fingerprint) HasAttack() bool { return f.AttackPattern != "" }

// IsZero reports whether every field is unknown.
func (f Fingerprint) IsZero() bool { return f == Fingerprint{} }

// Validate reports the first field whose value is not a canonical token.
func (f Fingerprint) Validate() error {
	for i, v := range f.Values() {
		if v != "" && !IsCanonicalToken(v) {
			return fmt.Errorf("fingerprint field %s: value %q is not a canonical token (lowercase [a-z0-9_]+): %w", FingerprintFields[i], v, ErrInvalid)
		}
	}
	return nil
}

// IsCanonicalToken reports whether s is a non-empty lowercase [a-z0-9_]+ token.
func IsCanonicalToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// CanonicalToken lowercases s and folds every run of characters outside
// [a-z0-9] into one '_', trimming '_' at both ends. It returns "" when nothing
// canonical remains. It is idempotent.
func CanonicalToken(s string) string {
	var b strings.Builder
	pending := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
			continue
		}
		pending = true
	}
	return b.String()
}

// ParseFingerprint parses a canonical fingerprint string strictly: exactly the
// six pairs in canonical order, each value empty or a canonical token. The
// error names the offending part and wraps ErrInvalid.
func ParseFingerprint(s string) (Fingerprint, error) {
	parts := strings.Split(s, ";")
	if len(parts) != len(FingerprintFields) {
		return Fingerprint{}, fmt.Errorf("parse fingerprint %q: want %d ';'-separated name=value pairs, got %d: %w", s, len(FingerprintFields), len(parts), ErrInvalid)
	}
	var f Fingerprint
	for i, part := range parts {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return Fingerprint{}, fmt.Errorf("parse fingerprint: pair %d %q has no '=': %w", i+1, part, ErrInvalid)
		}
		if name != FingerprintFields[i] {
			return Fingerprint{}, fmt.Errorf("parse fingerprint: pair %d is named %q, want %q: %w", i+1, name, FingerprintFields[i], ErrInvalid)
		}
		if value != "" && !IsCanonicalToken(value) {
			return Fingerprint{}, fmt.Errorf("parse fingerprint: %s value %q is not a canonical token (lowercase [a-z0-9_]+): %w", name, value, ErrInvalid)
		}
		f, _ = f.With(name, value)
	}
	return f, nil
}
