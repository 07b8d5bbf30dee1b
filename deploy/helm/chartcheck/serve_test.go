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

	"github.com/openrecall/openrecall/internal/pgtest"
)

// servedBin is the built openrecall (OPENRECALL_BIN; make test-chart
// builds it), or a skip (a failure under CI=true).
func servedBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OPENRECALL_BIN")
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENRECALL_BIN is not set: run make test-chart")
		}
		t.Skip("SKIPPED: OPENRECALL_BIN is not set (make test-chart builds and sets it)")
	}
	return bin
}

// pod is one serve process started as a rendered pod would run.
type pod struct {
	base string // http://127.0.0.1:PORT
	env  map[string]string
	db   string // OPENRECALL_DB as the process got it
}

// startPod runs bin with r's container: its arguments, its environment and
// nothing else (no HOME, as in the image), the ConfigMap's config.yaml and
// the volumes as directories of a temporary one, listening on loopback
// instead of every address. It waits until /healthz answers; at the end of
// the test the process gets SIGTERM and must exit 0.
func startPod(t *testing.T, bin string, r rendered, external map[string]map[string]string) pod {
	t.Helper()
	c := r.container(t)
	env := r.env(t, external)

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
		env[k] = v
		environ = append(environ, k+"="+v)
	}

	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stderr, cmd.Stdout = environ, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed once serve exited, with its error in waitErr.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// The kubelet's SIGTERM: serve finishes and exits 0.
		if err := cmd.Process.Signal(syscall.SIGTERM); err == nil {
			<-exited
			if waitErr != nil {
				t.Errorf("serve on %s after SIGTERM: %v", addr, waitErr)
			}
		}
		_ = cmd.Process.Kill() // an error: it exited already
		<-exited
		if t.Failed() {
			t.Logf("serve on %s:\n%s", addr, out.String())
		}
	})
	p := pod{base: "http://" + addr, env: env, db: env["OPENRECALL_DB"]}
	waitFor(t, p.base+"/healthz", exited)
	return p
}

// checkServes checks what the probes and a receiver see: /readyz and
// /metrics answer 200, an Alertmanager notification is refused without a
// token and accepted with the ingest token.
func (p pod) checkServes(t *testing.T) {
	t.Helper()
	for _, path := range []string{"/readyz", "/metrics"} {
		if code, body := get(t, p.base+path); code != http.StatusOK {
			t.Errorf("GET %s%s: %d %s", p.base, path, code, body)
		}
	}
	payload, err := os.ReadFile("../../../intake/testdata/alertmanager_payload.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {p.env["OPENRECALL_INGEST_TOKEN"], http.StatusAccepted}} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.base+"/api/v1/alerts/alertmanager", bytes.NewReader(payload))
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
			t.Errorf("POST %s the Alertmanager notification with token %t: %d %s, want %d", p.base, tt.token != "", resp.StatusCode, body, tt.want)
		}
	}
}

// TestServeAsThePodWould runs the built openrecall as the default values'
// pod (SQLite on the volume, the generated token and audit key): it must
// start, answer the probes' paths, take an Alertmanager notification with
// the ingest token and refuse one without, keep the database on the data
// volume, and exit 0 on SIGTERM.
func TestServeAsThePodWould(t *testing.T) {
	bin := servedBin(t)
	r := mustRender(t, "")
	p := startPod(t, bin, r, nil)
	p.checkServes(t)
	if _, err := os.Stat(p.db); err != nil || !strings.Contains(p.db, "/data/") {
		t.Errorf("OPENRECALL_DB %s is not on the data volume: %v", p.db, err)
	}
}

// TestServeReplicasOnPostgreSQL runs two processes as two replicas of the
// PostgreSQL values would, on one fresh schema (internal/pgtest: the
// server of OPENRECALL_PG_DSN, else a throwaway cluster): both start with
// the same Secrets (each its own default server.instance), both are ready
// and take notifications.
func TestServeReplicasOnPostgreSQL(t *testing.T) {
	bin := servedBin(t)
	dsn := pgtest.DSN(t)
	r := mustRender(t, "database: postgresql\nreplicaCount: 2\npostgresql: {existingSecret: db}\n")
	external := map[string]map[string]string{"db": {"dsn": dsn}}
	a := startPod(t, bin, r, external)
	b := startPod(t, bin, r, external)
	a.checkServes(t)
	b.checkServes(t)
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
