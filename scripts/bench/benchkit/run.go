package benchkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openrecall/openrecall/scripts/bench/queuegen"
)

// SeedDatabase writes queuegen's seed file (the analysts' decisions, from
// seed) into dir and retains it into the new database db through the
// binary, as a user would. It returns what `memory seed` printed.
func SeedDatabase(ctx context.Context, bin, dir, db string, seed int64) (string, error) {
	path := filepath.Join(dir, "seed.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	n, err := queuegen.WriteSeeds(f, seed)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write seed file: %w", err)
	}
	if err := RemoveDatabase(db); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, "--db", db, "memory", "seed", path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("memory seed: %w: %s", err, bytes.TrimSpace(out))
	}
	want := fmt.Sprintf("%d new", n)
	if !bytes.Contains(out, []byte(want)) {
		return "", fmt.Errorf("memory seed: want %q in %q", want, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// CopyDatabase copies a closed SQLite database (and its WAL, if one was
// left) so that every run starts from the same seeded memory; a stale
// -shm beside dst is removed.
func CopyDatabase(src, dst string) error {
	if err := RemoveDatabase(dst); err != nil {
		return err
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			return fmt.Errorf("copy database: %w", err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			return fmt.Errorf("copy database: %w", err)
		}
	}
	return nil
}

// RemoveDatabase removes a database file with its WAL and shared-memory
// files, if there are any.
func RemoveDatabase(path string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Run is one finished analyze run.
type Run struct {
	Records  int           // records analysed, from the summary on stderr
	Elapsed  time.Duration // wall time
	CPU      time.Duration // the child's user + system CPU time
	RSSBytes int64         // the child's peak resident set size; 0 when not measured
	Stderr   string        // everything the child printed on stderr
}

// CPUPerAlert returns the CPU time per record in microseconds.
func (r Run) CPUPerAlert() float64 {
	if r.Records == 0 {
		return 0
	}
	return float64(r.CPU.Nanoseconds()) / 1e3 / float64(r.Records)
}

var recordsLine = regexp.MustCompile(`(?m)^\s*records\s+(\d+):`)

// Analyze runs `bin --db db analyze --output jsonl ARGS... queue` once
// under timeout, with env added to this process's environment and its
// standard output copied to stdout (nil: the null device), and returns its
// wall time, CPU time and peak RSS from rusage and the record count of the
// summary it prints on stderr.
func Analyze(ctx context.Context, bin, db, queue string, args, env []string, stdout io.Writer, timeout time.Duration) (Run, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append([]string{"--db", db, "analyze", "--output", "jsonl"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(argv, queue)...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var errOut bytes.Buffer
	cmd.Stdout = stdout
	cmd.Stderr = &errOut
	start := time.Now()
	err := cmd.Run()
	r := Run{Elapsed: time.Since(start), Stderr: errOut.String()}
	if err != nil {
		return Run{}, fmt.Errorf("analyze %v: %w: %s", args, err, Tail(r.Stderr, 800))
	}
	m := recordsLine.FindStringSubmatch(r.Stderr)
	if m == nil {
		return Run{}, fmt.Errorf("analyze %v: no records line in the summary: %s", args, Tail(r.Stderr, 800))
	}
	r.Records, _ = strconv.Atoi(m[1])
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.RSSBytes = MaxRSSBytes(ru.Maxrss)
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
}

// MaxRSSBytes converts rusage's ru_maxrss, which Linux reports in KiB and
// macOS in bytes.
func MaxRSSBytes(maxrss int64) int64 {
	if runtime.GOOS == "darwin" {
		return maxrss
	}
	return maxrss * 1024
}

// Tail returns the last n bytes of s, trimmed, marked with an ellipsis when
// cut.
func Tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
