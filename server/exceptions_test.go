package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// falcoShell is a falcosidekick delivery of Falco's "Terminal shell in
// container" on pod suffix pod, by user, at priority.
func falcoShell(n int, pod, user, priority string) string {
	return fmt.Sprintf(`{"uuid":"5d0ba0a1-2b7e-4f4e-9c3b-7a0f62c1d%03d","output":"A shell was spawned in a container with an attached terminal (user=%s process=sh)",
"priority":%q,"rule":"Terminal shell in container","time":"2024-06-13T19:%02d:58.532086161Z","source":"syscall",
"tags":["T1059","container","mitre_execution","shell"],"hostname":"ip-10-0-12-34.eu-west-1.compute.internal",
"output_fields":{"container.id":"78886%dc3cf8","container.image.repository":"docker.io/library/alpine","container.name":"alpine",
"k8s.ns.name":"default","k8s.pod.name":"alpine-deployment-77789455d6-%s","proc.cmdline":"sh -c uptime","proc.name":"sh",
"proc.pname":"runc","user.name":%q}}`, n, user, priority, n%60, n%10, pod, user)
}

// TestExceptionProposedApprovedMatchedRevoked drives the whole lifecycle
// through the API on a real server (DESIGN §6b): five benign decisions on
// a security detection give a proposal and no bypass; a person approves
// it; the next matching firing takes one exception step at cost 0, while a
// firing by another user or at a higher severity is analysed; after the
// revocation the same firing is analysed again; the trail verifies.
func TestExceptionProposedApprovedMatchedRevoked(t *testing.T) {
	e := newEnv(t, options{})
	pods := []string{"m7flp", "x2x4q", "q8k2z", "b9c4w", "t5r8v", "k6j7n", "p2d6s", "w4h9c", "z8m5f", "c4d2g"}
	fire := func(n int, user, priority string) *openrecall.Result {
		t.Helper()
		var acc accepted
		if resp := e.post("/api/v1/alerts/falcosidekick", "", falcoShell(n, pods[n], user, priority), &acc); resp.StatusCode != http.StatusAccepted || acc.Accepted != 1 {
			t.Fatalf("firing %d: %d %+v", n, resp.StatusCode, acc)
		}
		return e.wait(acc.Analyses[0].AnalysisID, "").Result
	}
	for n := range 5 {
		r := fire(n, "root", "Notice")
		var ret map[string]any
		if resp := e.post("/api/v1/retain", "", `{"analysis_id":"`+r.AnalysisID+`","decision":"known_benign","note":"uptime check by ops","analyst":"bob"}`, &ret); resp.StatusCode != http.StatusCreated {
			t.Fatalf("retain %d: %d %v", n, resp.StatusCode, ret)
		}
	}
	sixth := fire(5, "root", "Notice")
	if sixth.Bypassed || sixth.Decision.Benign() || sixth.Proposal == nil {
		t.Fatalf("sixth firing: bypassed %v, decision %s, proposal %+v (%s)", sixth.Bypassed, sixth.Decision, sixth.Proposal, sixth.Guard.Reason)
	}
	p := sixth.Proposal
	if p.Match["user"] != "root" || p.Match["process"] != "sh" || p.MaxSeverity != openrecall.SeverityLow || len(p.Supporting) != 5 {
		t.Errorf("proposal %+v: want user=root, process=sh, ceiling low, 5 memories", p)
	}
	if _, ok := p.Match["container_id"]; ok {
		t.Errorf("proposal matches on an instance id: %v", p.Match)
	}
	var ch usecase.ExceptionChange
	if resp := e.post("/api/v1/exceptions", "", `{"proposal_id":"`+p.ID+`"}`, &map[string]any{}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("approval without an analyst: %d, want 400", resp.StatusCode)
	}
	if resp := e.post("/api/v1/exceptions", "", `{"proposal_id":"`+p.ID+`","analyst":"alice","note":"ops uptime checks"}`, &ch); resp.StatusCode != http.StatusCreated {
		t.Fatalf("approve: %d %+v", resp.StatusCode, ch)
	}
	exc := ch.Exception
	if exc.Analyst != "alice" || exc.ProposalID != p.ID || ch.State != openrecall.ExceptionActive {
		t.Fatalf("approved exception %+v state %s", exc, ch.State)
	}

	matched := fire(6, "root", "Notice")
	if matched.Exception == nil || matched.Exception.ID != exc.ID || matched.Exception.Analyst != "alice" {
		t.Fatalf("matching firing: exception %+v, steps %+v", matched.Exception, matched.Steps)
	}
	last := matched.Steps[len(matched.Steps)-1]
	if last.Step != openrecall.StepException || matched.Cost != 0 || matched.Baseline <= 0 || matched.Decision != openrecall.DecisionKnownBenign {
		t.Errorf("matching firing: step %s, cost %d, baseline %d, decision %s", last.Step, matched.Cost, matched.Baseline, matched.Decision)
	}
	for _, other := range []*openrecall.Result{fire(7, "mallory", "Notice"), fire(8, "root", "Critical")} {
		if other.Exception != nil || other.Decision.Benign() {
			t.Errorf("%s at %s: exception %+v, decision %s; want analysed", other.Alert.Entities["user"], other.Alert.Severity, other.Exception, other.Decision)
		}
	}

	var list []usecase.ListedException
	e.do(http.MethodGet, "/api/v1/exceptions?state=active", "", nil, nil, &list)
	if len(list) != 1 || list[0].ID != exc.ID {
		t.Fatalf("active exceptions: %+v", list)
	}
	if resp := e.post("/api/v1/exceptions/"+exc.ID+"/revoke", "", `{"analyst":"carol","reason":"the job was retired"}`, &ch); resp.StatusCode != http.StatusOK || ch.State != openrecall.ExceptionRevoked {
		t.Fatalf("revoke: %d %+v", resp.StatusCode, ch)
	}
	if again := fire(9, "root", "Notice"); again.Exception != nil || again.Decision.Benign() {
		t.Errorf("firing after the revocation: exception %+v, decision %s", again.Exception, again.Decision)
	}
	e.do(http.MethodGet, "/api/v1/exceptions?state=revoked", "", nil, nil, &list)
	if len(list) != 1 || list[0].RevokedBy != "carol" {
		t.Errorf("revoked exceptions: %+v", list)
	}
	var v map[string]any
	if resp, b := e.do(http.MethodGet, "/api/v1/audit/verify", "", nil, nil, &v); resp.StatusCode != http.StatusOK || v["intact"] != true {
		t.Errorf("audit verify: %d %s", resp.StatusCode, b)
	}
}

