package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openrecall/openrecall/internal/testenv"
)

// realAlertmanager is a Prometheus Alertmanager started for a test, on
// loopback, without clustering, its storage in the test's directory.
type realAlertmanager struct {
	URL string
	// client asks it: a request that gets no answer fails rather than
	// holding the test (a port taken by another process between its
	// choice and Alertmanager's start would be such a peer).
	client *http.Client
}

// lockedBuffer is a process's output, written by exec's copier.
type lockedBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

// startAlertmanager starts Debian's prometheus-alertmanager with the
// configuration conf (YAML) as scripts/e2e/alertmanager does: a free
// loopback port, --cluster.listen-address= (no clustering), a temporary
// storage path; it waits for /-/ready and ends the process by its pid when
// t ends. It skips t (fails it in CI) when Alertmanager or amtool is not
// installed.
func startAlertmanager(t *testing.T, conf string) *realAlertmanager {
	t.Helper()
	testenv.Tools(t, ".ci/run installs prometheus-alertmanager", "prometheus-alertmanager", "amtool")
	dir := t.TempDir()
	path := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // free a moment ago: Alertmanager takes it
	out := &lockedBuffer{}
	cmd := exec.Command("prometheus-alertmanager", "--config.file="+path, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=debug")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second // Wait returns even if something kept its output open
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // its end is reported by done; the log holds why
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			out.mu.Lock()
			t.Logf("alertmanager log:\n%s", out.String())
			out.mu.Unlock()
		}
	})
	am := &realAlertmanager{URL: "http://" + addr, client: &http.Client{Timeout: 10 * time.Second}}
	ready := testenv.Poll(t, 100*time.Millisecond, func() bool {
		select {
		case <-done:
			return true
		default:
		}
		resp, err := am.client.Get(am.URL + "/-/ready")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	select {
	case <-done:
		t.Fatalf("alertmanager exited at start")
	default:
	}
	if !ready {
		t.Fatal("alertmanager not ready before the test's deadline")
	}
	return am
}

// gettableAlert is an alert as GET /api/v2/alerts and amtool show it.
type gettableAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	Fingerprint string            `json:"fingerprint"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
	GeneratorURL string `json:"generatorURL"`
}

// alerts returns the alerts Alertmanager lists (firing ones: a resolved
// alert is not listed) whose episode is key.
func (am *realAlertmanager) alerts(t *testing.T, key string) []gettableAlert {
	t.Helper()
	q := url.Values{"filter": {fmt.Sprintf("%s=%q", LabelEpisode, key)}}
	resp, err := am.client.Get(am.URL + "/api/v2/alerts?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out []gettableAlert
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// amtoolQuery returns what amtool alert query lists for the episode key.
func (am *realAlertmanager) amtoolQuery(t *testing.T, key string) []gettableAlert {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Remaining(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, "amtool", "--alertmanager.url="+am.URL, "alert", "query", "-o", "json", fmt.Sprintf("%s=%s", LabelEpisode, key))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("amtool alert query: %v\n%s", err, out)
	}
	var alerts []gettableAlert
	if err := json.Unmarshal(out, &alerts); err != nil {
		t.Fatalf("amtool alert query -o json: %v\n%s", err, out)
	}
	return alerts
}

type sinkAlert struct {
	Status      string            `json:"status"`
	Fingerprint string            `json:"fingerprint"`
	Labels      map[string]string `json:"labels"`
}

// sinkAlerts returns the alerts of the notifications Alertmanager
// delivered to its webhook receiver, a FakeAPI: per alert, its fingerprint
// and status.
func sinkAlerts(sink *FakeAPI) []sinkAlert {
	var seen []sinkAlert
	for _, req := range sink.Requests() {
		var msg struct {
			Alerts []sinkAlert `json:"alerts"`
		}
		if err := json.Unmarshal(req.Body, &msg); err == nil {
			seen = append(seen, msg.Alerts...)
		}
	}
	return seen
}

// TestAlertmanagerRealTriggerThenResolve posts an episode's trigger and
// resolve to a real Alertmanager (Debian's prometheus-alertmanager) and
// checks that they are one alert: the trigger is listed, active, with
// openrecall's labels and annotations (by the API and by amtool), and
// Alertmanager's own webhook receiver is notified of it firing; after the
// resolve it is no longer listed and the webhook receiver is notified of
// the same alert (the same fingerprint) resolved — no second alert ever.
func TestAlertmanagerRealTriggerThenResolve(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Alertmanager")
	}
	sink := NewFakeAPI(t, nil)
	am := startAlertmanager(t, fmt.Sprintf(`global:
  resolve_timeout: 5m
route:
  receiver: sink
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: sink
    webhook_configs:
      - url: %s/hook
        send_resolved: true
`, sink.URL))
	rcv, err := NewAlertmanager(AlertmanagerConfig{Name: "am", URLs: []string{am.URL}})
	if err != nil {
		t.Fatal(err)
	}
	trigger := pagedTrigger()
	trigger.Key = fmt.Sprintf("ep-real-%d", time.Now().UnixNano())
	trigger.Result.Alert.Timestamp = time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	trigger.At = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Remaining(t))
	defer cancel()
	d, err := rcv.Send(ctx, trigger)
	if err != nil {
		t.Fatalf("trigger: %v", err)
	}

	var listed []gettableAlert
	if !testenv.Poll(t, 100*time.Millisecond, func() bool { listed = am.alerts(t, trigger.Key); return len(listed) == 1 }) {
		t.Fatalf("the trigger is not listed: %+v", listed)
	}
	got := listed[0]
	for k, want := range map[string]string{"alertname": "LedgerSyncTimeout", "kubernetes_io_pod": "ledger-7f9", LabelEpisode: trigger.Key,
		LabelDecision: "real", LabelRoute: "strong", LabelSeverity: "high"} {
		if got.Labels[k] != want {
			t.Errorf("label %s = %q, want %q (labels %v)", k, got.Labels[k], want, got.Labels)
		}
	}
	for k, want := range map[string]string{AnnotationReason: "high severity in prod and memory split: treat it as real.",
		AnnotationReview: trigger.ReviewURL, AnnotationSummary: "ledger-sync-worker timeout calling ledger API", "summary": "ledger-sync timeouts"} {
		if got.Annotations[k] != want {
			t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], want)
		}
	}
	if got.Status.State != "active" || !got.StartsAt.Equal(trigger.Result.Alert.Timestamp) || got.GeneratorURL != trigger.ReviewURL {
		t.Errorf("alert %+v, want active since the alert's time, linking the review page", got)
	}
	if q := am.amtoolQuery(t, trigger.Key); len(q) != 1 || q[0].Fingerprint != got.Fingerprint {
		t.Errorf("amtool alert query lists %+v, want the one alert %s", q, got.Fingerprint)
	}
	if !testenv.Poll(t, 100*time.Millisecond, func() bool { return sinkSaw(sink, got.Fingerprint, "firing") }) {
		t.Fatalf("Alertmanager never notified its receiver of the alert firing: %+v", sinkAlerts(sink))
	}

	resolve := recoveryOf(trigger, d.State)
	resolve.Result.Alert.Labels = map[string]string{"alertname": "LedgerSyncTimeout"} // the recovery says less
	resolve.At = time.Now()
	if _, err := rcv.Send(ctx, resolve); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if !testenv.Poll(t, 100*time.Millisecond, func() bool { return len(am.alerts(t, trigger.Key)) == 0 }) {
		t.Fatalf("the alert is still listed after the resolve: %+v", am.alerts(t, trigger.Key))
	}
	if q := am.amtoolQuery(t, trigger.Key); len(q) != 0 {
		t.Errorf("amtool alert query lists %+v after the resolve, want none", q)
	}
	if !testenv.Poll(t, 100*time.Millisecond, func() bool { return sinkSaw(sink, got.Fingerprint, "resolved") }) {
		t.Fatalf("Alertmanager never notified its receiver of the alert resolved: %+v", sinkAlerts(sink))
	}
	for _, a := range sinkAlerts(sink) {
		if a.Labels[LabelEpisode] == trigger.Key && a.Fingerprint != got.Fingerprint {
			t.Errorf("a second alert of the episode reached the receiver: %+v", a)
		}
	}
}

// sinkSaw reports whether the sink was notified of the alert fingerprint
// in status.
func sinkSaw(sink *FakeAPI, fingerprint, status string) bool {
	for _, a := range sinkAlerts(sink) {
		if a.Fingerprint == fingerprint && a.Status == status {
			return true
		}
	}
	return false
}
