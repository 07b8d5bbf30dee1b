package e2eproc

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStartOutputStop starts a shell that prints a line and sleeps, reads
// the line as it is printed, and stops it well before the sleep ends (the
// sleep the shell leaves behind does not hold the stop up).
func TestStartOutputStop(t *testing.T) {
	var g Group
	seen := make(chan string, 1)
	p, err := g.Start("sh", []string{"E2EPROC_WORD=hi"}, func(line string) {
		select {
		case seen <- line:
		default:
		}
	}, "sh", "-c", `echo "$E2EPROC_WORD"; sleep 30`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	select {
	case line := <-seen:
		if line != "hi" {
			t.Errorf("watch got %q, want %q", line, "hi")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no line within 10s")
	}
	if got := p.Output(); got != "hi\n" {
		t.Errorf("Output() = %q, want %q", got, "hi\n")
	}
	if p.Exited() {
		t.Fatal("exited while sleeping")
	}
	begin := time.Now()
	errs := g.StopAll()
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("StopAll took %s", took)
	}
	var exit *exec.ExitError
	if len(errs) != 1 || !errors.As(errs[0], &exit) || !strings.HasPrefix(errs[0].Error(), "stop sh: ") {
		t.Errorf("StopAll() = %v, want one stop error with sh's exit by SIGTERM", errs)
	}
	if !p.Exited() {
		t.Error("not exited after StopAll")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop of an exited process: %v", err)
	}
	var dump bytes.Buffer
	g.Dump(&dump, 1)
	if want := "--- sh log (tail)\n…\n\n"; dump.String() != want {
		t.Errorf("Dump(1) = %q, want %q", dump.String(), want)
	}
}

// TestKill kills a process with SIGKILL and waits for it.
func TestKill(t *testing.T) {
	var g Group
	p, err := g.Start("sleeper", nil, nil, "sh", "-c", "echo hi; exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	if p.Exited() {
		t.Fatal("exited at once")
	}
	p.Kill()
	if !p.Exited() {
		t.Fatal("not exited after Kill")
	}
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Err() = %v, want the exit by SIGKILL", err)
	}
	if errs := g.StopAll(); len(errs) != 0 {
		t.Errorf("StopAll after Kill: %v", errs)
	}
}

// TestStartMissingProgram names the process in the error.
func TestStartMissingProgram(t *testing.T) {
	var g Group
	if _, err := g.Start("nothing", nil, nil, "/nonexistent/e2eproc"); err == nil || !strings.HasPrefix(err.Error(), "start nothing: ") {
		t.Errorf("Start of a missing program: %v", err)
	}
}

func TestFreePortAndSecret(t *testing.T) {
	port, err := FreePort()
	if err != nil || port <= 0 {
		t.Fatalf("FreePort() = %d, %v", port, err)
	}
	if a, b := Secret(), Secret(); len(a) != 32 || a == b {
		t.Errorf("Secret() = %q then %q, want two different 32-hex-digit secrets", a, b)
	}
}
