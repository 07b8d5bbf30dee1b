package gen

import (
	"fmt"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// EvidenceKinds are the evidence an alert of a sender carries that changes
// from one firing of a check to the next (DESIGN §4): the host it fired on
// (openrecall.Alert.Host) and the entities that acted, by name.
func EvidenceKinds() []string {
	return []string{"host", "user", "process", "command", "file", "image", "account", "parent_process", "executable"}
}

// EvidenceValues are what another firing may name instead, by kind of
// evidence: hosts named after a dependency, users named after a service,
// database and shell processes, command lines and file paths an attack
// pattern's rule would read (a traversal, /etc/passwd, a metadata
// address), and plain ones.
func EvidenceValues(kind string) []string {
	switch kind {
	case "host":
		return []string{"db-2", "postgres-primary-1", "redis-cache-3", "kafka-broker-2", "mysql-7", "ldap-01", "timeout-tester",
			"ip-10-0-3-17.ec2.internal", "web-07"}
	case "user", "account":
		return []string{"postgres", "svc-redis", "root", "mallory", "kafka-admin", "alice"}
	case "file":
		return []string{"/etc/passwd", "/etc/shadow", "../../etc/hosts", "/var/lib/mysql/ibdata1", "/tmp/x.sh", "/srv/app/config.yml"}
	}
	return []string{"/usr/bin/psql", "redis-server", "cat /etc/passwd", "curl http://169.254.169.254/latest/meta-data/",
		"/bin/bash -i", "nginx", "postgres", "python3 -m http.server"}
}

// evidenceValues is the largest pool of EvidenceValues: a value index is
// taken modulo its kind's pool.
const evidenceValues = 9

// EvidenceChange is one fixture of a sender whose evidence of one kind
// another firing names otherwise (P155).
type EvidenceChange struct {
	Fixture FixtureRef
	Kind    int
	Value   int
}

// Get returns the kind of evidence and its new value.
func (c EvidenceChange) Get() (kind, value string) {
	kind = EvidenceKinds()[c.Kind%len(EvidenceKinds())]
	vs := EvidenceValues(kind)
	return kind, vs[c.Value%len(vs)]
}

// EvidenceChangeGen generates every fixture of every sender, every kind of
// evidence and every value.
func EvidenceChangeGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(EvidenceChange{}), map[string]gopter.Gen{
		"Fixture": fixtureRefGen(EverySender),
		"Kind":    Index(len(EvidenceKinds()), 0),
		"Value":   Index(evidenceValues, 0),
	})
}

// ValidEvidenceChange reports indexes outside their pools.
func ValidEvidenceChange(c EvidenceChange) error {
	if err := validFixtureRef(c.Fixture, EverySender); err != nil {
		return err
	}
	if err := indexesIn([]int{c.Kind}, len(EvidenceKinds()), "kind"); err != nil {
		return err
	}
	if err := indexesIn([]int{c.Value}, evidenceValues, "value"); err != nil {
		return fmt.Errorf("evidence %w", err)
	}
	return nil
}