// TestRetainOfAGroupedAttackKeepsItsEntityFields: with grouping on (serve's
// default), a retain about an attack's analysis decides its group; the
// group's memory keeps the head's entity fields, so five such decisions
// still give the sixth firing a proposal.
func TestRetainOfAGroupedAttackKeepsItsEntityFields(t *testing.T) {
	e := newEnv(t, options{grouping: true})
	pods := []string{"m7flp", "x2x4q", "q8k2z", "b9c4w", "t5r8v", "k6j7n"}
	fire := func(n int) *openrecall.Result {
		t.Helper()
		var acc accepted
		if resp := e.post("/api/v1/alerts/falcosidekick", "", falcoShell(n, pods[n], "root", "Notice"), &acc); resp.StatusCode != http.StatusAccepted || acc.Accepted != 1 {
			t.Fatalf("firing %d: %d %+v", n, resp.StatusCode, acc)
		}
		return e.wait(acc.Analyses[0].AnalysisID, "").Result
	}
	for n := range 5 {
		r := fire(n)
		var ret usecase.Retained
		if resp := e.post("/api/v1/retain", "", `{"analysis_id":"`+r.AnalysisID+`","decision":"known_benign","note":"uptime check by ops","analyst":"bob"}`, &ret); resp.StatusCode != http.StatusCreated {
			t.Fatalf("retain %d: %d %+v", n, resp.StatusCode, ret)
		}
		if ret.Group == nil || ret.Incident.Entities["user"] != "root" {
			t.Fatalf("retain %d: group %+v, memory entities %v: want the group decided with the head's entity fields", n, ret.Group, ret.Incident.Entities)
		}
	}
	if sixth := fire(5); sixth.Proposal == nil || sixth.Proposal.Match["user"] != "root" {
		t.Fatalf("sixth firing: proposal %+v (%s)", sixth.Proposal, sixth.Guard.Reason)
	}
}

// TestRevokeNeedsReason: POST /api/v1/exceptions/{id}/revoke without a
// reason is 400 and revokes nothing.
func TestRevokeNeedsReason(t *testing.T) {
	e := newEnv(t, options{noServe: true})
	var ch usecase.ExceptionChange
	if resp := e.post("/api/v1/exceptions", "", `{"rule":"KubePodCrashLooping","service":"checkout","max_severity":"high",
		"decision":"known_benign","expires":"4h","analyst":"alice"}`, &ch); resp.StatusCode != http.StatusCreated {
		t.Fatalf("add: %d %+v", resp.StatusCode, ch)
	}
	for _, body := range []string{`{"analyst":"carol"}`, `{"analyst":"carol","reason":""}`, `{"analyst":"carol","reason":"  "}`} {
		var answer map[string]any
		resp := e.post("/api/v1/exceptions/"+ch.Exception.ID+"/revoke", "", body, &answer)
		if msg, _ := answer["error"].(string); resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(msg, "reason is required") {
			t.Errorf("revoke %s: %d %v, want 400, reason is required", body, resp.StatusCode, answer)
		}
	}
	// The use case refuses it too, for every caller (CLI, API, cockpit).
	if _, err := e.app.RevokeException(context.Background(), ch.Exception.ID, "carol", " "); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("RevokeException without a reason: %v, want ErrInvalid", err)
	}
	var list []usecase.ListedException
	e.do(http.MethodGet, "/api/v1/exceptions?state=active", "", nil, nil, &list)
	if len(list) != 1 {
		t.Errorf("active after refused revocations: %+v", list)
	}
}

