package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/notify"
)

const routingKey = "R0UTINGKEY0123456789abcdefABCDEF"

// TestRun runs the command as the e2e script will: it waits for the
// addresses, sends a page through the real PagerDuty receiver, makes the
// webhook fail through the control API, reads the state, and ends it; the
// state file then holds what was recorded, and no secret.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	addrFile, stateFile := filepath.Join(dir, "addrs.json"), filepath.Join(dir, "state.json")
	t.Setenv("FAKE_HOOK_SECRET", "whsec-from-the-environment")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-addr-file", addrFile, "-state", stateFile, "-webhook-secret", "env:FAKE_HOOK_SECRET",
			"-routing-key", routingKey}, w, &stderr)
		_ = w.Close()
		done <- code
	}()
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		t.Fatalf("no addresses on stdout: %v (stderr: %s)", err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	var printed, written fakereceivers.Addrs
	if err := json.Unmarshal(line, &printed); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(addrFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	if printed.Control == "" || printed.PagerDuty != written.PagerDuty || written.SMTPPort == 0 {
		t.Fatalf("addresses printed %+v, written %+v", printed, written)
	}

	key, _ := notify.ParseSecret(routingKey)
	pd, err := notify.NewPagerDuty(notify.PagerDutyConfig{Name: "pager", RoutingKey: key, URL: written.PagerDuty})
	if err != nil {
		t.Fatal(err)
	}
	n := notify.Notification{Kind: notify.KindTrigger, Key: "openrecall-a1", ID: "n-1",
		Result: openrecall.Result{AnalysisID: "a1", Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionEscalated,
			Alert: openrecall.Alert{ID: "x", Title: "disk full on db-1", Severity: openrecall.SeverityCritical}}}
	if _, err := pd.Send(ctx, n); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(written.Control+"/_fail?receiver=webhook&status=503&count=2&retry_after=1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /_fail: %s", resp.Status)
	}
	resp, err = http.Get(written.Control + "/_state")
	if err != nil {
		t.Fatal(err)
	}
	var live fakereceivers.State
	err = json.NewDecoder(resp.Body).Decode(&live)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if in, ok := live.PagerDuty.Incident("openrecall-a1"); !ok || in.Status != fakereceivers.IncidentTriggered || in.Summary != "disk full on db-1" {
		t.Errorf("GET /_state: incident %+v (%v)", in, ok)
	}
	if _, err := os.Stat(stateFile); err != nil {
		t.Errorf("GET /_state wrote no state file: %v", err)
	}

	cancel() // as SIGTERM does
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err = os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	var st fakereceivers.State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.PagerDuty.Incidents) != 1 || st.Failing[fakereceivers.Webhook].Left != 2 || len(st.Requests) != 1 {
		t.Errorf("state file: %d incidents, failing %v, %d requests", len(st.PagerDuty.Incidents), st.Failing, len(st.Requests))
	}
	if strings.Contains(string(b), routingKey) {
		t.Error("the state file shows the routing key")
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"-nope"}},
		{"argument", []string{"extra"}},
		{"unset secret", []string{"-webhook-secret", "env:FAKERECEIVERS_TEST_UNSET"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(context.Background(), tt.args, io.Discard, &stderr); code != 2 {
				t.Errorf("exit %d, want 2 (stderr: %s)", code, stderr.String())
			}
		})
	}
}
