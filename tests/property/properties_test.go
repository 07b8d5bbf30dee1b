package property

import (
	"sort"
	"strconv"
	"testing"

	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/internal/testenv"
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
	props = append(props, existIndexProperty()...)
	props = append(props, pipelineProperties()...)
	props = append(props, budgetProperties()...)
	props = append(props, creationProperties()...)
	props = append(props, senderTableProperties()...)
	props = append(props, mappedWebhookProperties()...)
	props = append(props, mappedGrafanaProperties()...)
	props = append(props, notifyProperties()...)
	props = append(props, notifiedProperties()...)
	props = append(props, outboxProperties()...)
	props = append(props, digestProperties()...)
	props = append(props, queueProperties()...)
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
	props = append(props, evidenceProperties()...)
	props = append(props, genericProperties()...)
	props = append(props, securitySenderProperties()...)
	props = append(props, groupProperties()...)
	props = append(props, exceptionProperties()...)
	props = append(props, runsProperties()...)
	props = append(props, teethProperties()...)
	props = append(props, waitingProperties()...)
	props = append(props, waitingResultProperties()...)
	props = append(props, resultDocProperties()...)
	props = append(props, historyProperties()...)
	props = append(props, pruneProperties()...)
	props = append(props, archiveProperties()...)
	props = append(props, forgetProperties()...)
	props = append(props, leaseProperties()...)
	props = append(props, idProperties()...)
	props = append(props, trustProperties()...)
	props = append(props, authProperties()...)
	props = append(props, httpProperties()...)
	props = append(props, sealProperties()...)
	props = append(props, replicaProperties()...)
	sort.SliceStable(props, func(i, j int) bool { return idNumber(props[i].ID) < idNumber(props[j].ID) })
	return props
}

// TestProperties runs every property as a subtest named by its ID. On
// PostgreSQL (the conformance run) it runs the storage properties alone:
// see storageListPath.
func TestProperties(t *testing.T) {
	s, err := pbt.FromEnv(testing.Short())
	if err != nil {
		t.Fatal(err)
	}
	props := registry()
	if err := pbt.CheckIDs(props); err != nil {
		t.Fatal(err)
	}
	listed := storageProperties(t)
	if storetest.Postgres() {
		n := 0
		for _, p := range props {
			if !listed[p.ID] {
				continue
			}
			n++
			t.Run(p.ID, func(t *testing.T) { pbt.Check(t, s, p) })
		}
		t.Logf("PostgreSQL: %d storage properties of %d; the others open no store on the backend under test and ran in the SQLite pass", n, len(props))
		return
	}
	ran, took := map[string]bool{}, map[string]bool{}
	for _, p := range props {
		t.Run(p.ID, func(t *testing.T) {
			if programs, install := p.Needs(); len(programs) > 0 {
				testenv.Tools(t, install, programs...)
			}
			before := storesTaken.Load()
			pbt.Check(t, s, p)
			if t.Failed() {
				return
			}
			ran[p.ID] = true
			if storesTaken.Load() != before {
				took[p.ID] = true
			}
		})
	}
	if *update && len(ran) < len(props) {
		t.Fatalf("-update rewrites %s from a whole run: %d of %d properties ran and passed", storageListPath, len(ran), len(props))
	}
	checkStorageList(t, listed, ran, took, *update)
}

// idNumber is n of an ID P<n>_….
func idNumber(id string) int {
	n, _ := strconv.Atoi(pbt.Number(id)[1:])
	return n
}
