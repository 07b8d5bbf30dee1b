// Package systemd_test checks deploy/systemd/openrecall.service: the
// directives issue 39 asks of it, systemd-analyze verify, and the exposure
// score of systemd-analyze security --offline=yes under a ceiling.
package systemd_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/internal/testenv"
)

const (
	unitFile = "openrecall.service"
	// installedBinary is where the unit runs openrecall from.
	installedBinary = "/usr/local/bin/openrecall"
	// maxExposure is the ceiling on systemd-analyze security's overall
	// exposure (0 safest, 10 least): 1.2 measured with systemd 252. What
	// is left is the host's root directory and network, which a server
	// receiving alerts over the network needs.
	maxExposure = 1.5
	// offlineSince is the first systemd whose security verb takes
	// --offline.
	offlineSince = 252
	install      = ".ci/run installs systemd (systemd-analyze)"
)

// unit is the unit file's [Service]-style directives: every value of each
// key, in order (an empty assignment included).
type unit map[string][]string

func readUnit(t *testing.T, path string) unit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: not a directive: %q", path, line)
		}
		u[k] = append(u[k], v)
	}
	return u
}

// TestUnitDirectives checks the sandbox and the paths the unit must keep:
// the state directory holds the database and the audit key, and serve is
// given the time its SIGTERM drain takes.
func TestUnitDirectives(t *testing.T) {
	u := readUnit(t, unitFile)
	for _, tt := range []struct{ key, want string }{
		{"ExecStart", installedBinary + " --config /etc/openrecall/config.yaml serve"},
		{"After", "network-online.target"},
		{"Wants", "network-online.target"},
		{"DynamicUser", "yes"},
		{"StateDirectory", "openrecall"},
		{"ConfigurationDirectory", "openrecall"},
		{"EnvironmentFile", "-/etc/openrecall/env"},
		{"Environment", "OPENRECALL_DB=/var/lib/openrecall/memory.db"},
		{"Environment", "OPENRECALL_AUDIT_KEY_FILE=/var/lib/openrecall/audit.key"},
		{"UMask", "0077"},
		{"Restart", "on-failure"},
		{"KillSignal", "SIGTERM"},
		{"CapabilityBoundingSet", ""},
		{"AmbientCapabilities", ""},
		{"NoNewPrivileges", "yes"},
		{"ProtectSystem", "strict"},
		{"ProtectHome", "yes"},
		{"PrivateTmp", "yes"},
		{"PrivateDevices", "yes"},
		{"ProtectKernelTunables", "yes"},
		{"ProtectKernelModules", "yes"},
		{"ProtectKernelLogs", "yes"},
		{"ProtectControlGroups", "yes"},
		{"ProtectClock", "yes"},
		{"ProtectHostname", "yes"},
		{"RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"},
		{"RestrictNamespaces", "yes"},
		{"RestrictRealtime", "yes"},
		{"RestrictSUIDSGID", "yes"},
		{"LockPersonality", "yes"},
		{"MemoryDenyWriteExecute", "yes"},
		{"SystemCallFilter", "@system-service"},
		{"SystemCallArchitectures", "native"},
	} {
		got, ok := u[tt.key]
		if !ok || !slices.Contains(got, tt.want) {
			t.Errorf("%s=%q: not in the unit (it has %q)", tt.key, tt.want, got)
		}
	}
	// serve drains for server.shutdown_timeout (20s by default), then
	// waits for Slack message updates (10s each, in parallel): systemd
	// must not SIGKILL it before.
	stop := u["TimeoutStopSec"]
	if len(stop) != 1 {
		t.Fatalf("TimeoutStopSec: want one, got %q", stop)
	}
	secs, err := strconv.Atoi(strings.TrimSuffix(stop[0], "s"))
	if err != nil || secs < 20+10 {
		t.Errorf("TimeoutStopSec=%s: want at least 30s (shutdown_timeout 20s + a Slack update 10s)", stop[0])
	}
}

// TestSystemdAnalyze runs systemd-analyze verify on the unit (its ExecStart
// pointed at a freshly built openrecall, since verify checks the binary
// exists) and security --offline=yes, whose exposure must stay at or below
// maxExposure.
func TestSystemdAnalyze(t *testing.T) {
	testenv.Tools(t, install, "systemd-analyze")
	version := systemdVersion(t)
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("ExecStart="+installedBinary+" ")) {
		t.Fatalf("%s: ExecStart does not run %s", unitFile, installedBinary)
	}
	bin := testenv.Build(t, filepath.Join("..", ".."))
	dir := t.TempDir()
	path := filepath.Join(dir, unitFile)
	data = bytes.ReplaceAll(data, []byte("ExecStart="+installedBinary+" "), []byte("ExecStart="+bin+" "))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// verify also loads the units this one names; a warning about ours
	// fails, others (the host's) are logged.
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(line, unitFile) {
			t.Errorf("systemd-analyze verify: %s", line)
		} else if line != "" {
			t.Logf("systemd-analyze verify (not about %s): %s", unitFile, line)
		}
	}

	if version < offlineSince {
		msg := "systemd-analyze " + strconv.Itoa(version) + " has no security --offline (systemd " + strconv.Itoa(offlineSince) + " or later)"
		if testenv.CI() {
			t.Fatalf("%s (CI=true: %s)", msg, install)
		}
		t.Skipf("skipping the exposure score: %s", msg)
	}
	// --threshold=100: the exit status stays 0 at any score; the ceiling
	// is checked here, with the score reported.
	out, err = exec.Command("systemd-analyze", "security", "--offline=yes", "--threshold=100", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security --offline=yes: %v\n%s", err, out)
	}
	score := exposure(t, out)
	t.Logf("systemd-analyze security: exposure %.1f (ceiling %.1f, systemd %d)", score, maxExposure, version)
	if score > maxExposure {
		t.Errorf("exposure %.1f above %.1f: a directive was weakened or removed\n%s", score, maxExposure, out)
	}
}

var overall = regexp.MustCompile(`Overall exposure level for \S+: ([0-9]+(?:\.[0-9]+)?)`)

// exposure reads the overall exposure level from security's output.
func exposure(t *testing.T, out []byte) float64 {
	t.Helper()
	m := overall.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no overall exposure level in:\n%s", out)
	}
	f, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// systemdVersion is systemd-analyze's major version ("systemd 252 (…)").
func systemdVersion(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("systemd-analyze", "--version").Output()
	if err != nil {
		t.Fatalf("systemd-analyze --version: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "systemd" {
		t.Fatalf("systemd-analyze --version: unexpected %q", out)
	}
	v, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("systemd-analyze --version: %q: %v", f[1], err)
	}
	return v
}

func TestExposure(t *testing.T) {
	for _, tt := range []struct {
		out  string
		want float64
	}{
		{"✗ PrivateNetwork= …   0.5\n\n→ Overall exposure level for openrecall.service: 1.2 OK 🙂\n", 1.2},
		{"→ Overall exposure level for x.service: 9.6 UNSAFE 😨", 9.6},
		{"→ Overall exposure level for x.service: 10 UNSAFE", 10},
	} {
		if got := exposure(t, []byte(tt.out)); got != tt.want {
			t.Errorf("exposure(%q) = %v, want %v", tt.out, got, tt.want)
		}
	}
}