// TestServeRecordsExpiriesPerBatch: an exception that expires while serve
// runs is recorded (actor system) when the next inbox batch is read, before
// that batch's entries (DESIGN §6b).
func TestServeRecordsExpiriesPerBatch(t *testing.T) {
	var offset atomic.Int64 // how far behind real time the clock stands
	offset.Store(int64(2 * time.Hour))
	clock := func() time.Time { return time.Now().UTC().Add(-time.Duration(offset.Load())) }
	e := newEnv(t, options{now: clock})
	var ch usecase.ExceptionChange
	if resp := e.post("/api/v1/exceptions", "", `{"rule":"KubePodCrashLooping","service":"checkout","max_severity":"high",
		"decision":"known_benign","expires":"1h","analyst":"alice"}`, &ch); resp.StatusCode != http.StatusCreated {
		t.Fatalf("add: %d %+v", resp.StatusCode, ch)
	}
	expiry := openrecall.StepExceptionExpire + "-" + ch.Exception.ID
	ctx := context.Background()
	if got, err := e.store.AuditByAnalysis(ctx, expiry); err != nil || len(got) != 0 {
		t.Fatalf("expiry recorded before it passed: %+v %v", got, err)
	}
	offset.Store(0) // two hours later: the exception expired an hour ago
	var acc accepted
	if resp := e.post("/api/v1/alerts/falcosidekick", "", falcoShell(1, "m7flp", "root", "Notice"), &acc); resp.StatusCode != http.StatusAccepted || acc.Accepted != 1 {
		t.Fatalf("firing: %d %+v", resp.StatusCode, acc)
	}
	id := acc.Analyses[0].AnalysisID
	e.wait(id, "")
	got, err := e.store.AuditByAnalysis(ctx, expiry)
	if err != nil || len(got) != 1 || !strings.Contains(got[0].Reason, "by system") {
		t.Fatalf("expiry entries after a batch: %+v %v", got, err)
	}
	steps, err := e.store.AuditByAnalysis(ctx, id)
	if err != nil || len(steps) == 0 || steps[0].Sequence < got[0].Sequence {
		t.Errorf("the batch's entries %+v do not follow the expiry (sequence %d): %v", steps, got[0].Sequence, err)
	}
}

// TestAddExceptionRefusals: POST /api/v1/exceptions refuses, with 400 and
// nothing stored, what `exception add` refuses (DESIGN §6b); the rules are
// the use case's, so the API cannot skip one.
func TestAddExceptionRefusals(t *testing.T) {
	e := newEnv(t, options{noServe: true})
	base := map[string]any{"rule": "KubePodCrashLooping", "service": "checkout", "max_severity": "high",
		"decision": "known_benign", "expires": "4h", "analyst": "alice"}
	tests := []struct {
		name   string
		change map[string]any
		want   string
	}{
		{"empty service", map[string]any{"service": ""}, "a service is required"},
		{"blank service", map[string]any{"service": " "}, "a service is required"},
		{"no rule", map[string]any{"rule": ""}, "a rule is required"},
		{"real decision", map[string]any{"decision": "real"}, "want false_positive, duplicate or known_benign"},
		{"no ceiling", map[string]any{"max_severity": ""}, "severity ceiling"},
		{"no expiry", map[string]any{"expires": ""}, "want a positive duration"},
		{"expiry over the cap", map[string]any{"expires": "2161h"}, "beyond the configured cap"},
		{"security detection without a match field", map[string]any{"dna": map[string]string{"attack_pattern": "security_detection"}},
			"at least one match field is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{}
			for k, v := range base {
				body[k] = v
			}
			for k, v := range tt.change {
				body[k] = v
			}
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			var answer map[string]any
			resp := e.post("/api/v1/exceptions", "", string(b), &answer)
			if msg, _ := answer["error"].(string); resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, tt.want) {
				t.Errorf("%s: %d %v, want 400 with %q", b, resp.StatusCode, answer, tt.want)
			}
		})
	}
	var list []usecase.ListedException
	e.do(http.MethodGet, "/api/v1/exceptions", "", nil, nil, &list)
	if len(list) != 0 {
		t.Errorf("refused exceptions were stored: %+v", list)
	}
}
