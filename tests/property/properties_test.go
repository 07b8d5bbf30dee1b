package property

import (
	"sort"
	"strconv"
	"testing"

	"github.com/openrecall/openrecall/tests/property/pbt"
)

// registry returns every property of the suite, in ID order. IDs are
// permanent: a retired property's number is never reused.
func registry() []pbt.Property {
	var props []pbt.Property
	props = append(props, rootProperties()...)
	props = append(props, triageProperties()...)
	props = append(props, memoryProperties()...)
	props = append(props, recallCacheProperty()...)
	props = append(props, pipelineProperties()...)
	props = append(props, identityProperties()...)
	props = append(props, dbFileProperties()...)
	props = append(props, intakeProperties()...)
	props = append(props, auditProperties()...)
	props = append(props, inboxProperties()...)
	props = append(props, dnaProperties()...)
	props = append(props, liveProperties()...)
	props = append(props, blindSpotProperties()...)
	props = append(props, caseFileProperties()...)
	props = append(props, templateProperties()...)
	props = append(props, securityProperties()...)
	props = append(props, siemProperties()...)
	props = append(props, senderProperties()...)
	props = append(props, securitySenderProperties()...)
	props = append(props, groupProperties()...)
	props = append(props, exceptionProperties()...)
	props = append(props, teethProperties()...)
	props = append(props, waitingProperties()...)
	props = append(props, pruneProperties()...)
	props = append(props, archiveProperties()...)
	props = append(props, forgetProperties()...)
	props = append(props, leaseProperties()...)
	props = append(props, idProperties()...)
	props = append(props, trustProperties()...)
	props = append(props, authProperties()...)
	props = append(props, sealProperties()...)
	sort.SliceStable(props, func(i, j int) bool { return idNumber(props[i].ID) < idNumber(props[j].ID) })
	return props
}

// TestProperties runs every property as a subtest named by its ID.
func TestProperties(t *testing.T) {
	s, err := pbt.FromEnv(testing.Short())
	if err != nil {
		t.Fatal(err)
	}
	pbt.Run(t, s, registry())
}

// idNumber is n of an ID P<n>_….
func idNumber(id string) int {
	n, _ := strconv.Atoi(pbt.Number(id)[1:])
	return n
}
