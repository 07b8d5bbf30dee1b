package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// TestGroupsAPI: a storm posted to the server is grouped under its first
// firing; GET /api/v1/groups lists the open group, POST
// /api/v1/groups/{id}/decision decides it once (one memory, the decision on
// every firing), a second decision is 409, and a later firing of the
// alert heads a new group (DESIGN §6a, §12).
func TestGroupsAPI(t *testing.T) {
	e := newEnv(t, options{grouping: true})
	storm := func(from, to int) []string {
		var items []string
		for i := from; i < to; i++ {
			items = append(items, fmt.Sprintf(`{"status":"firing","labels":{"alertname":"NodeFilesystemAlmostOutOfSpace","job":"node-exporter","severity":"warning","instance":"node-%d:9100"},"annotations":{"summary":"Filesystem on node-%d has less than 5%% space left"},"startsAt":"2026-11-30T03:%02d:00Z","fingerprint":"%016x"}`, i, i, i, i+1))
		}
		return items
	}
	var ack accepted
	if resp := e.post("/api/v1/alerts/alertmanager", "", `{"version":"4","status":"firing","alerts":[`+strings.Join(storm(0, 5), ",")+`]}`, &ack); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("post: %d", resp.StatusCode)
	}
	for _, a := range ack.Analyses {
		e.wait(a.AnalysisID, "")
	}
	var groups []openrecall.Group
	if resp, b := e.do(http.MethodGet, "/api/v1/groups", "", nil, nil, &groups); resp.StatusCode != http.StatusOK || len(groups) != 1 || groups[0].Size != 5 {
		t.Fatalf("groups: %d %s", resp.StatusCode, b)
	}
	id := groups[0].ID
	var dg usecase.DecidedGroup
	if resp := e.post("/api/v1/groups/"+id+"/decision", "", `{"decision":"known_benign","note":"cleanup job","analyst":"ana"}`, &dg); resp.StatusCode != http.StatusOK {
		t.Fatalf("decision: %d", resp.StatusCode)
	}
	if !dg.Created || len(dg.Members) != 5 || dg.Incident.SourceAlertID != ack.Analyses[0].AlertID {
		t.Errorf("decided: %+v", dg)
	}
	for _, m := range dg.Members {
		if m.Decision != openrecall.DecisionKnownBenign {
			t.Errorf("member %s carries %q", m.AnalysisID, m.Decision)
		}
	}
	if resp, b := e.do(http.MethodPost, "/api/v1/groups/"+id+"/decision", "", strings.NewReader(`{"decision":"real"}`), nil, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("second decision: %d %s", resp.StatusCode, b)
	}
	var later accepted
	e.post("/api/v1/alerts/alertmanager", "", `{"version":"4","status":"firing","alerts":[`+strings.Join(storm(5, 6), ",")+`]}`, &later)
	sv := e.wait(later.Analyses[0].AnalysisID, "")
	if sv.Result.Group == nil || sv.Result.Grouped() || sv.Result.Group.ID == id {
		t.Errorf("a firing after the decision: group %+v, want the head of a new one", sv.Result.Group)
	}
}
