package chartcheck

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeAsThePodWould runs the built openrecall (OPENRECALL_BIN; make
// test-chart builds it) with the default values' pod: its arguments, its
// environment and nothing else (no HOME), the ConfigMap's config.yaml and
// the volumes as directories of a temporary one, listening on loopback
// instead of every address. serve must start, answer the probes' paths
// 200, take an Alertmanager notification with the generated ingest token,
// refuse one without, and exit 0 on SIGTERM.
func TestServeAsThePodWould(t *testing.T) {
	bin := os.Getenv("OPENRECALL_BIN")
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENRECALL_BIN is not set: run make test-chart")
		}
		t.Skip("SKIPPED: OPENRECALL_BIN is not set (make test-chart builds and sets it)")
	}
	r := mustRender(t, "")
	c := r.container(t)
	env := r.env(t, nil)

	// Each mount becomes a directory of root; paths under a mount follow.
	root := t.TempDir()
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = filepath.Join(root, m.Name)
		if err := os.MkdirAll(mounts[m.MountPath], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	local := func(p string) string {
		for mp, dir := range mounts {
			if rest, ok := strings.CutPrefix(p, mp+"/"); ok {
				return filepath.Join(dir, rest)
			}
		}
		return p
	}
	cfgPath := local(c.Args[slices.Index(c.Args, "--config")+1])
	if err := os.WriteFile(cfgPath, []byte(r.configMaps[0].Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopback(t)
	args := slices.Clone(c.Args)
	for i := range args {
		switch {
		case i > 0 && args[i-1] == "--listen":
			args[i] = addr
		case strings.HasPrefix(args[i], "/"):
			args[i] = local(args[i])
		}
	}
	environ := []string{"TMPDIR=" + mounts["/tmp"]}
	for k, v := range env {
		if strings.HasPrefix(v, "/") {
			v = local(v)
		}
		environ = append(environ, k+"="+v)
	}

	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stderr, cmd.Stdout = environ, &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed once serve exited, with its error in waitErr.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // an error: it exited already
		<-exited
		if t.Failed() {
			t.Logf("serve's output:\n%s", stderr.String())
		}
	})

	base := "http://" + addr
	waitFor(t, base+"/healthz", exited)
	for _, path := range []string{"/readyz", "/metrics"} {
		if code, body := get(t, base+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	payload, err := os.ReadFile("../../../intake/testdata/alertmanager_payload.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {env["OPENRECALL_INGEST_TOKEN"], http.StatusAccepted}} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v1/alerts/alertmanager", bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("POST the Alertmanager notification with token %t: %d %s, want %d", tt.token != "", resp.StatusCode, body, tt.want)
		}
	}
	if _, err := os.Stat(local(env["OPENRECALL_DB"])); err != nil {
		t.Errorf("OPENRECALL_DB is not on the data volume: %v", err)
	}

	// The kubelet's SIGTERM: serve finishes and exits 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-exited
	if waitErr != nil {
		t.Errorf("serve after SIGTERM: %v", waitErr)
	}
}

// freeLoopback returns a loopback address with a port free a moment ago.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// waitFor polls url until it answers 200, failing at once if serve exits.
// The bound only stops a hung start from hanging the run.
func waitFor(t *testing.T, url string, exited <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if code, _ := get(t, url); code == http.StatusOK {
			return
		}
		select {
		case <-exited:
			t.Fatalf("serve exited before answering %s (its output is below)", url)
		case <-ctx.Done():
			t.Fatalf("serve did not answer %s", url)
		case <-tick.C:
		}
	}
}

// get returns url's status code and body; 0 when nothing answers.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
